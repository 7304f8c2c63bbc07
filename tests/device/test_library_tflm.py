"""examples/tflm_api, a TFLM-style application, as a user's PlatformIO project on QEMU: copied out
of the checkout (conftest.user_examples) with its sources unchanged, the model as TFLM's
examples hold it (model_data.cc), the library taken with custom_microarena_tflm_api = yes.
Each board's image runs once: its outputs equal the real TFLM's on the example's input, and
its RecordingMicroInterpreter report is the one host.record reads, its head the one the plan
embedded in the model gives (tests/runtime/test_tflm_api.py runs it on the host)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import oracle
from support.user_projects import pio_ready, pio_run

from host.device.tflm_text import TextReportCollector
from host.runtime import arena

pytestmark = pytest.mark.skipif(
    not (pio_ready() and shutil.which("qemu-system-arm")),
    reason="needs PlatformIO prepared by .ci/setup and QEMU",
)


@pytest.fixture(scope="session")
def tflm_project(user_examples) -> Path:
    """The example with the planned demo model as model_data.cc, written as `xxd -i` would."""
    project = user_examples / "tflm_api"
    data = (project / "model.tflite").read_bytes()
    (project / "model_data.cc").write_text(
        '#include "model_data.h"\nalignas(16) const unsigned char g_model[] = {'
        + ",".join(map(str, data))
        + f"}};\nconst unsigned int g_model_len = {len(data)};\n"
    )
    return project


@pytest.fixture(scope="session")
def tflm_expected(tflm_project) -> list[int]:
    """The real TFLM's outputs on the example's FillInput pattern."""
    interp = oracle().Interpreter.from_bytes((tflm_project / "model.tflite").read_bytes())
    shape = tuple(int(n) for n in interp.get_input_details(0)["shape"])
    count = int(np.prod(shape))
    pattern = np.array([(i * 37 + 11) % 256 - 128 for i in range(count)], dtype=np.int8)
    interp.set_input(pattern.reshape(shape), 0)
    interp.invoke()
    return np.array(interp.get_output(0)).reshape(-1).tolist()


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_tflm_example_runs_on_the_board(tflm_project, tflm_expected, board):
    out = pio_run(tflm_project, "-e", board, "-t", "upload")
    assert "~~~ALL TESTS PASSED~~~" in out
    got = [int(v) for v in re.findall(r"^output \d+ (-?\d+)\r?$", out, re.M)]
    assert got == tflm_expected and len(got) == 4
    # newlib-nano's vsnprintf (MicroPrintf's) prints no %f: see docs/migrate_from_tflm.md.
    assert re.search(r"^output dims 1 x 4 scale \S* ?zero_point -128\r?$", out, re.M)
    collector = TextReportCollector()
    for line in out.splitlines():
        collector.line(line.rstrip("\r"))
    report = collector.current
    assert report is not None and report.complete and not collector.errors
    assert report.head == arena.predict((tflm_project / "model.tflite").read_bytes())["head"]
    assert f"arena_used_bytes {report.total}" in out
