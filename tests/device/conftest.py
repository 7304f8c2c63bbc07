"""Fixtures shared by the user-project tests (test_library_cmake.py, test_library_pio.py,
test_library_tflm.py): the examples copied out of the checkout once, with the demo model planned
once, and the real TFLM's outputs for it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from host.paths import BUILD, REPO

DEMO = BUILD / "demo_int8.tflite"  # built by .ci/setup


@pytest.fixture(scope="session")
def user_examples(tmp_path_factory) -> Path:
    """examples/ as a user has them: a folder outside the checkout, each example with the demo
    model as model.tflite, planned here once (host.plan --kernels microarena). Every build keeps
    an embedded plan, so each build only predicts the arena, and the tests check that the model
    the build embedded is this one, byte for byte."""
    if not DEMO.is_file():
        pytest.skip(f"{DEMO} is absent (bash .ci/setup builds it)")
    folder = tmp_path_factory.mktemp("user")
    planned = folder / "model.tflite"
    subprocess.run(
        [sys.executable, "-m", "host.plan", str(DEMO), "-o", str(planned)]
        + ["--kernels", "microarena", "-q"],
        check=True,
        capture_output=True,
    )
    for name in ("cmake", "platformio", "tflm_api"):
        shutil.copytree(REPO / "examples" / name, folder / name)
        shutil.copy(planned, folder / name / "model.tflite")
    return folder


@pytest.fixture(scope="session")
def tflm_outputs(user_examples) -> list[bytes]:
    """The real TFLM's outputs for the planned model on the firmware's deterministic input."""
    from support.tflm_oracle import run_tflm

    run = run_tflm((user_examples / "model.tflite").read_bytes(), deterministic=True)
    return [np.ascontiguousarray(o).tobytes() for o in run.outputs]
