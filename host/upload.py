"""Model upload to the probe firmware (firmware/probe/), host side. Protocol: docs/wire_format.md.

Every host line carries a sequence number and its own CRC-32; the board acknowledges each one
(`@MAU A`), asks for it again (`@MAU N`) or gives up (`@MAU X`). The host resends a line on a
NACK or when no answer comes in time, a few times, then fails with the board's reason. The board
ignores a line it has already stored (its acknowledgement was lost), so a resend is harmless.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from host.wire import crc32

MARKER = "@MAU "
CHUNK_BYTES = 128
MAX_LINES = 0xFFFF  # sequence numbers are 4 hex digits


class UploadError(Exception):
    """The board did not take the model."""


def _line(kind: str, seq: int, fields: str = "") -> bytes:
    body = f"{MARKER}{kind} {seq:04x}" + (f" {fields}" if fields else "")
    return f"{body} {crc32(body.encode()):08x}\n".encode()


def upload_lines(model: bytes, chunk: int = CHUNK_BYTES) -> list[bytes]:
    """The lines that send `model`: start, chunks, finish."""
    if not model:
        raise UploadError("the model is empty")
    n_chunks = -(-len(model) // chunk)
    if n_chunks + 2 > MAX_LINES:
        raise UploadError(f"model too large to upload in {chunk}-byte chunks")
    lines = [_line("S", 0, f"{len(model):08x} {crc32(model):08x}")]
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


def _await(src: LineSource, want: Callable[[Reply], bool], deadline: float) -> Reply | None:
    while (line := src.next_line(deadline)) is not None:
        reply = parse_reply(line)
        if reply is not None and want(reply):
            return reply
        if line.startswith("@MA1 B"):  # the report began: the finish was taken, its ack lost
            src.pending = (line + "\n").encode() + src.pending
            return Reply("A", None, "report started")
    return None


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
    ready = _await(src, lambda r: r.kind == "R", time.monotonic() + ready_timeout)
    if ready is None:
        raise UploadError(f"the probe did not say it was ready within {ready_timeout:g} s")
    cap = ready.seq or 0
    if len(model) > cap:
        raise UploadError(f"model is {len(model)} bytes; the probe takes at most {cap}")
    resends = 0
    for seq, line in enumerate(lines):
        for attempt in range(retries + 1):
            write(line)
            reply = _await(src, lambda r, s=seq: r.seq in (s, None), time.monotonic() + ack_timeout)
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
