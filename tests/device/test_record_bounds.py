"""The recorder's line reader on hostile streams: linear in its input, bounded per line, and
numbers out of range a clean bad line (issue 18, findings 8 and 9)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_record import board_output, report, run_cli, run_json

from host.device import record, wire
from host.device.tflm_text import MAX_NOTES


def _byte_by_byte(*parts: bytes) -> record.Reader:
    """A reader handing out one byte per call, as a slow serial port or socket does."""

    def chunks() -> Iterator[bytes]:
        for part in parts:
            for i in range(len(part)):
                yield part[i : i + 1]

    it = chunks()
    return lambda: next(it, None)


def test_unfinished_line_byte_by_byte_then_a_report() -> None:
    """Finding 9: each byte re-scanned the unfinished line (256 KiB of noise: 13.6 s, so a
    report after a few hundred KiB came after the time-out). Linear now: found in time."""
    r = report()
    noise = b"x" * (512 << 10)
    rec = record.record_stream(_byte_by_byte(noise, b"\n", board_output(r)), "socket", 20.0)
    assert rec.report == r


def test_overlong_line_is_dropped_and_the_next_report_read() -> None:
    """Finding 9: a line is at most wire.MAX_LINE bytes; a longer one is dropped as a bad line
    (memory stays bounded) and said so, and the report after it is still read."""
    r = report()
    noise = b"\xff" * (8 << 20)  # no line end at all
    step = 64 << 10
    chunks = iter([*(noise[i : i + step] for i in range(0, len(noise), step)), b"\r\n"])
    chunks = iter([*chunks, board_output(r)])
    dec_sizes: list[int] = []
    real_feed = wire.FrameDecoder.feed

    def feed(self: wire.FrameDecoder, data: bytes):
        events = real_feed(self, data)
        dec_sizes.append(self.pending_bytes)
        return events

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wire.FrameDecoder, "feed", feed)
        rec = record.record_stream(lambda: next(chunks, None), "socket", 20.0)
    assert rec.report == r
    assert max(dec_sizes) <= wire.MAX_LINE
    assert any("1 line over" in w for w in rec.warnings), rec.warnings


def test_overlong_line_inside_a_record_rejects_it() -> None:
    r = report()
    lines = wire.encode_record(r).encode().splitlines(keepends=True)
    broken = lines[1].rstrip(b"\r\n") + b"0" * (2 * wire.MAX_LINE) + b"\r\n"
    events = wire.decode_stream([lines[0], broken, *lines[2:], wire.encode_record(r).encode()])
    assert isinstance(events[0], wire.Rejected) and "line over" in events[0].reason
    assert events[-1] == r


@pytest.mark.parametrize("digits", [5000, 20])
def test_huge_number_in_a_text_line_is_a_bad_line(capsys, tmp_path: Path, digits: int) -> None:
    """Finding 8: a 5000-digit number in a RecordingMicroAllocator line was a traceback
    (Python's int limit), even with a valid record after it. Now its line is over MAX_LINE
    (dropped); a number too long for 64 bits in a short line makes it unreadable."""
    r = report()
    bad = f"[RecordingMicroAllocator] Arena allocation head {'9' * digits} bytes\r\n"
    log = tmp_path / "run.log"
    log.write_bytes(bad.encode() + board_output(r))
    code, doc, err = run_json(capsys, "--log", str(log))
    assert code == 0, err
    assert doc["report"] == r.to_dict()
    why = "unreadable report line" if digits < wire.MAX_LINE else "1 line over"
    assert any(why in w for w in doc["warnings"]), doc["warnings"]


def test_save_writes_log_and_json_together_or_neither(capsys, tmp_path: Path) -> None:
    """--save writes two files: when the second cannot be written, the first is not either
    (an old log stays as it was)."""
    log = tmp_path / "in.log"
    log.write_bytes(board_output(report()))
    save = tmp_path / "run.log"
    save.write_bytes(b"old log")
    (tmp_path / "run.log.json").mkdir()  # the JSON cannot be written
    code, _, err = run_cli(capsys, "--log", str(log), "--save", str(save))
    assert code == 2 and "run.log.json" in err, err
    assert save.read_bytes() == b"old log"


def test_a_flood_of_bad_records_and_lines_is_counted_not_kept() -> None:
    """Memory stays bounded on a port that sends broken records and bad report lines for as
    long as the recorder listens: the first few are listed, the rest counted."""
    r = report()
    flood = (b"@MA1 E 00000000\r\n[RecordingMicroAllocator] garbage\r\n") * 10_000
    chunks = iter([flood, board_output(r)])
    rec = record.record_stream(lambda: next(chunks, None), "socket", 20.0)
    assert rec.report == r
    assert len(rec.rejected) == MAX_NOTES and rec.more_rejected == 10_000 - MAX_NOTES
    assert f"{10_000 - MAX_NOTES} more damaged records rejected (not listed)" in rec.warnings
    assert f"report text: {10_000 - MAX_NOTES} more bad lines" in rec.warnings
