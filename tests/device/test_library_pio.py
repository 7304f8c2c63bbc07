"""examples/platformio as a user's project: copied out of the checkout (conftest.user_examples),
the runtime taken by lib_deps = symlink://<checkout> (library.json), the checkout's development
platform standing in for an installed one. Built and run once on QEMU for the Cortex-M4F
(mps2-an386) and the Cortex-M55 (mps3-an547): outputs equal the real TFLM's, the arena the
build generated is the one the runtime reports it needs and host.runtime.arena's Cortex-M
prediction, and the model it embedded is the planned one, byte for byte (its plan kept). Built
(not run) for two real boards, their sizes printed."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from support.user_projects import (
    embedded_model,
    example_outputs,
    linked_operators,
    pio_ready,
    pio_run,
    selected_operators,
)

from host.device.model_header import arena_size

pytestmark = pytest.mark.skipif(
    not (pio_ready() and shutil.which("qemu-system-arm")),
    reason="needs PlatformIO prepared by .ci/setup and QEMU",
)


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_board_runs_the_example(user_examples, tflm_outputs, board):
    project = user_examples / "platformio"
    out = pio_run(project, "-e", board, "-t", "upload")
    assert example_outputs(out) == tflm_outputs
    generated = int(re.search(r"arena_bytes=(\d+) target=microarena-cortex-m", out)[1])
    required = int(re.search(r"\[microarena\] Arena required (\d+) bytes", out)[1])
    assert generated == (required + 15) // 16 * 16
    model = (project / "model.tflite").read_bytes()
    assert generated == arena_size(model)[0]
    header = project / ".pio" / "build" / board / "microarena_model" / "microarena_model.h"
    assert embedded_model(header)[0] == model  # the plan the model carries survived the build
    elf = project / ".pio" / "build" / board / "firmware.elf"
    assert linked_operators(elf) == selected_operators(header.with_name("microarena_model_ops.h"))


@pytest.mark.parametrize("board", ["nucleo_f746zg", "nrf52840_dk"])
def test_real_board_builds(user_examples, board):
    project = user_examples / "platformio"
    pio_run(project, "-e", board)
    elf = project / ".pio" / "build" / board / "firmware.elf"
    size = subprocess.run(
        ["arm-none-eabi-size", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    print(board, size)
    assert int(size.splitlines()[1].split()[0]) > 0
