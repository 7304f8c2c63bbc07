"""Model upload to the probe firmware (firmware/apps/probe/), host side.

Protocol: docs/wire_format.md.

Every host line carries a sequence number and its own CRC-32; the board acknowledges each one
(`@MAU A`), asks for it again (`@MAU N`) or gives up (`@MAU X`). The host resends a line on a
NACK or when no answer comes in time, a few times, then fails with the board's reason. The board
ignores a line it has already stored (its acknowledgement was lost), so a resend is harmless.

The probe says it is ready (`@MAU R <capacity>`) when it starts waiting for a model; a host that
connects later, when that line has gone by, pings (`@MAU P`) until it answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from host.device.wire import crc32

MARKER = "@MAU "
CHUNK_BYTES = 128
MAX_LINES = 0xFFFF  # sequence numbers are 4 hex digits
PING_EVERY = 1.0  # seconds without a ready line before the host asks for one


class UploadError(Exception):
    """The board did not take the model."""


def _line(kind: str, seq: int, fields: str = "") -> bytes:
    body = f"{MARKER}{kind} {seq:04x}" + (f" {fields}" if fields else "")
    return f"{body} {crc32(body.encode()):08x}\n".encode()


def ping_line() -> bytes:
    """The line that asks an idle probe to say it is ready."""
    return _line("P", 0)


def start_line(size: int, crc: int) -> bytes:
    """The line that starts an upload of `size` bytes whose CRC-32 is `crc`."""
    return _line("S", 0, f"{size:08x} {crc:08x}")


def upload_lines(model: bytes, chunk: int = CHUNK_BYTES) -> list[bytes]:
    """The lines that send `model`: start, chunks, finish."""
    if not model:
        raise UploadError("the model is empty")
    n_chunks = -(-len(model) // chunk)
    if n_chunks + 2 > MAX_LINES:
        raise UploadError(f"model too large to upload in {chunk}-byte chunks")
    lines = [start_line(len(model), crc32(model))]
    for i in range(n_chunks):
        off = i * chunk
        lines.append(_line("C", i + 1, f"{off:08x} {model[off : off + chunk].hex()}"))
    lines.append(_line("F", n_chunks + 1))
    return lines


@dataclass
class Reply:
    kind: str  # "A" accepted, "N" send again, "X" given up, "R" ready
    seq: int | None  # the line answered (None: unreadable); for "R", the probe's model capacity
    text: str


def parse_reply(line: str) -> Reply | None:
    at = line.find(MARKER)
    if at < 0:
        return None
    parts = line[at + len(MARKER) :].strip().split(" ", 2)
    if not parts or parts[0] not in ("A", "N", "X", "R") or len(parts) < 2:
        return None
    try:
        seq = None if parts[1] == "----" else int(parts[1], 16)
    except ValueError:
        return None
    return Reply(parts[0], seq, parts[2] if len(parts) > 2 else "")


class LineSource:
    """Lines from a byte reader, keeping what arrives after the last line asked for."""

    def __init__(self, read: Callable[[], bytes | None]) -> None:
        self.read = read
        self.pending = b""
        self.log = bytearray()  # everything received, for --save
        self.closed = False

    def next_line(self, deadline: float) -> str | None:
        while b"\n" not in self.pending:
            if self.closed or time.monotonic() >= deadline:
                return None
            chunk = self.read()
            if chunk is None:
                self.closed = True
                continue
            self.pending += chunk
            self.log += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.rstrip(b"\r").decode("latin-1")


def _await(
    src: LineSource, want: Callable[[Reply], bool], deadline: float, report_acks: bool = True
) -> Reply | None:
    while (line := src.next_line(deadline)) is not None:
        reply = parse_reply(line)
        if reply is not None and want(reply):
            return reply
        # The report began: the finish line was taken and its acknowledgement lost.
        if report_acks and line.startswith("@MA1 B"):
            src.pending = (line + "\n").encode() + src.pending
            return Reply("A", None, "report started")
    return None


def wait_ready(
    src: LineSource,
    write: Callable[[bytes], None],
    timeout: float,
    ping_every: float = PING_EVERY,
) -> int:
    """The probe's model capacity, from its ready line; pings when none came for a while."""
    deadline = time.monotonic() + timeout
    while True:
        wait_until = min(deadline, time.monotonic() + ping_every)
        ready = _await(src, lambda r: r.kind == "R", wait_until, report_acks=False)
        if ready is not None:
            return ready.seq or 0
        if src.closed:
            raise UploadError("the port closed before the probe said it was ready")
        if time.monotonic() >= deadline:
            raise UploadError(f"the probe did not say it was ready within {timeout:g} s")
        write(ping_line())


def _answers(reply: Reply, seq: int) -> bool:
    # A ready line's number is a capacity, not a sequence number (a late answer to a ping).
    return reply.kind != "R" and reply.seq in (seq, None)


def upload(
    src: LineSource,
    write: Callable[[bytes], None],
    model: bytes,
    ready_timeout: float = 10.0,
    ack_timeout: float = 2.0,
    retries: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Sends the model; returns counts (lines, resends). Bytes after the last ack stay in src."""
    lines = upload_lines(model)
    cap = wait_ready(src, write, ready_timeout)
    if len(model) > cap:
        raise UploadError(f"model is {len(model)} bytes; the probe takes at most {cap}")
    resends = 0
    for seq, line in enumerate(lines):
        for attempt in range(retries + 1):
            write(line)
            reply = _await(src, lambda r, s=seq: _answers(r, s), time.monotonic() + ack_timeout)
            if reply is not None and reply.kind == "A":
                break
            if reply is not None and reply.kind == "X":
                raise UploadError(f"the probe gave up at line {seq}: {reply.text}")
            if src.closed:
                raise UploadError(f"the port closed during the upload (line {seq})")
            if attempt == retries:
                why = f"NACK: {reply.text}" if reply is not None else "no answer"
                raise UploadError(f"line {seq} failed {retries + 1} times ({why})")
            resends += 1
        if progress is not None:
            progress(seq + 1, len(lines))
    return {"lines": len(lines), "resends": resends, "bytes": len(model)}
