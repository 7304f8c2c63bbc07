"""Framing decoder (host/device/wire.py) under damage.

Whatever happens to the bytes, a record is either decoded exactly as sent or rejected with a
reason; never accepted with different contents."""

from __future__ import annotations

import random

import pytest

from host.device import wire
from host.planning.tflm.categories import Category


def sample(seed: int, n_tensors: int = 40) -> wire.WireReport:
    rng = random.Random(seed)
    return wire.WireReport(
        status=0,
        arena_size=1 << 16,
        head=rng.randrange(1 << 20),
        tail=rng.randrange(1 << 16),
        total=rng.randrange(1 << 21),
        temp_peak=rng.randrange(1 << 12),
        cycles=rng.randrange(1 << 40),
        clock_hz=25_000_000,
        output_crc=rng.randrange(1 << 32),
        output_bytes=rng.randrange(4096),
        info=f"sample {seed}",
        categories=[Category("TfLiteEvalTensor data", 240, 240, 10, "allocations")],
        tensors=[
            wire.TensorPlacement(0, i, 16 * rng.randrange(4096), rng.randrange(9999), "head")
            for i in range(n_tensors)
        ],
    )


def accepted(events: list) -> list[wire.WireReport]:
    return [e for e in events if isinstance(e, wire.WireReport)]


def rejected(events: list) -> list[str]:
    return [e.reason for e in events if isinstance(e, wire.Rejected)]


def test_payload_round_trip_and_framing() -> None:
    r = sample(1)
    lines = wire.frame_lines(wire.encode_payload(r))
    assert lines[0].startswith("@MA1 B ") and lines[-1].startswith("@MA1 E ")
    assert all(len(line) <= 80 for line in lines)  # fits a plain terminal
    assert all(line.isascii() and line.isprintable() for line in lines)
    assert wire.decode_stream([wire.encode_record(r).encode()]) == [r]


def test_other_output_around_and_between_lines_is_ignored() -> None:
    r = sample(2)
    rng = random.Random(2)
    out = [b"\x00\xff boot banner v1.2\r\n", b"garbage without newline... "]
    for line in wire.encode_record(r).splitlines(keepends=True):
        out.append(line.encode())
        if rng.random() < 0.5:
            out.append(b"[log] unrelated console line \xfe\r\n")
    data = b"".join(out)
    # The second chunking splits the stream at every byte: the decoder must not care.
    for chunks in ([data], [data[i : i + 1] for i in range(len(data))]):
        dec = wire.FrameDecoder()
        events = [e for c in chunks for e in dec.feed(c)] + dec.finish()
        assert events == [r]


def test_console_prefix_before_marker_is_tolerated() -> None:
    r = sample(3)
    text = "".join(
        f"[12:00:0{i % 10}] {line}\n"
        for i, line in enumerate(wire.frame_lines(wire.encode_payload(r)))
    )
    assert wire.decode_stream([text.encode()]) == [r]


