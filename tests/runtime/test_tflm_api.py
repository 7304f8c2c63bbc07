"""microarena/tflm.h, TFLM's application API over the runtime: examples/tflm_api/main.cc, a
TFLM-style program, compiles unchanged (host g++ and arm-none-eabi-g++, C++11 and C++17,
-Werror, no exceptions, no RTTI), runs on the host and gives the real TFLM's outputs and a
report host.record reads; tflm_api_checks.cc covers the refusals and the tensor views."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.conformance import Case, q8, single_op_model
from support.tflm_oracle import oracle

from host.device.tflm_text import TextReportCollector
from host.runtime.binding import build

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tflm_api"
FLAGS = ["-Wall", "-Wextra", "-Werror", "-fno-exceptions", "-fno-rtti"]
INCLUDES = [
    f"-I{ROOT / 'firmware' / 'compat'}",
    f"-I{ROOT / 'firmware' / 'include'}",
    f"-I{EXAMPLE}",
]
M4F = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2"]


def _input_pattern(n: int) -> np.ndarray:
    """The example's FillInput."""
    return np.array([(i * 37 + 11) % 256 - 128 for i in range(n)], dtype=np.int8)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The demo model as TFLM's examples embed it, and the two programs (C++11 and C++17)."""
    tmp = tmp_path_factory.mktemp("tflm_api")
    model = tmp / "demo_int8.tflite"
    subprocess.run(
        [sys.executable, "-m", "host.modelgen", str(model)], check=True, capture_output=True
    )
    data = model.read_bytes()
    (tmp / "model_data.cc").write_text(
        '#include "model_data.h"\nalignas(16) const unsigned char g_model[] = {'
        + ",".join(map(str, data))
        + f"}};\nconst unsigned int g_model_len = {len(data)};\n"
    )
    lib = build("host")
    out = {"model": model}
    for name, main, std in (
        ("example11", EXAMPLE / "main.cc", "c++11"),
        ("example17", EXAMPLE / "main.cc", "c++17"),
        ("checks", Path(__file__).with_name("tflm_api_checks.cc"), "c++11"),
    ):
        exe = tmp / name
        cmd = ["g++", f"-std={std}", *FLAGS, *INCLUDES, str(main),
               str(EXAMPLE / "debug_log_stdio.cc"), str(tmp / "model_data.cc"), str(lib),
               f"-Wl,-rpath,{lib.parent}", "-o", str(exe)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        out[name] = exe
    return out


def _run(exe: Path) -> str:
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("std", ["11", "17"])
def test_example_gives_tflms_outputs_and_report(built, std: str) -> None:
    text = _run(built[f"example{std}"])
    assert "~~~ALL TESTS PASSED~~~" in text
    got = [int(v) for v in re.findall(r"^output \d+ (-?\d+)$", text, re.M)]

    runtime = oracle()
    interp = runtime.Interpreter.from_bytes(built["model"].read_bytes())
    d = interp.get_input_details(0)
    shape = tuple(int(n) for n in d["shape"])
    interp.set_input(_input_pattern(int(np.prod(shape))).reshape(shape), 0)
    interp.invoke()
    want = np.array(interp.get_output(0)).reshape(-1).tolist()
    assert got == want and len(got) == 4

    collector = TextReportCollector()
    for line in text.splitlines():
        collector.line(line)
    report = collector.current
    assert report is not None and report.complete and not collector.errors
    assert report.head + report.tail == report.total
    assert f"arena_used_bytes {report.total}" in text
    assert "inputs 1 outputs 1" in text
    assert "output dims 1 x 4 scale 0.003906 zero_point -128" in text


# Loads a model into the pip TFLM in a child (its MicroPrintf writes to the process's stderr)
# and prints what it printed: the oracle for the refusal messages.
_TFLM_LOAD = """
import sys
from tflite_micro.python.tflite_micro import runtime
try:
    runtime.Interpreter.from_bytes(open(sys.argv[1], "rb").read(), arena_size=int(sys.argv[2]))
except RuntimeError:
    pass
"""


def _tflm_messages(model: Path, arena: int) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _TFLM_LOAD, str(model), str(arena)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return [line.strip() for line in proc.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tflm_refusals(built, tmp_path_factory) -> dict[str, list[str]]:
    """What the pip TFLM prints when an operator has no registration (RELU_N1_TO_1, which it
    lacks, renamed to the operator the checks leave out of the resolver) and when the arena
    is too small (the demo model in 1024 bytes, as the checks ask)."""
    lacking = tmp_path_factory.mktemp("tflm_refusals") / "relu_n1_to_1.tflite"
    relu = Case("r", "RELU_N1_TO_1", [q8((2, 8), 0.02, -5)], [q8((2, 8), 0.015, 3)])
    lacking.write_bytes(single_op_model(relu))
    missing = [m for m in _tflm_messages(lacking, 1 << 16) if "RELU_N1_TO_1" in m]
    return {
        "missing_op": [m.replace("RELU_N1_TO_1", "SOFTMAX") for m in missing],
        "arena_too_small": _tflm_messages(built["model"], 1024)[-1:],
    }


def test_refusals_and_views(built, tflm_refusals) -> None:
    text = _run(built["checks"])
    lines = [line.strip() for line in text.splitlines()]
    status = dict(re.findall(r"^(\w+) (-?\d+)$", text, re.M))
    # TFLM's statuses (kTfLiteOk 0, kTfLiteError 1) and messages, as the pip TFLM prints them.
    assert status["missing_op"] == "1"
    assert len(tflm_refusals["missing_op"]) == 2
    for message in tflm_refusals["missing_op"]:
        assert message in lines
    assert status["invoke_after_failure"] == "1" and status["used_after_failure"] == "0"
    assert status["add_first"] == "0" and status["add_twice"] == "1"
    assert "Calling AddConv2D twice is not supported (Op: #3)." in text
    assert status["add_second"] == "0" and status["add_over_size"] == "1"
    assert "Couldn't register builtin op #22, resolver size \nis too small (2)." in text
    assert status["registrations"] == "2"
    assert status["arena_too_small"] == "1"
    # The runtime says how much it has and needs where TFLM names its failing allocation; the
    # last line is TFLM's.
    (last,) = tflm_refusals["arena_too_small"]
    assert re.search(r"arena too small: has 1024 bytes.*\n" + re.escape(last), text)
    assert status["no_model"] == "1" and status["initialization_status"] == "0"
    assert status["allocate"] == "0" and status["invoke_again"] == "0"
    assert status["input_out_of_range"] == "1" and status["output_out_of_range"] == "1"
    assert "Input index 1 out of range (length is 1)" in text
    assert status["stable_views"] == "1"
    assert "input type 9 dims 1 32 32 3 bytes 3072" in text  # kTfLiteInt8, NHWC
    assert "input params 0.007812 0" in text


@pytest.mark.skipif(shutil.which("arm-none-eabi-g++") is None, reason="no arm-none-eabi-g++")
@pytest.mark.parametrize("std", ["c++11", "c++17"])
def test_example_compiles_for_cortex_m(tmp_path: Path, std: str) -> None:
    for src in (EXAMPLE / "main.cc", Path(__file__).with_name("tflm_api_checks.cc")):
        cmd = ["arm-none-eabi-g++", f"-std={std}", *M4F, *FLAGS, *INCLUDES, "-c", str(src),
               "-o", str(tmp_path / f"{src.stem}.o")]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_example_builds_unchanged_with_the_cmake_library(built, tmp_path) -> None:
    """A user switches with the library, not the code: the example copied out of the checkout,
    built by its CMakeLists.txt against microarena_tflm (add_subdirectory), prints what the
    direct build prints (whose outputs the test above holds to TFLM's)."""
    project = tmp_path / "tflm_app"
    shutil.copytree(EXAMPLE, project)
    shutil.copy(built["model"], project / "model.tflite")
    shutil.copy(built["model"].with_name("model_data.cc"), project / "model_data.cc")
    build_dir = project / "build"
    configure = ["cmake", "-S", str(project), "-B", str(build_dir), f"-DMICROARENA_DIR={ROOT}"]
    for step in (
        [*configure, f"-DMICROARENA_PYTHON={sys.executable}"],
        ["cmake", "--build", str(build_dir), "-j2"],
    ):
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    outputs = re.compile(r"^output .*$", re.M)
    got = outputs.findall(_run(build_dir / "tflm_app"))
    assert got and got == outputs.findall(_run(built["example11"]))
