"""The machine-readable arena record: payload encoding and line framing (docs/wire_format.md).

The firmware sends its report as ASCII lines that survive a UART console:

    @MA1 B <len:8 hex> <crc32:8 hex>
    @MA1 D <seq:4 hex> <up to 32 payload bytes as hex>
    @MA1 E <crc32:8 hex>

The payload is a version byte followed by tag-length-value fields. `FrameDecoder` finds records
in a byte stream full of other output and rejects damaged ones (wrong length, sequence, CRC or
field layout) with a reason instead of guessing.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field

from host.planning.tflm.categories import Category
from host.terminal import printable

MARKER = "@MA1 "
VERSION = 1
BYTES_PER_LINE = 32
MAX_PAYLOAD = 1 << 20  # a record never needs more; bounds memory on a noisy line
MAX_LINE = 4096  # bytes in a line of a board's output; a longer one is dropped as a bad line

# Field tags (docs/wire_format.md).
TAG_STATUS = 1
TAG_ARENA = 2
TAG_CATEGORY = 3
TAG_TENSOR = 4
TAG_CYCLES = 5
TAG_OUTPUT = 6
TAG_INFO = 7
TAG_OP = 8
TAG_STACK = 9
# Operator codes from here up are custom operators (MA_CUSTOM_CODE_BASE in ma_kernel.h).
CUSTOM_CODE_BASE = 0x100000

# Status codes: the values of ma_status in firmware/src/kernels/ma_kernel.h.
STATUS_NAMES = {
    0: "ok",
    1: "model",
    2: "unsupported",
    3: "arena",
    4: "plan",
    5: "arg",
    6: "kernel",
}
REGION_NAMES = {0: "head", 1: "tail", 2: "model"}


class WireError(ValueError):
    """A record that is damaged or does not follow the format."""


@dataclass
class TensorPlacement:
    subgraph: int
    index: int
    offset: int
    bytes: int
    region: str


@dataclass
class OpTime:
    """One operator's ticks in the invoke (a profiling firmware), nested subgraphs' included."""

    subgraph: int
    op: int
    code: int
    ticks: int


@dataclass
class WireReport:
    status: int
    message: str = ""
    bytes_needed: int = 0
    arena_size: int | None = None
    head: int | None = None
    tail: int | None = None
    total: int | None = None
    temp_peak: int | None = None
    cycles: int | None = None
    clock_hz: int | None = None
    output_crc: int | None = None
    output_bytes: int | None = None
    stack_used: int | None = None  # deepest stack use, bytes (the stack field, tag 9)
    stack_size: int | None = None  # the board's stack budget
    stack_measured: int | None = None  # depth painted: stack_used reaching it means "at least"
    info: str = ""
    categories: list[Category] = field(default_factory=list)
    tensors: list[TensorPlacement] = field(default_factory=list)
    ops: list[OpTime] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, f"error {self.status}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["status_name"] = self.status_name
        return d


# ---------------------------------------------------------------- payload


def _tlv(tag: int, value: bytes) -> bytes:
    if len(value) > 0xFFFF:
        raise WireError(f"field {tag} too long ({len(value)} bytes)")
    return struct.pack("<BH", tag, len(value)) + value


def encode_payload(r: WireReport) -> bytes:
    """The payload bytes of a report, as the firmware encoder writes them."""
    out = [bytes([VERSION])]
    msg = r.message.encode("utf-8")[:0xFFF0]
    out.append(_tlv(TAG_STATUS, struct.pack("<iI", r.status, r.bytes_needed) + msg))
    arena = (r.arena_size, r.head, r.tail, r.total, r.temp_peak)
    if any(v is not None for v in arena):
        out.append(_tlv(TAG_ARENA, struct.pack("<5I", *[v or 0 for v in arena])))
    for c in r.categories:
        name = c.name.encode("utf-8")[:255]
        body = struct.pack("<3IB", c.used, c.requested, c.count, len(name))
        out.append(_tlv(TAG_CATEGORY, body + name + c.unit.encode("utf-8")))
    regions = {v: k for k, v in REGION_NAMES.items()}
    for t in r.tensors:
        body = struct.pack("<HIIIB", t.subgraph, t.index, t.offset, t.bytes, regions[t.region])
        out.append(_tlv(TAG_TENSOR, body))
    if r.cycles is not None:
        out.append(_tlv(TAG_CYCLES, struct.pack("<QI", r.cycles, r.clock_hz or 0)))
    if r.output_crc is not None:
        out.append(_tlv(TAG_OUTPUT, struct.pack("<II", r.output_crc, r.output_bytes or 0)))
    if r.stack_used is not None:
        stack = (r.stack_used, r.stack_size or 0, r.stack_measured or 0)
        out.append(_tlv(TAG_STACK, struct.pack("<3I", *stack)))
    for o in r.ops:
        out.append(_tlv(TAG_OP, struct.pack("<HIIQ", o.subgraph, o.op, o.code, o.ticks)))
    if r.info:
        out.append(_tlv(TAG_INFO, r.info.encode("utf-8")))
    return b"".join(out)


def _text(raw: bytes, what: str) -> str:
    """A record's text field, escaped for a terminal: the board is untrusted."""
    try:
        return printable(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise WireError(f"{what} is not UTF-8") from e


def _fields(payload: bytes) -> Iterator[tuple[int, bytes]]:
    pos = 1
    while pos < len(payload):
        if pos + 3 > len(payload):
            raise WireError(f"field header cut short at byte {pos}")
        tag, n = struct.unpack_from("<BH", payload, pos)
        pos += 3
        if pos + n > len(payload):
            raise WireError(f"field {tag} at byte {pos - 3} runs past the payload end")
        yield tag, payload[pos : pos + n]
        pos += n


def _need(value: bytes, size: int, name: str) -> None:
    if len(value) < size:
        raise WireError(f"{name} field is {len(value)} bytes, needs {size}")


def decode_payload(payload: bytes) -> WireReport:
    """Parse payload bytes; raises WireError on any layout problem."""
    if not payload:
        raise WireError("empty payload")
    if payload[0] != VERSION:
        raise WireError(f"payload version {payload[0]} (this recorder reads {VERSION})")
    r: WireReport | None = None
    seen: set[int] = set()
    rest: list[tuple[int, bytes]] = []
    for tag, value in _fields(payload):
        if tag in seen and tag not in (TAG_CATEGORY, TAG_TENSOR, TAG_OP):
            raise WireError(f"field {tag} appears twice")
        seen.add(tag)
        if tag == TAG_STATUS:
            _need(value, 8, "status")
            status, needed = struct.unpack_from("<iI", value)
            r = WireReport(status=status, bytes_needed=needed, message=_text(value[8:], "message"))
        else:
            rest.append((tag, value))
    if r is None:
        raise WireError("no status field")
    for tag, value in rest:
        _apply_field(r, tag, value)
    if r.ok and r.total is None:
        raise WireError("status ok but no arena field")
    return r


def _apply_field(r: WireReport, tag: int, value: bytes) -> None:
    if tag == TAG_ARENA:
        _need(value, 20, "arena")
        r.arena_size, r.head, r.tail, r.total, r.temp_peak = struct.unpack_from("<5I", value)
    elif tag == TAG_CATEGORY:
        _need(value, 13, "category")
        used, requested, count, name_len = struct.unpack_from("<3IB", value)
        if 13 + name_len > len(value):
            raise WireError("category name runs past its field")
        name = _text(value[13 : 13 + name_len], "category name")
        unit = _text(value[13 + name_len :], "category unit")
        r.categories.append(Category(name, used, requested, count, unit))
    elif tag == TAG_TENSOR:
        _need(value, 15, "tensor")
        sg, idx, off, size, region = struct.unpack_from("<HIIIB", value)
        if region not in REGION_NAMES:
            raise WireError(f"tensor {idx}: unknown region {region}")
        r.tensors.append(TensorPlacement(sg, idx, off, size, REGION_NAMES[region]))
    elif tag == TAG_CYCLES:
        _need(value, 12, "cycles")
        r.cycles, r.clock_hz = struct.unpack_from("<QI", value)
    elif tag == TAG_OUTPUT:
        _need(value, 8, "output")
        r.output_crc, r.output_bytes = struct.unpack_from("<II", value)
    elif tag == TAG_STACK:
        _need(value, 12, "stack")
        r.stack_used, r.stack_size, r.stack_measured = struct.unpack_from("<3I", value)
    elif tag == TAG_INFO:
        r.info = _text(value, "info")
    elif tag == TAG_OP:
        _need(value, 18, "operator time")
        r.ops.append(OpTime(*struct.unpack_from("<HIIQ", value)))
    # Unknown tags are skipped: newer firmware may add fields.


# ---------------------------------------------------------------- framing


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3, as zlib and ma_wire_crc32)."""
    return zlib.crc32(data) & 0xFFFFFFFF


def frame_lines(payload: bytes) -> list[str]:
    """The framed lines (without line ends) for a payload."""
    crc = crc32(payload)
    lines = [f"{MARKER}B {len(payload):08x} {crc:08x}"]
    for seq, pos in enumerate(range(0, len(payload), BYTES_PER_LINE)):
        lines.append(f"{MARKER}D {seq & 0xFFFF:04x} {payload[pos : pos + BYTES_PER_LINE].hex()}")
    lines.append(f"{MARKER}E {crc:08x}")
    return lines


def encode_record(r: WireReport) -> str:
    """A report as the firmware sends it: framed lines, each ending in CRLF."""
    return "".join(line + "\r\n" for line in frame_lines(encode_payload(r)))


@dataclass
class Rejected:
    """A record the decoder saw but could not accept, and why."""

    reason: str


def _hex_field(s: str, digits: int, name: str) -> int:
    if len(s) != digits:
        raise WireError(f"{name} must be {digits} hex digits, got {s!r}")
    try:
        return int(s, 16)
    except ValueError as e:
        raise WireError(f"{name} is not hex: {s!r}") from e


class LineSplitter:
    """Splits a byte stream into lines, linear in its input: each byte is looked at once, and
    an unfinished line is held up to MAX_LINE bytes; beyond that it is dropped up to its end
    (None in place of the line), so noise without line ends costs neither time nor memory."""

    def __init__(self) -> None:
        self._partial = bytearray()
        self._overlong = False

    @property
    def pending(self) -> int:
        """Bytes of the unfinished line held (at most MAX_LINE)."""
        return len(self._partial)

    def feed(self, data: bytes) -> list[bytes | None]:
        lines: list[bytes | None] = []
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._add(data[start:end])
            lines.append(None if self._overlong else bytes(self._partial))
            self._partial.clear()
            self._overlong = False
            start = end + 1
        self._add(data[start:])
        return lines

    def finish(self) -> list[bytes | None]:
        """End of input: the unfinished line, if any."""
        return self.feed(b"\n") if self._partial or self._overlong else []

    def _add(self, part: bytes) -> None:
        if self._overlong or len(self._partial) + len(part) > MAX_LINE:
            self._overlong = True
            self._partial.clear()
        else:
            self._partial += part


class FrameDecoder:
    """Incremental decoder: feed raw bytes, get accepted reports and rejections back.

    Lines without the marker are other output and pass through `other_lines` untouched. A new
    start line abandons a record in progress (the board was reset), which is reported. A line
    over MAX_LINE bytes is dropped (counted in `dropped_lines`); inside a record it breaks it.
    """

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._in_frame = False
        self._length = 0
        self._crc = 0
        self._seq = 0
        self._buf = bytearray()
        self.other_lines: list[str] = []
        self.dropped_lines = 0

    @property
    def pending_bytes(self) -> int:
        """Bytes held of a line not yet ended (bounded by MAX_LINE)."""
        return self._lines.pending

    def feed(self, data: bytes) -> list[WireReport | Rejected]:
        return self._events(self._lines.feed(data))

    def _events(self, lines: list[bytes | None]) -> list[WireReport | Rejected]:
        events: list[WireReport | Rejected] = []
        for raw in lines:
            ev = self._overlong() if raw is None else self._line(raw.rstrip(b"\r"))
            if ev is not None:
                events.append(ev)
        return events

    def finish(self) -> list[WireReport | Rejected]:
        """End of input: a record still open was truncated."""
        events: list[WireReport | Rejected] = []
        in_frame = self._in_frame
        for ev in self._events(self._lines.finish()):
            if in_frame and isinstance(ev, Rejected):
                ev = Rejected(f"truncated: the last line was cut short ({ev.reason})")
            events.append(ev)
        if self._in_frame:
            self._in_frame = False
            events.append(
                Rejected(f"truncated: input ended after {len(self._buf)} of {self._length} bytes")
            )
        return events

    def _overlong(self) -> Rejected | None:
        self.dropped_lines += 1
        if not self._in_frame:
            return None
        self._in_frame = False
        return Rejected(f"a line over {MAX_LINE} bytes broke the record (noise on the line?)")

    def _line(self, raw: bytes) -> WireReport | Rejected | None:
        text = raw.decode("latin-1")
        at = text.find(MARKER)
        if at < 0:
            self.other_lines.append(text)
            return None
        try:
            return self._marker_line(text[at + len(MARKER) :].split(" "))
        except WireError as e:
            was_open = self._in_frame
            self._in_frame = False
            return Rejected(str(e) if was_open else f"stray record line: {e}")

    def _marker_line(self, parts: list[str]) -> WireReport | Rejected | None:
        kind = parts[0]
        if kind == "B":
            return self._begin(parts)
        if not self._in_frame:
            raise WireError(f"{kind!r} line outside a record")
        if kind == "D":
            self._data(parts)
            return None
        if kind == "E":
            return self._end(parts)
        raise WireError(f"unknown record line kind {kind!r}")

    def _begin(self, parts: list[str]) -> Rejected | None:
        if len(parts) != 3:
            raise WireError("start line needs a length and a CRC")
        length = _hex_field(parts[1], 8, "length")
        crc = _hex_field(parts[2], 8, "CRC")
        abandoned = None
        if self._in_frame:
            abandoned = Rejected(
                f"restarted: a new record began after {len(self._buf)} of {self._length} bytes "
                "(board reset?)"
            )
        if length > MAX_PAYLOAD:
            self._in_frame = False
            return Rejected(f"record length {length} exceeds the {MAX_PAYLOAD} byte limit")
        self._in_frame, self._length, self._crc, self._seq = True, length, crc, 0
        self._buf = bytearray()
        return abandoned

    def _data(self, parts: list[str]) -> None:
        if len(parts) != 3:
            raise WireError(f"data line {self._seq} is malformed")
        seq = _hex_field(parts[1], 4, "sequence number")
        if seq != self._seq & 0xFFFF:
            raise WireError(f"data line {self._seq} missing (got line {seq})")
        try:
            chunk = bytes.fromhex(parts[2])
        except ValueError as e:
            raise WireError(f"data line {seq} is not hex") from e
        if not chunk or len(chunk) > BYTES_PER_LINE:
            raise WireError(f"data line {seq} holds {len(chunk)} bytes")
        if len(self._buf) + len(chunk) > self._length:
            raise WireError(f"record longer than its declared {self._length} bytes")
        self._buf += chunk
        self._seq += 1

    def _end(self, parts: list[str]) -> WireReport | Rejected:
        self._in_frame = False
        if len(parts) != 2:
            raise WireError("end line is malformed")
        end_crc = _hex_field(parts[1], 8, "CRC")
        if len(self._buf) != self._length:
            return Rejected(f"truncated: got {len(self._buf)} of {self._length} bytes")
        actual = crc32(bytes(self._buf))
        if actual != self._crc or end_crc != self._crc:
            return Rejected(
                f"CRC mismatch: start line {self._crc:08x}, end line {end_crc:08x}, "
                f"data {actual:08x}"
            )
        try:
            return decode_payload(bytes(self._buf))
        except WireError as e:
            return Rejected(f"bad payload: {e}")


def decode_stream(chunks: Iterable[bytes]) -> list[WireReport | Rejected]:
    """All records and rejections in a finite stream (a saved log, a test)."""
    dec = FrameDecoder()
    events: list[WireReport | Rejected] = []
    for chunk in chunks:
        events += dec.feed(chunk)
    return events + dec.finish()
