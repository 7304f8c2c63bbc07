"""The C record encoder (firmware/src/wire/report_wire.c), built with host gcc, decoded in Python.

Every report is encoded twice, by the C encoder and by the Python one (host/device/wire.py);
the decoder must give back the report that was put in, and the two byte streams must be identical.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from host.device import wire
from host.device.tflm_text import parse_text_report
from host.planning.tflm.categories import Category

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "firmware" / "src" / "wire" / "report_wire.c"
INC = ROOT / "firmware" / "include"
WARN = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("host gcc is not installed (bash .ci/setup installs it)")
    exe = tmp_path_factory.mktemp("wire") / "wire_driver"
    cmd = [
        "gcc",
        *WARN,
        "-O1",
        f"-I{INC}",
        str(SRC),
        str(Path(__file__).with_name("test_wire_driver.c")),
    ]
    subprocess.run([*cmd, "-o", str(exe)], check=True, capture_output=True, text=True)
    return exe


def run(driver: Path, spec: str) -> str:
    """The driver's exact output (line ends kept: the record uses CRLF)."""
    out = subprocess.run([str(driver)], input=spec.encode(), capture_output=True, check=True)
    return out.stdout.decode()


def random_report(rng: random.Random) -> wire.WireReport:
    ok = rng.random() < 0.7
    names = ["TfLiteEvalTensor data", "Persistent buffer data", "NodeAndRegistration struct"]
    r = wire.WireReport(
        status=0 if ok else rng.choice([1, 2, 3, 6, -5]),
        message="" if ok else rng.choice(["arena too small: needs 7584 bytes", "bad op", "é ü"]),
        bytes_needed=0 if ok else rng.randrange(1 << 32),
    )
    if ok or rng.random() < 0.5:
        r.arena_size, r.head, r.tail, r.total, r.temp_peak = (
            rng.randrange(1 << 32) for _ in range(5)
        )
    for name in rng.sample(names, rng.randrange(len(names) + 1)):
        r.categories.append(
            Category(
                name,
                rng.randrange(1 << 20),
                rng.randrange(1 << 20),
                rng.randrange(99),
                rng.choice(["allocations", "tensors", "NodeAndRegistration structs"]),
            )
        )
    for i in range(rng.randrange(200)):
        r.tensors.append(
            wire.TensorPlacement(
                rng.randrange(1 << 16),
                i,
                rng.randrange(1 << 32),
                rng.randrange(1 << 32),
                rng.choice(list(wire.REGION_NAMES.values())),
            )
        )
    if rng.random() < 0.7:
        r.cycles, r.clock_hz = rng.randrange(1 << 64), rng.randrange(1 << 32)
    if rng.random() < 0.7:
        r.output_crc, r.output_bytes = rng.randrange(1 << 32), rng.randrange(1 << 32)
    if rng.random() < 0.7:
        r.stack_used, r.stack_size, r.stack_measured = (rng.randrange(1 << 32) for _ in range(3))
    for i in range(rng.randrange(40)):
        code = rng.choice([3, 4, 9, 25, wire.CUSTOM_CODE_BASE + 2])
        r.ops.append(wire.OpTime(rng.randrange(1 << 16), i, code, rng.randrange(1 << 64)))
    if rng.random() < 0.5:
        r.info = "board=mps2-an386 model=hello_world_int8.tflite"
    return r


def spec_of(r: wire.WireReport, mode: str = "both") -> str:
    lines = [f"mode {mode}", f"status {r.status} {r.bytes_needed}"]
    if r.message:
        lines.append(f"message {r.message}")
    if r.total is not None:
        lines.append(f"arena {r.arena_size} {r.head} {r.tail} {r.total} {r.temp_peak}")
    regions = {v: k for k, v in wire.REGION_NAMES.items()}
    lines += [f"cat {c.used} {c.requested} {c.count} {c.name}|{c.unit}" for c in r.categories]
    lines += [
        f"tensor {t.subgraph} {regions[t.region]} {t.index} {t.offset} {t.bytes}" for t in r.tensors
    ]
    if r.cycles is not None:
        lines.append(f"cycles {r.cycles} {r.clock_hz}")
    if r.output_crc is not None:
        lines.append(f"output {r.output_crc} {r.output_bytes}")
    if r.stack_used is not None:
        lines.append(f"stack {r.stack_used} {r.stack_size} {r.stack_measured}")
    lines += [f"op {o.subgraph} {o.op} {o.code} {o.ticks}" for o in r.ops]
    if r.info:
        lines.append(f"info {r.info}")
    return "\n".join(lines) + "\n"


def test_crc32_matches_zlib(driver: Path) -> None:
    rng = random.Random(1)
    for n in [0, 1, 3, 31, 32, 33, 1000]:
        data = rng.randbytes(n)
        assert run(driver, f"crc {data.hex()}\n").strip() == f"{zlib.crc32(data):08x}"


def test_round_trip_random_reports(driver: Path) -> None:
    rng = random.Random(5)
    for _ in range(60):
        r = random_report(rng)
        out = run(driver, spec_of(r, "record"))
        assert out == wire.encode_record(r)  # byte-identical to the independent encoder
        events = wire.decode_stream([out.encode()])
        assert events == [r]


def test_text_lines_parse_like_tflm(driver: Path) -> None:
    rng = random.Random(9)
    for _ in range(20):
        r = random_report(rng)
        if r.total is None:
            continue
        text = parse_text_report(run(driver, spec_of(r, "text")).splitlines())
        assert (text.total, text.head, text.tail) == (r.total, r.head, r.tail)
        assert text.categories == r.categories


def test_error_report_keeps_status_and_message(driver: Path) -> None:
    r = wire.WireReport(status=3, message="arena too small: 7584 bytes needed", bytes_needed=7584)
    out = run(driver, spec_of(r))
    assert "[microarena] error 3: arena too small" in out
    (got,) = wire.decode_stream([out.encode()])
    assert isinstance(got, wire.WireReport)
    assert (got.ok, got.status_name, got.bytes_needed) == (False, "arena", 7584)
    assert got.message == r.message


def test_builds_warning_free_for_cortex_m(tmp_path: Path) -> None:
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed (bash .ci/setup installs it)")
    cmd = ["arm-none-eabi-gcc", *WARN, "-mcpu=cortex-m4", "-mthumb", "-Os", f"-I{INC}"]
    subprocess.run([*cmd, "-c", str(SRC), "-o", str(tmp_path / "w.o")], check=True)
