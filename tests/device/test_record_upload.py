"""Model upload (host/device/upload.py) against the real board-side protocol code.

firmware/apps/probe/upload_rx.c is built with host gcc into a stand-in for the probe that talks on
stdin/stdout (tests/test_record_upload_driver.c). A TCP server thread on 127.0.0.1 bridges a
pyserial socket:// connection to it and injects faults line by line in either direction: that
bridge is the only fake, and it only damages, drops or passes lines.
"""

from __future__ import annotations

import json
import random
import shutil
import socket
import subprocess
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from support.serial_server import LoopbackPort

from host.device import record, upload, wire
from host.paths import SHARED_MODELS

ROOT = Path(__file__).resolve().parents[2]
MODEL = SHARED_MODELS / "tflm_hello_world_int8.tflite"

# A fault hook gets (line index in its direction, line) and returns what to pass on.
Fault = Callable[[int, bytes], bytes]


def passthrough(_i: int, line: bytes) -> bytes:
    return line


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("host gcc is not installed (bash .ci/setup installs it)")
    exe = tmp_path_factory.mktemp("upload") / "probe_standin"
    srcs = ["firmware/src/wire/report_wire.c", "firmware/apps/probe/upload_rx.c"]
    cmd = ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"]
    cmd += ["-Ifirmware/include", "-Ifirmware/apps/probe", *srcs]
    cmd += ["tests/device/test_record_upload_driver.c", "-o", str(exe)]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return exe


class Bridge:
    """socket:// <-> stand-in probe, with a fault hook for each direction."""

    def __init__(
        self, cmd: list[str], to_board: Fault = passthrough, to_host: Fault = passthrough
    ) -> None:
        self.cmd, self.to_board, self.to_host = cmd, to_board, to_host
        self.received: list[bytes] = []  # lines the board got, after damage
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = LoopbackPort(self._serve)
        self.url = self.port.url

    def _serve(self, conn: socket.socket) -> None:
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        threading.Thread(target=self._host_to_board, args=(conn,), daemon=True).start()
        assert self.proc.stdout is not None
        for i, line in enumerate(iter(self.proc.stdout.readline, b"")):
            try:
                conn.sendall(self.to_host(i, line))
            except OSError:
                break

    def _host_to_board(self, conn: socket.socket) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        pending, i = b"", 0
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                break
            if not data:
                break
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                out = self.to_board(i, line + b"\n")
                i += 1
                self.received.append(out)
                try:
                    self.proc.stdin.write(out)
                    self.proc.stdin.flush()
                except OSError:
                    return

    def close(self) -> None:
        self.port.close()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


def run_upload(url: str, model: bytes, **kw: object) -> tuple[dict, list[wire.WireReport]]:
    """Upload through the real pyserial port, then decode what the board reported."""
    port = record.open_port(url, 115200)
    try:
        src = upload.LineSource(port.read)
        stats = upload.upload(src, port.write, model, **kw)  # type: ignore[arg-type]
        rec = record.record_stream(record._prepend(src.pending, port.read), url, timeout=5)
        return stats, [rec.report] if rec.report else []
    finally:
        port.close()


def model_bytes() -> bytes:
    if MODEL.exists():
        return MODEL.read_bytes()
    return bytes(range(256)) * 11  # any bytes do: the stand-in only stores them


def check_received(reports: list[wire.WireReport], model: bytes) -> None:
    (r,) = reports
    assert (r.output_crc, r.output_bytes) == (zlib.crc32(model), len(model))


