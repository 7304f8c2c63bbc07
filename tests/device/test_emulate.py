"""host.device.emulate on real QEMU: bring-up image on every emulated board, exit status, faults,
hangs, repeatable tick counts, the streaming start() API and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial

from host.device import emulate
from host.device.boards import BuildError, build_image, emulated_boards, get_board

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)

REPO = Path(__file__).resolve().parents[2]
QEMU_BOARDS = [
    "mps2-an386",
    "mps2-an385",
    "mps2-an385-m0plus",
    "mps2-an500",
    "mps2-an505",
    "mps3-an547",
    "lm3s6965evb",
]
CFSR_UNDEFINSTR = 1 << 16
CFSR_DIVBYZERO = 1 << 25
CFSR_PRECISERR = 1 << 9
CFSR_BFARVALID = 1 << 15


@pytest.fixture(scope="module")
def hello() -> dict[str, Path]:
    """The bring-up image of every emulated board, built once (incremental under build/pio)."""
    try:
        return {board: build_image(board, app="hello") for board in QEMU_BOARDS}
    except BuildError as exc:
        pytest.fail(str(exc))


def fault_registers(fault_line: str) -> dict[str, int]:
    return {k: int(v, 16) for k, v in (w.split("=") for w in fault_line.split() if "=" in w)}


def test_every_qemu_board_is_listed() -> None:
    assert sorted(emulated_boards()) == sorted(QEMU_BOARDS)


@pytest.mark.parametrize("board", QEMU_BOARDS)
def test_hello_runs_on_board(hello: dict[str, Path], board: str) -> None:
    result = emulate.run(board, hello[board], timeout=20)
    assert result.ok, result
    values = result.values()
    assert f"hello from {board}" in result.uart_text
    assert int(values["tick_hz"]) == get_board(board).tick_hz
    assert values["float_ok"] == "1" and values["status"] == "ok"
    assert int(values["ticks"]) > 0


def test_exit_status_is_passed_through(hello: dict[str, Path]) -> None:
    result = emulate.run("mps2-an386", hello["mps2-an386"], timeout=20, args="exit 42")
    assert result.exit_code == 42 and result.fault is None and not result.timed_out
    assert not result.ok


@pytest.mark.parametrize(
    ("board", "kind", "cfsr_bits"),
    [
        ("mps2-an386", "fault", CFSR_UNDEFINSTR),
        ("mps2-an386", "divzero", CFSR_DIVBYZERO),
        ("mps2-an386", "busfault", CFSR_PRECISERR | CFSR_BFARVALID),
        ("mps2-an385", "fault", CFSR_UNDEFINSTR),
        ("mps2-an500", "divzero", CFSR_DIVBYZERO),
        ("mps2-an505", "fault", CFSR_UNDEFINSTR),
        ("mps3-an547", "busfault", CFSR_PRECISERR | CFSR_BFARVALID),
        ("lm3s6965evb", "fault", CFSR_UNDEFINSTR),
    ],
)
def test_fault_is_reported(hello: dict[str, Path], board: str, kind: str, cfsr_bits: int) -> None:
    started = time.monotonic()
    result = emulate.run(board, hello[board], timeout=20, args=kind)
    assert time.monotonic() - started < 10
    assert result.exit_code == emulate.FAULT_EXIT and not result.timed_out
    assert result.fault is not None and result.fault.startswith("*** FAULT")
    regs = fault_registers(result.fault)
    assert regs["cfsr"] & cfsr_bits == cfsr_bits, result.fault
    if kind == "busfault":
        assert regs["bfar"] == 0xF0000000


def test_hang_is_reported_as_timeout(hello: dict[str, Path]) -> None:
    started = time.monotonic()
    result = emulate.run("mps2-an386", hello["mps2-an386"], timeout=1.0, args="hang")
    assert time.monotonic() - started < 5
    assert result.timed_out and result.exit_code is None and not result.ok
    assert "hanging" in result.uart_text


def test_icount_makes_ticks_repeatable(hello: dict[str, Path]) -> None:
    ticks = {emulate.run("mps2-an386", hello["mps2-an386"]).values()["ticks"] for _ in range(3)}
    assert len(ticks) == 1


def test_start_resumes_when_a_reader_connects(hello: dict[str, Path]) -> None:
    with emulate.start("mps2-an386", hello["mps2-an386"]) as emu:
        assert emu.url == emu.serial_url == f"socket://127.0.0.1:{emu.port}"
        port = serial.serial_for_url(emu.url, timeout=0.05)
        data = b""
        deadline = time.monotonic() + 10
        while b"status=" not in data and time.monotonic() < deadline:
            data += port.read(port.in_waiting or 1)
        assert emu.wait(10) == 0
    assert data.startswith(b"hello from mps2-an386")  # nothing lost before the reader came


def test_start_manual_resume_keeps_guest_paused(hello: dict[str, Path]) -> None:
    with emulate.start("mps2-an386", hello["mps2-an386"], auto_resume=False) as emu:
        assert emu.proc.poll() is None
        time.sleep(0.3)
        assert emu.proc.poll() is None  # still paused: it would have exited in ~50 ms
        port = serial.serial_for_url(emu.url, timeout=0.05)
        emu.resume()
        assert emu.wait(10) == 0
        port.close()


def test_image_for_another_board_is_a_lockup_not_a_hang(hello: dict[str, Path]) -> None:
    """An image linked at 0x10000000 (AN505) has no vector table where the AN386 boots."""
    started = time.monotonic()
    result = emulate.run("mps2-an386", hello["mps2-an505"], timeout=20)
    assert time.monotonic() - started < 10 and not result.timed_out
    assert result.fault is not None and "lock-up" in result.fault and not result.ok


def test_not_an_elf_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.elf"
    junk.write_bytes(b"this is not firmware")
    with pytest.raises(ValueError, match="not an ELF image"):
        emulate.run("mps2-an386", junk)


def test_real_board_and_unknown_board_are_refused(hello: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="real board"):
        emulate.run("nrf52840_dk", hello["mps2-an386"])
    with pytest.raises(ValueError, match="unknown board"):
        emulate.run("mps2-an999", hello["mps2-an386"])
    with pytest.raises(FileNotFoundError):
        emulate.run("mps2-an386", REPO / "no-such.elf")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "host.emulate", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )


def test_cli(hello: dict[str, Path]) -> None:
    elf = str(hello["mps2-an385"])
    ok = run_cli("--board", "mps2-an385", elf)
    assert ok.returncode == 0 and "hello from mps2-an385" in ok.stdout
    as_json = json.loads(run_cli("--board", "mps2-an385", "--json", elf).stdout)
    assert as_json["ok"] and as_json["exit_code"] == 0
    hang = run_cli("--board", "mps2-an385", "--timeout", "0.5", "--append", "hang", elf)
    assert hang.returncode == emulate.TIMEOUT_EXIT and "no exit after" in hang.stderr
    fault = run_cli("--board", "mps2-an385", "--append", "fault", elf)
    assert fault.returncode == emulate.FAULT_EXIT and "firmware fault" in fault.stderr
    bad = run_cli("--board", "nope", elf)
    assert bad.returncode == 2 and "unknown board" in bad.stderr and "Traceback" not in bad.stderr
    neither = run_cli("--board", "mps2-an386")
    assert neither.returncode == 2 and "give a firmware image or --model" in neither.stderr
    missing = run_cli("missing.elf")
    assert missing.returncode == 2 and "not found" in missing.stderr


RENODE_UARTS = {"nucleo_f746zg": "usart3", "nrf52840_dk": "uart0"}  # the boards' console UARTs


def test_renode_descriptions_log_the_console_uart() -> None:
    for board, uart in RENODE_UARTS.items():
        spec = get_board(board)
        assert not spec.emulated and spec.renode_script is not None
        script = spec.renode_script.read_text()
        assert f"{uart} CreateFileBackend $uart_log" in script
        assert "LoadPlatformDescription $ORIGIN/renode.repl" in script
        assert "sysbus LoadELF $elf" in script


@pytest.mark.skipif(shutil.which("renode") is not None, reason="renode is installed")
def test_renode_missing_is_a_clear_error() -> None:
    elf = build_image("nucleo_f746zg", app="hello")
    with pytest.raises(emulate.EmulationError, match="renode is not on PATH"):
        emulate.run_renode("nucleo_f746zg", elf)
    with pytest.raises(ValueError, match="real board"):
        emulate.run("nucleo_f746zg", elf)  # without Renode a real board cannot run


@pytest.mark.skipif(
    shutil.which("renode") is None,
    reason="Renode is not installed (not in Debian, PyPI or npm; it cannot be built offline)",
)
@pytest.mark.parametrize("board", sorted(RENODE_UARTS))
def test_real_board_runs_on_renode(board: str) -> None:
    result = emulate.run(board, build_image(board, app="hello"), timeout=5)
    assert result.ok and f"hello from {board}" in result.uart_text, result


def test_qemu_tick_length_gives_the_same_instruction_count(hello: dict[str, Path]) -> None:
    """Same CPU and flags (M3, soft float) and the same loop on two boards: ticks times each
    board's qemu_tick_ns must give the same instruction count, which checks lm3s6965evb's
    measured 80 ns per tick against the MPS2 board's exact 40 ns (25 MHz)."""
    counts = {}
    for board in ("mps2-an385", "lm3s6965evb"):
        ticks = int(emulate.run(board, hello[board]).values()["ticks"])
        counts[board] = ticks * get_board(board).qemu_tick_ns
    assert abs(counts["lm3s6965evb"] - counts["mps2-an385"]) <= 0.01 * counts["mps2-an385"]
