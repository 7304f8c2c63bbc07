"""examples/platformio as a user's project: copied out of the checkout, the runtime taken by
lib_deps = symlink://<checkout> (library.json), the checkout's development platform standing in
for an installed one. Built and run on QEMU for the Cortex-M4F (mps2-an386) and the Cortex-M55
(mps3-an547): outputs equal the real TFLM's, and the arena the build generated is the one the
runtime reports it needs and host.runtime.arena's Cortex-M prediction. Built (not run) for two
real boards, their sizes printed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from host.device.model_header import arena_size
from host.paths import BUILD, REPO

EXAMPLE = REPO / "examples" / "platformio"
MODEL = BUILD / "demo_int8.tflite"  # built by .ci/setup
PIO = Path(sys.executable).parent / "pio"
CORE = REPO / ".pio-core"  # prepared by .ci/setup (tools/pio_setup.py)

pytestmark = pytest.mark.skipif(
    not (PIO.exists() and CORE.is_dir() and MODEL.is_file() and shutil.which("qemu-system-arm")),
    reason="needs PlatformIO prepared by .ci/setup, QEMU and build/demo_int8.tflite",
)


@pytest.fixture(scope="session")
def pio_project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("user") / "platformio"
    shutil.copytree(EXAMPLE, folder)
    subprocess.run(
        [sys.executable, "-m", "host.plan", str(MODEL), "-o", str(folder / "model.tflite")]
        + ["--kernels", "microarena", "-q"],
        check=True,
        capture_output=True,
    )
    return folder


def _pio(project: Path, *args: str) -> str:
    env = dict(
        os.environ,
        MICROARENA_DIR=str(REPO),
        PLATFORMIO_CORE_DIR=str(CORE),
        PLATFORMIO_DISABLE_UPGRADE_CHECK="true",
    )
    done = subprocess.run(
        [str(PIO), "run", "-d", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="session")
def tflm_outputs(pio_project) -> list[bytes]:
    from tests.support.tflm_oracle import run_tflm

    run = run_tflm((pio_project / "model.tflite").read_bytes(), deterministic=True)
    return [np.ascontiguousarray(o).tobytes() for o in run.outputs]


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_board_runs_the_example(pio_project, tflm_outputs, board):
    out = _pio(pio_project, "-e", board, "-t", "upload")
    got = re.findall(r"^output (\d+) bytes=\d+ data=([0-9a-f]*)$", out, re.M)
    assert [bytes.fromhex(d) for _, d in got] == tflm_outputs
    generated = int(re.search(r"arena_bytes=(\d+) target=microarena-cortex-m", out)[1])
    required = int(re.search(r"\[microarena\] Arena required (\d+) bytes", out)[1])
    assert generated == (required + 15) // 16 * 16
    assert generated == arena_size((pio_project / "model.tflite").read_bytes())[0]


@pytest.mark.parametrize("board", ["nucleo_f746zg", "nrf52840_dk"])
def test_real_board_builds(pio_project, board):
    _pio(pio_project, "-e", board)
    elf = pio_project / ".pio" / "build" / board / "firmware.elf"
    size = subprocess.run(
        ["arm-none-eabi-size", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    print(board, size)
    assert int(size.splitlines()[1].split()[0]) > 0