@pytest.mark.parametrize("damage", ["flip", "drop", "insert", "drop_line", "swap_lines"])
def test_damage_is_never_accepted(damage: str) -> None:
    rng = random.Random(damage)
    r = sample(4, n_tensors=20)
    clean = wire.encode_record(r).encode()
    start = len(b"boot\r\n")
    n_rejected = 0
    for _ in range(300):
        data = bytearray(b"boot\r\n" + clean)
        lines = data[start:].split(b"\n")
        if damage == "flip":
            i = rng.randrange(start, len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif damage == "drop":
            del data[rng.randrange(start, len(data))]
        elif damage == "insert":
            data.insert(rng.randrange(start, len(data)), rng.randrange(256))
        elif damage == "drop_line":
            del lines[rng.randrange(len(lines) - 1)]
            data = bytearray(b"boot\r\n" + b"\n".join(lines))
        else:
            i = rng.randrange(1, len(lines) - 3)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
            data = bytearray(b"boot\r\n" + b"\n".join(lines))
        events = wire.decode_stream([bytes(data)])
        assert all(e == r for e in accepted(events)), "a damaged record was accepted"
        if not accepted(events):
            assert rejected(events), "damage went unreported"
            n_rejected += 1
    # Damage that only touches a line end or case of a hex digit is harmless; the rest is caught.
    assert n_rejected > 200


def test_truncated_record_is_reported() -> None:
    lines = wire.encode_record(sample(5)).splitlines(keepends=True)
    at_line_end = "".join(lines[: len(lines) // 2])
    (why,) = rejected(wire.decode_stream([at_line_end.encode()]))
    assert why.startswith("truncated")
    text = "".join(lines)
    for cut in range(len(lines[0]), len(text) - 2, 7):  # cut anywhere, even inside a line
        events = wire.decode_stream([text[:cut].encode()])
        assert not accepted(events) and len(rejected(events)) == 1


@pytest.mark.parametrize("mid_line", [False, True])
def test_reset_mid_record_restarts_on_new_start_marker(mid_line: bool) -> None:
    first, second = sample(6), sample(7)
    lines = wire.encode_record(first).splitlines(keepends=True)
    part = "".join(lines[: len(lines) // 2])
    if mid_line:
        part += lines[len(lines) // 2][:20]  # the reset cut a line short
    data = part + "boot banner after reset\r\n" + wire.encode_record(second)
    events = wire.decode_stream([data.encode()])
    assert accepted(events) == [second]
    (why,) = rejected(events)
    assert mid_line or "restarted" in why


def test_two_records_are_both_delivered() -> None:
    a, b = sample(8), sample(9)
    data = (wire.encode_record(a) + "noise\n" + wire.encode_record(b)).encode()
    assert wire.decode_stream([data]) == [a, b]


def test_stray_lines_outside_a_record_are_reported_not_fatal() -> None:
    r = sample(10)
    data = "@MA1 D 0000 00ff\r\n@MA1 E 00000000\r\n" + wire.encode_record(r)
    events = wire.decode_stream([data.encode()])
    assert accepted(events) == [r]
    assert len(rejected(events)) == 2


def test_payload_layout_errors() -> None:
    good = wire.encode_payload(sample(11))
    with pytest.raises(wire.WireError, match="version"):
        wire.decode_payload(b"\x09" + good[1:])
    with pytest.raises(wire.WireError, match="runs past"):
        wire.decode_payload(good[:-3])
    with pytest.raises(wire.WireError, match="no status"):
        wire.decode_payload(b"\x01")
    status = wire.encode_payload(wire.WireReport(status=0))  # ok but no arena sizes
    with pytest.raises(wire.WireError, match="no arena"):
        wire.decode_payload(status)
    # A well-framed record with a bad payload is rejected, with the payload error as reason.
    lines = "\n".join(wire.frame_lines(b"\x01\x01\x02\x00xx")) + "\n"
    (why,) = rejected(wire.decode_stream([lines.encode()]))
    assert why.startswith("bad payload")


def test_unknown_fields_are_skipped() -> None:
    r = sample(12)
    payload = wire.encode_payload(r) + bytes([200, 3, 0]) + b"new"
    assert wire.decode_payload(payload) == r


def test_oversized_length_is_refused_without_buffering() -> None:
    data = b"@MA1 B 7fffffff 00000000\r\n" + b"@MA1 D 0000 " + b"00" * 32 + b"\r\n"
    events = wire.decode_stream([data])
    assert not accepted(events)
    assert "exceeds" in rejected(events)[0]


def test_two_interleaved_records_are_never_mixed() -> None:
    """Two senders on one console: whatever survives is one of the two records, whole."""
    a, b = sample(13), sample(14)
    la, lb = wire.frame_lines(wire.encode_payload(a)), wire.frame_lines(wire.encode_payload(b))
    rng = random.Random(13)
    for _ in range(50):
        ia = ib = 0
        merged = []
        while ia < len(la) or ib < len(lb):
            if ib >= len(lb) or (ia < len(la) and rng.random() < 0.5):
                merged.append(la[ia])
                ia += 1
            else:
                merged.append(lb[ib])
                ib += 1
        events = wire.decode_stream([("\n".join(merged) + "\n").encode()])
        assert all(e in (a, b) for e in accepted(events))
        assert accepted(events) or rejected(events)
