"""The stack high-water: one stack size per board (board.json's build.stack_size, which the
builder passes to the linker as STACK_SIZE), the record's stack field (tag 9) and what
`host.record` prints of it. The measurements themselves are asserted on QEMU where the images
are built already (test_boards_models.py, test_runtime_mve_qemu.py: support.stack_margin)."""

from __future__ import annotations

import pytest
from support.stack_margin import board_stack_size

from host.device import wire
from host.device.record import Recording, format_table, to_json
from host.paths import REPO

BOARDS = sorted(p.parent.name for p in (REPO / "boards").glob("*/link.ld"))


@pytest.mark.parametrize("board", BOARDS)
def test_the_stack_size_is_written_once(board: str) -> None:
    assert board_stack_size(board) >= 4096
    assert "STACK_SIZE" not in (REPO / "boards" / board / "link.ld").read_text()


def _report(used: int, size: int, measured: int) -> wire.WireReport:
    r = wire.WireReport(status=0, arena_size=64, head=0, tail=0, total=0, temp_peak=0)
    r.stack_used, r.stack_size, r.stack_measured = used, size, measured
    return wire.decode_payload(wire.encode_payload(r))


def test_stack_field_is_printed_and_in_json() -> None:
    r = _report(6968, 8192, 16384)
    assert (r.stack_used, r.stack_size, r.stack_measured) == (6968, 8192, 16384)
    rec = Recording("test", report=r)
    assert "stack used 6968 of 8192 bytes\n" in format_table(rec, None) + "\n"
    assert to_json(rec, None, None)["report"]["stack_used"] == 6968


def test_overflow_and_saturation_are_said() -> None:
    text = format_table(Recording("test", report=_report(16384, 8192, 16384)), None)
    assert "stack used at least 16384 of 8192 bytes  OVERFLOW" in text


def test_record_without_the_stack_field_still_reads() -> None:
    """Version 1 records from before the field: decoded, nothing printed about the stack."""
    r = wire.decode_payload(wire.encode_payload(wire.WireReport(status=0, arena_size=64)))
    assert r.stack_used is None
    assert "stack used" not in format_table(Recording("old", report=r), None)