def test_clean_upload_through_the_cli(driver: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = model_bytes()
    path = MODEL if MODEL.exists() else None
    if path is None:
        pytest.skip(f"{MODEL} is absent")
    b = Bridge([str(driver), str(1 << 20)])
    try:
        code = record.main(["--port", b.url, "--upload", str(path), "--json", "--timeout", "10"])
    finally:
        b.close()
    out, err = capsys.readouterr()
    doc = json.loads(out)  # progress goes to stderr: stdout stays one JSON document
    assert code == 0
    assert err.count("uploading") > 2 and f"uploading {len(model)} B: 100%" in err
    assert doc["report"]["output_crc"] == zlib.crc32(model)
    assert doc["report"]["output_bytes"] == len(model)
    assert doc["warnings"] == []  # nothing had to be sent twice


def test_large_random_model(driver: Path) -> None:
    model = bytes((i * 7919 + (i >> 8)) & 0xFF for i in range(200_000))
    b = Bridge([str(driver), str(1 << 20)])
    try:
        stats, reports = run_upload(b.url, model)
    finally:
        b.close()
    check_received(reports, model)
    assert stats["resends"] == 0 and stats["lines"] == len(upload.upload_lines(model))


def flip_in(targets: set[int], times: int = 1) -> Fault:
    """Damages one character of lines whose index is in targets, `times` times each."""
    hits: dict[int, int] = {}

    def fault(i: int, line: bytes) -> bytes:
        seq = int(line[7:11], 16) if line.startswith(b"@MAU ") else -1
        if seq in targets and hits.get(seq, 0) < times:
            hits[seq] = hits.get(seq, 0) + 1
            pos = len(line) // 2
            return line[:pos] + bytes([line[pos] ^ 0x01]) + line[pos + 1 :]
        return line

    return fault


def test_damaged_lines_to_the_board_are_resent(driver: Path) -> None:
    model = model_bytes()
    b = Bridge([str(driver), str(1 << 20)], to_board=flip_in({0, 3, 7}))
    try:
        stats, reports = run_upload(b.url, model, ack_timeout=1.0)
    finally:
        b.close()
    check_received(reports, model)
    assert stats["resends"] == 3


def test_lost_lines_and_lost_acks_are_recovered(driver: Path) -> None:
    model = model_bytes()
    dropped: set[int] = set()

    def drop_line(i: int, line: bytes) -> bytes:  # host -> board: line 5 vanishes once
        if line.startswith(b"@MAU C 0005") and 5 not in dropped:
            dropped.add(5)
            return b""
        return line

    def drop_ack(i: int, line: bytes) -> bytes:  # board -> host: ack of line 9 vanishes once
        if line.startswith(b"@MAU A 0009") and 9 not in dropped:
            dropped.add(9)
            return b""
        return line

    b = Bridge([str(driver), str(1 << 20)], to_board=drop_line, to_host=drop_ack)
    try:
        stats, reports = run_upload(b.url, model, ack_timeout=0.3)
    finally:
        b.close()
    check_received(reports, model)  # line 9 arrived twice but was stored once
    assert stats["resends"] == 2 and dropped == {5, 9}
    assert sum(line.startswith(b"@MAU C 0009") for line in b.received) == 2


def test_garbled_replies_are_not_taken_as_acks(driver: Path) -> None:
    model = model_bytes()

    def garble(i: int, line: bytes) -> bytes:
        return line.replace(b"@MAU A 0004", b"@MAU A 0O04") if line else line

    b = Bridge([str(driver), str(1 << 20)], to_host=garble)
    try:
        with pytest.raises(upload.UploadError, match="line 4 failed 3 times"):
            run_upload(b.url, model, ack_timeout=0.2, retries=2)
    finally:
        b.close()


def test_persistent_damage_gives_up_with_the_reason(driver: Path) -> None:
    b = Bridge([str(driver), str(1 << 20)], to_board=flip_in({2}, times=99))
    try:
        with pytest.raises(upload.UploadError, match=r"line 2 failed 4 times \(NACK: line damaged"):
            run_upload(b.url, model_bytes(), retries=3)
    finally:
        b.close()


def test_board_refuses_a_model_it_cannot_hold(driver: Path) -> None:
    model = model_bytes()
    # It says it takes 1 MiB but has room for 1 KiB: it gives up at the start line.
    b = Bridge([str(driver), "1024", str(1 << 20)])
    try:
        with pytest.raises(upload.UploadError, match="gave up at line 0: model too big"):
            run_upload(b.url, model)
    finally:
        b.close()
    # An honest small probe: the host refuses before sending anything.
    b = Bridge([str(driver), "1024"])
    try:
        with pytest.raises(upload.UploadError, match="takes at most 1024"):
            run_upload(b.url, model)
    finally:
        b.close()


def test_silent_board_times_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    url = f"socket://127.0.0.1:{server.getsockname()[1]}"
    model = tmp_path / "m.tflite"
    model.write_bytes(b"TFL3" * 10)
    t0 = time.monotonic()
    try:
        code = record.main(["--port", url, "--upload", str(model), "--timeout", "0.5"])
    finally:
        server.close()
    assert code == record.EXIT_NO_REPORT
    assert "did not say it was ready" in capsys.readouterr().err
    assert time.monotonic() - t0 < 3


def test_upload_needs_a_board(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"")
    assert record.main(["--log", str(log), "--upload", str(log)]) == record.EXIT_USAGE
    assert record.main(["--port", "socket://127.0.0.1:1", "--upload", str(log)]) == 2
    err = capsys.readouterr().err
    assert "--upload needs a board" in err and "is empty" in err


def test_board_side_survives_hostile_lines(tmp_path: Path) -> None:
    """The probe parses whatever arrives on its UART: under AddressSanitizer and UBSan, damaged,
    cut, padded and random lines between the real ones are all refused, and the model that is
    finally accepted is exactly the one sent."""
    if shutil.which("gcc") is None:
        pytest.skip("host gcc is not installed (bash .ci/setup installs it)")
    exe = tmp_path / "probe_standin_asan"
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1"]
    srcs = ["firmware/src/wire/report_wire.c", "firmware/apps/probe/upload_rx.c"]
    cmd = ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", *san, "-Ifirmware/include"]
    cmd += [
        "-Ifirmware/apps/probe",
        *srcs,
        "tests/device/test_record_upload_driver.c",
        "-o",
        str(exe),
    ]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)

    rng = random.Random(3)
    model = bytes(rng.randrange(256) for _ in range(5000))
    stream: list[bytes] = []
    for line in upload.upload_lines(model):
        for _ in range(rng.randrange(4)):
            bad = bytearray(line[:-1])
            how = rng.randrange(6)
            if how == 0:
                bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
            elif how == 1:
                del bad[rng.randrange(len(bad)) :]
            elif how == 2:
                bad.insert(rng.randrange(len(bad)), rng.choice(b" @\x00\xff"))
            elif how == 3:
                bad = bytearray(rng.randbytes(rng.randrange(1, 300)).replace(b"\n", b""))
            elif how == 4:
                bad += b"f" * rng.randrange(1, 3000)
            else:
                bad = bytearray(b"@MAU " + bytes([rng.choice(b"SCFXZ")]) + b" ffff " * 3)
            stream.append(bytes(bad) + b"\n")
        stream.append(line)
    out = subprocess.run(
        [str(exe), str(1 << 16)], input=b"".join(stream), capture_output=True, timeout=60
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    assert b"Sanitizer" not in out.stderr
    replies = [upload.parse_reply(x.decode("latin-1")) for x in out.stdout.splitlines()]
    kinds = [r.kind for r in replies if r is not None]
    # Every real line was taken (noise before the marker leaves a line valid: it may be taken
    # first and the clean copy acknowledged again as a repeat); the damage was refused.
    assert kinds.count("A") >= len(upload.upload_lines(model))
    assert kinds.count("N") > 20 and "X" not in kinds
    (report,) = [e for e in wire.decode_stream([out.stdout]) if isinstance(e, wire.WireReport)]
    assert (report.output_crc, report.output_bytes) == (zlib.crc32(model), len(model))


def test_host_pings_when_the_ready_line_went_by(driver: Path) -> None:
    """The ready line is lost (as when it was sent before this host connected): the host asks
    for it with a ping and then uploads as usual."""
    model = model_bytes()

    def drop_ready(i: int, line: bytes) -> bytes:
        return b"" if line.startswith(b"@MAU R") and i < 2 else line

    b = Bridge([str(driver), str(1 << 20)], to_host=drop_ready)
    try:
        t0 = time.monotonic()
        stats, reports = run_upload(b.url, model)
    finally:
        b.close()
    check_received(reports, model)
    assert b.received[0] == upload.ping_line()
    assert upload.PING_EVERY <= time.monotonic() - t0 < upload.PING_EVERY + 3
    assert stats["resends"] == 0


def test_board_takes_the_next_model_after_giving_up(driver: Path) -> None:
    """On one connection: the board gives up on a model too big for it and on one whose bytes
    do not match the CRC of its start line, then takes the next model."""
    model = model_bytes()[:1000]
    lying = upload.upload_lines(model)
    lying[0] = upload.start_line(len(model), zlib.crc32(model) ^ 1)
    b = Bridge([str(driver), "1024", str(1 << 20)])  # room for 1 KiB, says 1 MiB
    port = record.open_port(b.url, 115200)
    try:
        src = upload.LineSource(port.read)
        with pytest.raises(upload.UploadError, match="gave up at line 0: model too big"):
            upload.upload(src, port.write, bytes(2000))
        for line in lying:
            port.write(line)
        last = len(lying) - 1
        deadline = time.monotonic() + 5
        while (text := src.next_line(deadline)) is not None:
            reply = upload.parse_reply(text)
            if reply is not None and reply.seq == last and reply.kind != "R":
                break
        assert reply is not None and (reply.kind, reply.text) == ("X", "model CRC mismatch")
        stats = upload.upload(src, port.write, model)
        rec = record.record_stream(record._prepend(src.pending, port.read), b.url, timeout=5)
    finally:
        port.close()
        b.close()
    assert rec.report is not None
    assert (rec.report.output_crc, rec.report.output_bytes) == (zlib.crc32(model), len(model))
    assert stats["resends"] == 0
    assert b.received.count(upload.ping_line()) >= 1  # the board did not repeat its ready line


def test_ping_drops_an_upload_in_progress(driver: Path) -> None:
    """A ping is a host starting afresh: the board answers it with its ready line, forgets the
    half-received model, and a malformed ping is asked for again."""
    lines = upload.upload_lines(bytes(range(256)) * 2)
    body = b"@MAU P 0001"
    bad_ping = body + f" {zlib.crc32(body):08x}\n".encode()
    sent = [lines[0], lines[1], upload.ping_line(), lines[2], bad_ping]
    out = subprocess.run(
        [str(driver), "4096"], input=b"".join(sent), capture_output=True, timeout=10
    )
    replies = [upload.parse_reply(x.decode()) for x in out.stdout.splitlines()]
    got = [(r.kind, r.seq, r.text) for r in replies if r is not None]
    ready = ("R", 4096, "")
    assert got == [
        ready,
        ("A", 0, ""),
        ("A", 1, ""),
        ready,
        ("N", 2, "no upload started"),
        ("N", 1, "malformed ping"),
    ]
    assert out.returncode == 1  # no model arrived
