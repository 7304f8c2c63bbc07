"""The recorder CLI over a real pyserial `socket://` connection to a board stand-in.

The stand-in is a TCP server thread on 127.0.0.1 that sends scripted bytes: it exists to inject
faults (noise, damage, truncation, resets, silence) that a real board cannot be made to produce
on demand. The report bytes themselves come from host/device/wire.py's encoder, which
tests/device/test_wire_c.py checks is byte-identical to the firmware's C encoder.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.serial_server import LoopbackPort

from host.device import record, wire
from host.paths import SHARED_MODELS
from host.planning.tflm.categories import Category

ROOT = Path(__file__).resolve().parents[2]

CATS = [
    Category("TfLiteEvalTensor data", 240, 240, 10, "allocations"),
    Category("NodeAndRegistration struct", 192, 192, 3, "NodeAndRegistration structs"),
]


def report(**kw: object) -> wire.WireReport:
    base: dict = dict(
        status=0,
        arena_size=4096,
        head=32,
        tail=1472,
        total=1504,
        temp_peak=96,
        cycles=123456,
        clock_hz=25_000_000,
        output_crc=0xDEADBEEF,
        output_bytes=4,
        info="board=fake",
        categories=list(CATS),
        tensors=[wire.TensorPlacement(0, i, 16 * i, 16, "head") for i in range(4)],
    )
    base.update(kw)
    return wire.WireReport(**base)


def text_of(r: wire.WireReport) -> str:
    """The TFLM-style lines the firmware prints before the record."""
    lines = [
        f"[RecordingMicroAllocator] Arena allocation {k} {getattr(r, k)} bytes"
        for k in ("total", "head", "tail")
    ]
    lines += [
        f"[RecordingMicroAllocator] '{c.name}' used {c.used} bytes with alignment overhead "
        f"(requested {c.requested} bytes for {c.count} {c.unit})"
        for c in r.categories
    ]
    return "".join(line + "\r\n" for line in lines)


def board_output(r: wire.WireReport) -> bytes:
    return (text_of(r) + wire.encode_record(r)).encode()


class FakeBoard:
    """Serves one connection: waits until pyserial has opened the port (open() discards what
    is already there), sends the script (bytes, or a float = pause), then closes or stays
    silent until stopped."""

    def __init__(self, script: list[bytes | float], close: bool = True) -> None:
        self.script, self.close = script, close
        self.stop = threading.Event()
        self.port = LoopbackPort(self._serve)
        self.url, self.connected = self.port.url, self.port.connected

    def _serve(self, conn: socket.socket) -> None:
        for item in self.script:
            if isinstance(item, float):
                time.sleep(item)
                continue
            try:
                conn.sendall(item)
            except OSError:  # the recorder has what it needs and hung up
                return
        if not self.close:
            self.stop.wait(30)

    def __enter__(self) -> FakeBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.port.close()
        self.port.thread.join(5)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = record.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(capsys, *args, "--json")
    return code, json.loads(out), err


def test_clean_report_after_boot_noise(capsys: pytest.CaptureFixture[str]) -> None:
    r = report()
    script = [b"\x00\xffboot ROM v1\r\nmicroarena ready\r\n", board_output(r)]
    with FakeBoard(script, close=False) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url, "--timeout", "10")
    assert code == 0
    assert doc["report"] == r.to_dict()
    assert doc["text_report"]["total"] == r.total
    assert doc["rejected"] == [] and doc["warnings"] == []


def test_table_shows_regions_and_categories(capsys: pytest.CaptureFixture[str]) -> None:
    r = report()
    with FakeBoard([board_output(r)]) as fb:
        code, out, _ = run_cli(capsys, "--port", fb.url)
    assert code == 0
    for name, value in [("head", r.head), ("tail", r.tail), ("total", r.total)]:
        assert any(line.split()[:2] == [name, str(value)] for line in out.splitlines())
    assert "TfLiteEvalTensor data" in out and "cycles per invoke: 123456" in out


def test_noise_inside_the_report_stream(capsys: pytest.CaptureFixture[str]) -> None:
    r = report()
    lines = board_output(r).split(b"\n")
    noisy: list[bytes | float] = []
    for i, line in enumerate(lines):
        noisy.append(line + (b"\n" if i < len(lines) - 1 else b""))
        noisy.append(b"\x1b[0m\xfe\x07 interrupt log line\r\n")
        if i % 5 == 0:
            noisy.append(0.01)  # arrive in several reads
    with FakeBoard(noisy) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url)
    assert code == 0 and doc["report"] == r.to_dict()


def test_corrupted_record_then_clean_resend(capsys: pytest.CaptureFixture[str]) -> None:
    r = report()
    bad = bytearray(wire.encode_record(r).encode())
    pos = bad.index(b"@MA1 D 0001 ") + 20
    bad[pos] = ord("0") if bad[pos] != ord("0") else ord("1")  # one hex digit changed
    with FakeBoard([bytes(bad), b"boot\r\n", board_output(r)]) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url)
    assert code == 0 and doc["report"] == r.to_dict()
    assert len(doc["rejected"]) == 1 and "CRC mismatch" in doc["rejected"][0]


@pytest.mark.parametrize("damage", ["flip", "drop"])
def test_damaged_only_record_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, damage: str
) -> None:
    data = bytearray(board_output(report()))
    at = data.index(b"@MA1 D 0002 ") + 15
    if damage == "flip":
        data[at] ^= 0x04
    else:
        del data[at]
    save = tmp_path / "bad.log"
    with FakeBoard([bytes(data)]) as fb:
        code, out, err = run_cli(capsys, "--port", fb.url, "--save", str(save))
    assert code == record.EXIT_NO_REPORT and out == ""
    assert "rejected" in err and "Traceback" not in err
    # The evidence is kept: the bytes as received and why nothing was accepted.
    assert save.read_bytes() == bytes(data)
    doc = json.loads((tmp_path / "bad.log.json").read_text())
    assert doc["report"] is None and doc["rejected"] and "rejected" in doc["error"]


def test_truncated_report_then_port_closes(capsys: pytest.CaptureFixture[str]) -> None:
    data = board_output(report(tensors=[]))
    with FakeBoard([data[: len(data) - 60]]) as fb:
        code, _, err = run_cli(capsys, "--port", fb.url, "--timeout", "10")
    assert code == record.EXIT_NO_REPORT
    assert "truncated" in err


def test_reset_mid_report_restarts(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = report(head=48), report(head=64, total=1536)
    a = board_output(first)
    script = [a[: len(a) * 2 // 3], b"\r\n\x00boot ROM v1\r\n", board_output(second)]
    with FakeBoard(script) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url)
    assert code == 0 and doc["report"] == second.to_dict()
    assert doc["text_report"]["head"] == 64  # the text of the report before the reset is dropped
    assert len(doc["rejected"]) == 1


def test_silent_port_times_out_quickly(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeBoard([], close=False) as fb:
        t0 = time.monotonic()
        code, _, err = run_cli(capsys, "--port", fb.url, "--timeout", "0.5")
    assert code == record.EXIT_NO_REPORT
    assert "no valid report within 0.5 s" in err and "nothing was received" in err
    assert time.monotonic() - t0 < 3


def test_board_failure_exits_nonzero(capsys: pytest.CaptureFixture[str]) -> None:
    r = wire.WireReport(status=3, message="arena too small: 7584 bytes needed", bytes_needed=7584)
    data = b"[microarena] error 3: arena too small\r\n" + wire.encode_record(r).encode()
    with FakeBoard([data]) as fb:
        code, out, err = run_cli(capsys, "--port", fb.url)
    assert code == record.EXIT_MISMATCH
    assert "status: arena: arena too small" in out and "bytes needed: 7584" in out
    assert "board reported failure" in err


def test_text_that_disagrees_with_record_is_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    r = report()
    data = board_output(r).replace(b"head 32 bytes", b"head 38 bytes")
    with FakeBoard([data]) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url)
    assert code == 0 and doc["report"]["head"] == 32  # the checked record wins
    assert "head: text 38, record 32" in doc["warnings"][0]


def test_save_then_replay_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r = report()
    sent = b"boot\r\n" + board_output(r)
    save = tmp_path / "run.log"
    with FakeBoard([sent]) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url, "--save", str(save))
    assert code == 0
    assert save.read_bytes() == sent
    assert json.loads((tmp_path / "run.log.json").read_text())["report"] == doc["report"]
    code, again, _ = run_json(capsys, "--log", str(save))
    assert code == 0 and again["report"] == doc["report"]


def test_text_only_report_from_stock_tflm(capsys: pytest.CaptureFixture[str]) -> None:
    r = report()
    with FakeBoard([b"boot\r\n", text_of(r).encode()], close=False) as fb:
        code, doc, _ = run_json(capsys, "--port", fb.url, "--text-only", "--timeout", "5")
    assert code == 0 and doc["report"] is None
    assert (doc["text_report"]["head"], doc["text_report"]["tail"]) == (r.head, r.tail)
    # Without --text-only an unchecked text report is not enough.
    with FakeBoard([text_of(r).encode()]) as fb:
        code, _, err = run_cli(capsys, "--port", fb.url)
    assert code == record.EXIT_NO_REPORT and "without a valid report" in err


def test_plan_comparison(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = SHARED_MODELS / "tflm_hello_world_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is absent")
    log = tmp_path / "r.log"
    try:
        from host.runtime.arena import predict_model

        pred = predict_model(str(model))
    except (ImportError, ValueError, RuntimeError) as e:
        log.write_bytes(board_output(report()))
        code, _, err = run_cli(capsys, "--log", str(log), "--plan", str(model))
        assert code in (record.EXIT_USAGE, record.EXIT_NO_REPORT)
        assert str(e).splitlines()[0] in err
        pytest.skip(f"the planner cannot predict yet ({e}); only that error path was checked")
    placed = [
        wire.TensorPlacement(0, int(k), int(v), 16, "head")
        for k, v in pred["tensor_offsets"].items()
    ]
    fields = {k: pred[k] for k in ("head", "tail", "total")} | {"temp_peak": pred["temp_peak"]}
    log.write_bytes(board_output(report(**fields, tensors=placed)))
    code, doc, _ = run_json(capsys, "--log", str(log), "--plan", str(model))
    assert code == 0 and doc["prediction_differences"] == []
    code, out, _ = run_cli(capsys, "--log", str(log), "--plan", str(model))
    assert code == 0 and "predicted" in out
    # Each kind of departure is caught: head, a tensor's offset.
    for bad in ({"head": pred["head"] + 16}, {"tensors": placed[:-1]}):
        log.write_bytes(board_output(report(**(fields | {"tensors": placed} | bad))))
        code, doc, err = run_json(capsys, "--log", str(log), "--plan", str(model))
        assert code == record.EXIT_MISMATCH and len(doc["prediction_differences"]) == 1
        assert "differs from the prediction" in err


def test_plan_differences_are_exact() -> None:
    """Head, tail, total, temporary and offsets must all equal the (exact) prediction."""
    r = report(head=32, tail=600, total=632, temp_peak=200)
    r.tensors = [
        wire.TensorPlacement(0, 0, 16, 16, "head"),
        wire.TensorPlacement(1, 1, 0, 8, "head"),
    ]
    exact = {"head": 32, "tail": 600, "total": 632, "temp_peak": 200, "kernel_sizes": "exact"}
    assert record.plan_differences(r, exact) == []
    assert record.plan_differences(r, exact | {"tail": 664}) == [
        "tail: recorded 600, predicted 664"
    ]
    assert record.plan_differences(r, exact | {"temp_peak": 199}) == [
        "temp_peak: recorded 200, predicted 199"
    ]
    assert record.plan_differences(r, exact | {"head": 48}) == ["head: recorded 32, predicted 48"]
    # Tensor 1 of subgraph 1 is the planner's tensor 3 when subgraph 0 has 2 tensors.
    assert record.plan_differences(r, exact | {"tensor_offsets": {0: 16, 3: 0}}, [2, 2]) == []
    (why,) = record.plan_differences(r, exact | {"tensor_offsets": {0: 16, 3: 32}}, [2, 2])
    assert why == "tensor offsets: 1 differ (first: tensor 3 recorded 0, predicted 32)"
    assert record.plan_differences(r, {"abi": "x"}) == ["the prediction has no head, tail or total"]


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "--log", str(tmp_path / "missing.log"))
    assert code == record.EXIT_USAGE and "cannot read" in err
    code, _, err = run_cli(capsys, "--board", "mps2-an386")
    assert code == record.EXIT_USAGE and "--model" in err
    code, _, err = run_cli(capsys, "--port", "socket://127.0.0.1:1", "--timeout", "1")
    assert code == record.EXIT_NO_REPORT and "cannot open" in err
    log = tmp_path / "r.log"
    log.write_bytes(board_output(report()))
    code, _, err = run_cli(capsys, "--log", str(log), "--plan")
    assert code == record.EXIT_USAGE and "--plan needs a model" in err
    code, _, err = run_cli(capsys, "--port", "socket://127.0.0.1:1", "--arena", "4096")
    assert code == record.EXIT_USAGE and "--arena needs --board and --upload" in err
    code, _, err = run_cli(capsys, "--log", str(log), "--profile")
    assert code == record.EXIT_USAGE and "--profile needs --board and --model" in err
    for bad in ([], ["--port", "x", "--timeout", "-1"], ["--port", "x", "--baud", "fast"]):
        with pytest.raises(SystemExit) as e:
            record.main(bad)  # argparse explains
        assert e.value.code == 2


def test_operator_profile_in_a_record(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A record with per-operator ticks (a profiling firmware): named operators, slowest
    first, shares of subgraph 0 (a nested subgraph's operator has none); from a log the unit is
    cycles (hardware)."""
    ops = [(0, 0, 9, 100), (0, 1, 3, 300), (1, 0, wire.CUSTOM_CODE_BASE + 1, 50)]
    log = tmp_path / "r.log"
    log.write_bytes(board_output(report(ops=[wire.OpTime(*o) for o in ops])))
    code, doc, _ = run_json(capsys, "--log", str(log))
    assert code == record.EXIT_OK
    assert doc["profile"] == [
        {"subgraph": 0, "op": 1, "name": "CONV_2D", "cycles": 300, "share": 0.75},
        {"subgraph": 0, "op": 0, "name": "FULLY_CONNECTED", "cycles": 100, "share": 0.25},
        {"subgraph": 1, "op": 0, "name": "CUSTOM", "cycles": 50, "share": None},
    ]
    code, out, _ = run_cli(capsys, "--log", str(log))
    rows = out[out.index("per operator") :].splitlines()[2:]
    assert [r.split() for r in rows] == [
        ["0", "1", "CONV_2D", "300", "75.0%"],
        ["0", "0", "FULLY_CONNECTED", "100", "25.0%"],
        ["1", "0", "CUSTOM", "50"],
    ]


