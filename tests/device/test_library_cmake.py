"""examples/cmake as a user's project: copied out of the checkout, built with CMake against the
runtime by path (add_subdirectory) for the host and, with cmake/arm-none-eabi.cmake, for a
Cortex-M4F (test_library_pio.py runs the PlatformIO example on the M4F and the M55). The host
build runs: its outputs must equal the real TFLM's on the same input and the arena the build
generated must be the one the runtime reports it needs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from host.device.model_header import arena_size
from host.paths import BUILD, REPO

EXAMPLE = REPO / "examples" / "cmake"
MODEL = BUILD / "demo_int8.tflite"  # built by .ci/setup
CORES = {
    "m4": "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16",
}

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or not MODEL.is_file(),
    reason="needs cmake and build/demo_int8.tflite (.ci/setup)",
)


def _build(project: Path, build: Path, *options: str) -> None:
    cmd = ["cmake", "-S", str(project), "-B", str(build), f"-DMICROARENA_DIR={REPO}"]
    cmd += [f"-DMICROARENA_PYTHON={sys.executable}", *options]
    for step in (cmd, ["cmake", "--build", str(build), "-j2"]):
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "warning" not in done.stdout + done.stderr


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Path:
    """The example as a user has it: its own folder outside the checkout, with a model."""
    folder = tmp_path_factory.mktemp("user") / "cmake"
    shutil.copytree(EXAMPLE, folder)
    # Planned once here: the builds keep an embedded plan (the generator's default), so each
    # build only predicts the arena.
    subprocess.run(
        [sys.executable, "-m", "host.plan", str(MODEL), "-o", str(folder / "model.tflite")]
        + ["--kernels", "microarena", "-q"],
        check=True,
        capture_output=True,
    )
    return folder


@pytest.fixture(scope="session")
def host_run(project) -> str:
    build = project / "build-host"
    _build(project, build)
    return subprocess.run(
        [str(build / "classify")], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_host_outputs_equal_tflm(host_run):
    from tests.support.tflm_oracle import run_tflm

    expected = run_tflm(MODEL.read_bytes(), deterministic=True).outputs
    got = re.findall(r"^output (\d+) bytes=\d+ data=([0-9a-f]*)$", host_run, re.M)
    assert [int(i) for i, _ in got] == list(range(len(expected)))
    for (_, data), want in zip(got, expected, strict=True):
        assert bytes.fromhex(data) == np.ascontiguousarray(want).tobytes()


def test_host_arena_is_the_one_the_runtime_needs(host_run):
    generated = int(re.search(r"arena_bytes=(\d+) target=microarena-host", host_run)[1])
    required = int(re.search(r"\[microarena\] Arena required (\d+) bytes", host_run)[1])
    assert generated == (required + 15) // 16 * 16


@pytest.mark.parametrize("core", sorted(CORES))
def test_cortex_m_build(project, core):
    build = project / f"build-{core}"
    _build(
        project,
        build,
        f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'arm-none-eabi.cmake'}",
        f"-DMICROARENA_CPU_FLAGS={CORES[core]}",
        "-DCMAKE_EXE_LINKER_FLAGS=--specs=nosys.specs",
    )
    header = (build / "classify_microarena" / "microarena_model.h").read_text()
    assert '#define MA_MODEL_TARGET "microarena-cortex-m"' in header
    # The arena is host.runtime.arena's prediction for the array the header holds.
    array = re.search(r"ma_model_data\[\d+\] = \{(.*?)\};", header, re.S)[1]
    data = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", array))
    assert data[4:8] == b"TFL3"
    arena = int(re.search(r"MA_MODEL_ARENA_BYTES (\d+)u", header)[1])
    assert arena == arena_size(data, "cortex-m")[0]
    size = subprocess.run(
        ["arm-none-eabi-size", str(build / "classify")], capture_output=True, text=True, check=True
    ).stdout
    print(core, size)
