"""Run a firmware image on an emulated board (QEMU) and capture its UART.

QEMU starts paused (-S) with the board's UART on a TCP server socket on a free port; QMP tells us
the port; pyserial opens it as ``socket://``; only then does the guest run, so no output is lost.
The firmware finishes with semihosting SYS_EXIT_EXTENDED, which makes its status QEMU's exit code.
``-icount shift=0`` makes guest time count instructions (1 instruction = 1 ns), so tick counts are
repeatable run to run.

    run(board, elf, timeout)     -> Result (exit code, UART text, fault, time-out)
    start(board, elf, ...)       -> Emulation, a context manager for callers that read the UART
                                    themselves: .serial_url / .port, .resume(), .wait(timeout)

CLI: python -m host.emulate --board mps2-an386 firmware.elf
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from host import entry
from host.argtypes import SECONDS
from host.device.boards import BuildError, build_image, emulated_boards, get_board, invoke_timing
from host.fileio import read_file
from host.progress import say
from host.terminal import printable

QEMU = "qemu-system-arm"
FAULT_EXIT = 70  # boards/common/board.h BOARD_EXIT_FAULT
TIMEOUT_EXIT = 124  # CLI exit status on time-out, as timeout(1)
MAX_IMAGE_BYTES = 64 << 20  # a firmware image: far above any board's flash
FAULT_LINE = re.compile(r"^\*\*\* FAULT.*$", re.MULTILINE)


class EmulationError(RuntimeError):
    """QEMU could not be started or did not behave (not a firmware failure)."""


@dataclass
class Result:
    board: str
    elf: str
    exit_code: int | None  # firmware status; None when killed after a time-out
    uart_text: str
    fault: str | None  # the firmware's "*** FAULT ..." line, or a QEMU lock-up message
    timed_out: bool
    wall_seconds: float
    qemu_stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.fault is None and not self.timed_out

    def values(self) -> dict[str, str]:
        """``key=value`` words printed by the firmware (the last value of a key wins)."""
        return dict(re.findall(r"(?:^|\s)([A-Za-z_][\w.]*)=(\S+)", self.uart_text))


def qemu_command(
    machine: str, elf: Path, qmp_path: Path, args: str = "", icount: bool = True
) -> list[str]:
    cmd = [
        QEMU,
        "-M",
        machine,
        "-display",
        "none",
        "-monitor",
        "none",
        "-serial",
        "tcp:127.0.0.1:0,server=on,wait=off,nodelay=on",  # no Nagle: 5x faster uploads
        "-qmp",
        f"unix:{qmp_path},server=on,wait=off",
        "-semihosting-config",
        "enable=on,target=native",
        "-kernel",
        str(elf),
        "-S",
    ]
    if icount:
        cmd += ["-icount", "shift=0"]
    if args:
        cmd += ["-append", args]
    return cmd


class _Qmp:
    """Just enough of the QEMU Machine Protocol: commands and their replies, events skipped."""

    def __init__(self, path: Path, deadline: float, proc: subprocess.Popen[bytes]) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                self.sock.connect(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if proc.poll() is not None:
                    raise EmulationError(
                        f"QEMU exited at start (status {proc.returncode})"
                    ) from None
                if time.monotonic() > deadline:
                    raise EmulationError("QEMU did not open its QMP socket") from None
                time.sleep(0.005)
        self.sock.settimeout(max(0.1, deadline - time.monotonic()))
        self.buffer = b""
        self._message()  # greeting
        self.execute("qmp_capabilities")

    def _message(self) -> dict:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EmulationError("QEMU closed its QMP socket")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command: str) -> object:
        self.sock.sendall(json.dumps({"execute": command}).encode() + b"\n")
        while True:
            reply = self._message()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise EmulationError(f"QMP {command}: {reply['error'].get('desc', reply)}")

    def close(self) -> None:
        self.sock.close()


class Emulation:
    """A running (initially paused) QEMU; use through start()."""

    def __init__(
        self,
        board: str,
        elf: Path,
        args: str = "",
        icount: bool = True,
        start_timeout: float = 10.0,
        auto_resume: bool = False,
    ):
        spec = get_board(board)
        if spec.qemu_machine is None:
            raise ValueError(f"board {board!r} is a real board and cannot be emulated")
        try:
            image = read_file(elf, MAX_IMAGE_BYTES, "firmware image")  # not /dev/zero, a FIFO
        except FileNotFoundError:
            raise FileNotFoundError(f"firmware image not found: {elf}") from None
        except OSError as e:
            raise ValueError(f"cannot read {elf}: {e.strerror}") from None
        if image[:4] != b"\x7fELF":
            raise ValueError(f"{elf} is not an ELF image (QEMU would run it as raw bytes)")
        if shutil.which(QEMU) is None:
            raise EmulationError(f"{QEMU} is not on PATH (Debian package qemu-system-arm)")
        self.board = board
        self.elf = elf
        self._tmp = tempfile.TemporaryDirectory(prefix="microarena-qemu-")
        qmp_path = Path(self._tmp.name) / "qmp.sock"
        self._stderr = open(Path(self._tmp.name) / "stderr.txt", "w+b")  # noqa: SIM115
        self.command = qemu_command(spec.qemu_machine, elf, qmp_path, args, icount)
        self.proc = subprocess.Popen(
            self.command, stdin=subprocess.DEVNULL, stdout=self._stderr, stderr=self._stderr
        )
        self._resumed = False
        self._lock = threading.Lock()  # one QMP conversation at a time
        self._closing = threading.Event()
        try:
            self._qmp = _Qmp(qmp_path, time.monotonic() + start_timeout, self.proc)
            self.port = self._serial_port()
        except Exception:
            self.kill()
            self.close()
            raise
        self.serial_url = f"socket://127.0.0.1:{self.port}"
        self.url = self.serial_url
        if auto_resume:
            threading.Thread(target=self._resume_on_connect, daemon=True).start()

    def __enter__(self) -> Emulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _resume_on_connect(self) -> None:
        """Resume once a client holds the UART socket (QMP shows the peer as '<->')."""
        while not self._closing.is_set() and not self._resumed:
            try:
                with self._lock:
                    devs = self._qmp.execute("query-chardev")
            except (EmulationError, OSError, ValueError):
                return
            serial0 = [d for d in devs if d.get("label") == "serial0"]  # type: ignore[union-attr]
            if serial0 and "<->" in serial0[0].get("filename", ""):
                # pyserial empties its input right after connecting: let it finish first.
                time.sleep(0.02)
                with contextlib.suppress(EmulationError, OSError):
                    self.resume()
                return
            time.sleep(0.005)

    def _serial_port(self) -> int:
        for dev in self._qmp.execute("query-chardev"):  # type: ignore[union-attr]
            if dev.get("label") == "serial0":
                match = re.search(r":(\d+),", dev.get("filename", "") + ",")
                if match:
                    return int(match.group(1))
        raise EmulationError("QEMU reported no TCP port for serial0")

    def resume(self) -> None:
        """Let the guest run; open the serial URL before this, or its first bytes are lost."""
        with self._lock:
            if not self._resumed:
                self._resumed = True
                # A short program can exit, closing QMP, before the reply to "cont" arrives.
                with contextlib.suppress(OSError, EmulationError):
                    self._qmp.execute("cont")

    def wait(self, timeout: float | None = None) -> int | None:
        """QEMU's exit code (the firmware status), or None if it is still running at timeout."""
        self.resume()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stderr_text(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def stop(self) -> None:
        self.close()

    def close(self) -> None:
        self._closing.set()
        self.kill()
        with contextlib.suppress(Exception):
            self._qmp.close()
        self._stderr.close()
        self._tmp.cleanup()


def start(
    board: str,
    elf: str | os.PathLike[str] | None = None,
    args: str = "",
    icount: bool = True,
    start_timeout: float = 10.0,
    model: str | os.PathLike[str] | None = None,
    auto_resume: bool = True,
) -> Emulation:
    """Start QEMU paused and return the Emulation (also a context manager that kills QEMU).

    Open ``.serial_url`` (``.url``) with pyserial: with ``auto_resume`` the guest starts as soon
    as a client is connected, so nothing is lost; otherwise call ``.resume()`` yourself. Then
    ``.wait(timeout)`` for the firmware status, and ``.stop()`` (or leave the ``with`` block).
    Give ``model`` instead of ``elf`` to build (or reuse) the model application for the board.
    """
    if elf is None:
        if model is None:
            raise ValueError("start() needs an elf image or a model to build one")
        elf = build_image(board, model)
    return Emulation(board, Path(elf), args, icount, start_timeout, auto_resume)


def _read_uart(ser: object, sink: Callable[[bytes], None], stop: threading.Event) -> None:
    import serial

    while not stop.is_set():
        try:
            # Asking for more than has arrived raises on socket:// and drops what was read.
            data = ser.read(ser.in_waiting or 1)  # type: ignore[attr-defined]
        except serial.SerialException:
            return  # QEMU closed the socket: it has exited
        if data:
            sink(data)


def run_renode(board: str, elf: str | os.PathLike[str], timeout: float = 30.0) -> Result:
    """Run an image for a real board on Renode (boards/<id>/renode.resc), if Renode is on PATH.

    Real-board firmware idles instead of exiting, so the status comes from the UART text:
    "status=ok" -> 0, "status=error" -> 1, a fault report -> 70, nothing -> time-out.
    """
    spec = get_board(board)
    script = spec.renode_script
    if script is None:
        raise ValueError(f"board {board!r} has no Renode description (boards/{board}/renode.resc)")
    renode = shutil.which("renode")
    if renode is None:
        raise EmulationError("renode is not on PATH (it cannot be installed from the registries)")
    elf = Path(elf)
    if not elf.is_file():
        raise FileNotFoundError(f"firmware image not found: {elf}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="microarena-renode-") as tmp:
        log = Path(tmp) / "uart.txt"
        commands = (
            f"$elf=@{elf.resolve()}; $uart_log=@{log}; include @{script}; "
            f'emulation RunFor "{timeout:.3f}"; quit'
        )
        proc = subprocess.run(
            [renode, "--disable-xwt", "--console", "--plain", "-e", commands],
            capture_output=True,
            text=True,
            timeout=timeout * 20 + 60,  # emulated seconds run slower than real ones
            check=False,
        )
        text = log.read_text(errors="replace").replace("\r", "") if log.exists() else ""
    code: int | None = None
    if FAULT_LINE.search(text):
        code = FAULT_EXIT
    elif "status=ok" in text:
        code = 0
    elif "status=error" in text:
        code = 1
    return Result(
        board=board,
        elf=str(elf),
        exit_code=code,
        uart_text=text,
        fault=_fault(text, proc.stderr, code),
        timed_out=code is None,
        wall_seconds=round(time.monotonic() - started, 3),
        qemu_stderr=proc.stderr,
    )


def run(
    board: str,
    elf: str | os.PathLike[str],
    timeout: float = 30.0,
    args: str = "",
    icount: bool = True,
    on_output: Callable[[str], None] | None = None,
) -> Result:
    """Run an image to completion (or time-out) and return what happened.

    Emulated boards run on QEMU; a real board with a Renode description runs on Renode when a
    ``renode`` executable is on PATH.
    """
    import serial

    spec = get_board(board)
    if not spec.emulated and spec.renode_script is not None and shutil.which("renode"):
        return run_renode(board, elf, timeout)

    started = time.monotonic()
    chunks: list[bytes] = []

    def sink(data: bytes) -> None:
        chunks.append(data)
        if on_output is not None:
            # The board's console, escaped: a firmware's text is untrusted.
            on_output(printable(data.decode(errors="replace").replace("\r", ""), True))

    with start(board, elf, args=args, icount=icount, auto_resume=False) as emu:
        ser = serial.serial_for_url(emu.serial_url, timeout=0.05)
        stop = threading.Event()
        reader = threading.Thread(target=_read_uart, args=(ser, sink, stop), daemon=True)
        reader.start()
        emu.resume()
        code = emu.wait(timeout)
        timed_out = code is None
        if timed_out:
            emu.kill()
        reader.join(timeout=2.0)
        stop.set()
        reader.join()
        # close() sleeps 0.3 s in pyserial's socket backend; the socket is closed by QEMU anyway.
        with contextlib.suppress(Exception):
            ser._socket.close()  # type: ignore[attr-defined]
        stderr = emu.stderr_text()
    text = b"".join(chunks).decode(errors="replace").replace("\r", "")
    return Result(
        board=board,
        elf=str(elf),
        exit_code=code,
        uart_text=text,
        fault=_fault(text, stderr, code),
        timed_out=timed_out,
        wall_seconds=round(time.monotonic() - started, 3),
        qemu_stderr=stderr,
    )


def _fault(uart: str, stderr: str, code: int | None) -> str | None:
    match = FAULT_LINE.search(uart)
    if match:
        return match.group(0).strip()
    if "Lockup" in stderr:
        return "core lock-up (QEMU): " + stderr.strip().splitlines()[0]
    if code == FAULT_EXIT:
        return "fault exit status without a fault report"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = entry.parser(
        "emulate",
        description="Run a firmware image on an emulated board (QEMU), print its UART output and "
        "exit with the firmware's status (124 on time-out, 70 on a CPU fault, 2 on usage errors).",
    )
    parser.add_argument("elf", nargs="?", help="firmware image (.elf) built for the board")
    parser.add_argument(
        "--model",
        action="append",
        help="instead of an image: build the model application for this .tflite (repeat for "
        "several; --append <model name> picks one) with PlatformIO, then run it",
    )
    parser.add_argument(
        "--board",
        default="mps2-an386",
        help="board id (default mps2-an386); emulated: " + ", ".join(emulated_boards()),
    )
    parser.add_argument(
        "--timeout", type=SECONDS, default=30.0, help="seconds, above 0 (default 30)"
    )
    parser.add_argument("--append", default="", help="arguments for the firmware (semihosting)")
    parser.add_argument(
        "--no-icount", action="store_true", help="run at host speed (ticks then vary run to run)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object, no live UART")
    opts = parser.parse_args(argv)

    def live(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    if (opts.elf is None) == (opts.model is None):
        parser.error("give a firmware image or --model (not both)")
    try:
        if opts.elf is None:
            say(f"building the image of {', '.join(opts.model)} for {opts.board} (PlatformIO)")
        elf = opts.elf if opts.elf is not None else build_image(opts.board, opts.model)
        say(f"booting QEMU ({opts.board})")
        result = run(
            opts.board,
            elf,
            timeout=opts.timeout,
            args=opts.append,
            icount=not opts.no_icount,
            on_output=None if opts.json else live,
        )
    except (ValueError, FileNotFoundError, EmulationError, BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if opts.json:
        print(json.dumps(asdict(result) | {"ok": result.ok}, indent=2))
    else:
        ticks = result.values().get("ticks", "")
        if ticks.isdigit() and not opts.no_icount:  # the model app's one timed invoke
            board = get_board(opts.board)
            print(f"\n{invoke_timing(int(ticks), board.tick_hz, board)}")
        if result.timed_out:
            print(f"\nerror: no exit after {opts.timeout:g} s: killed (hang?)", file=sys.stderr)
        elif result.fault:
            print(f"\nerror: firmware fault: {result.fault}", file=sys.stderr)
        elif result.exit_code != 0:
            print(f"\nerror: firmware exit status {result.exit_code}", file=sys.stderr)
    if result.timed_out:
        return TIMEOUT_EXIT
    if result.exit_code is None:
        return 1
    # QEMU killed by a signal (it aborts on a core lock-up): the shell's 128 + signal.
    return result.exit_code if result.exit_code >= 0 else 128 - result.exit_code