def test_list_ports_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--list-ports", "--json")
    assert code == 0 and isinstance(json.loads(out), list)


def test_ctrl_c_exits_130_without_traceback() -> None:
    with FakeBoard([], close=False) as fb:
        proc = subprocess.Popen(
            [sys.executable, "-m", "host.record", "--port", fb.url, "--timeout", "60"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # A shell's background job ignores SIGINT and Python then keeps ignoring it: give
            # the child Ctrl-C's default, as in a terminal.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert fb.connected.wait(20), "the recorder never connected"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err


def test_emulated_timing_is_instructions_with_an_estimate() -> None:
    """Under QEMU SysTick counts guest time (-icount: 1 instruction per ns): the table says
    instructions and labels any time an estimate; a port (hardware) keeps cycles (issue 12)."""
    from host.device.boards import get_board

    board = get_board("mps2-an386")
    r = report()
    rec = record.Recording("qemu")
    rec.report = r
    text = record.format_table(rec, None, board)
    instructions = round(r.cycles * board.qemu_tick_ns)
    assert f"instructions per invoke: {instructions} (QEMU -icount: {r.cycles} SysTick" in text
    assert f"estimated {instructions * 1000 / board.tick_hz:.3f} ms at {board.tick_hz} Hz" in text
    assert "cycles per invoke" not in text and "not measured hardware time" in text
    assert "cycles per invoke: 123456" in record.format_table(rec, None, None)
    # --json says the same in fields: instructions and an estimate, or cycles and time.
    timing = record.to_json(rec, None, None, board)["timing"]
    assert timing["instructions"] == instructions and timing["ticks"] == r.cycles
    assert timing["estimated_ms"] == instructions * 1000 / board.tick_hz
    assert "cycles" not in timing
    timing = record.to_json(rec, None, None)["timing"]
    assert timing["cycles"] == r.cycles and timing["ms"] == r.cycles * 1000 / r.clock_hz
    assert "instructions" not in timing


HOSTILE = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;aGk=\x07\u202eevil\r\nstatus: ok\x9b"


def test_board_text_never_reaches_the_terminal_raw(capsys: pytest.CaptureFixture[str]) -> None:
    """A board (or socket peer) is untrusted (issue 26, class 6): control characters in a
    CRC-valid record's message, info and category names, or in the TFLM text report's
    category names, are escaped, so they cannot clear the screen, set the title, write the
    clipboard (OSC 52), reorder text or forge report lines."""
    cats = [Category("evil" + HOSTILE, 16, 16, 1, "allocations" + HOSTILE)]
    r = report(status=3, message="failed" + HOSTILE, info="board=" + HOSTILE, categories=cats)
    with FakeBoard([board_output(r)]) as board:
        code, out, err = run_cli(capsys, "--port", board.url, "--timeout", "10")
    shown = out + err
    assert "evil" in shown and "failed" in shown
    controls = [c for c in shown if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0)]
    assert not controls, f"raw control characters reached the terminal: {controls!r}"
    assert "\u202e" not in shown
    assert "\\x1b]52;c;aGk=" in shown  # the escape is visible, as text
    assert not any(line.startswith("status: ok") for line in shown.splitlines())
