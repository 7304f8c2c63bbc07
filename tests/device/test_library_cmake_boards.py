"""examples/cmake as a user's project built, not run, for two real boards (nucleo_f746zg, a
Cortex-M7; nrf52840_dk, a Cortex-M4F) with cmake/arm-none-eabi.cmake and each board's support
(support.board_sdk, as an SDK would give it): warning-free, only the model's kernels linked, the
arena the build generated the runtime's Cortex-M prediction, and the image's sizes printed. The
runs are in test_library_cmake.py (QEMU boards); these builds need no shared folder, so they
run beside them."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.user_projects import (
    board_sdk,
    cmake_build,
    cmake_header,
    embedded_model,
    linked_operators,
    selected_operators,
)

from host.device.model_header import arena_size

REAL_BOARDS = ["nucleo_f746zg", "nrf52840_dk"]

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs cmake and arm-none-eabi-gcc",
)


@pytest.mark.parametrize("board", REAL_BOARDS)
def test_example_builds_for_a_real_board(user_examples, board):
    project = user_examples / "cmake"
    build = project / f"build-{board}"
    cmake_build(project, build, *board_sdk(board, project / f"sdk-{board}", emulated=False))
    size = subprocess.run(
        ["arm-none-eabi-size", str(build / "classify")], capture_output=True, text=True, check=True
    ).stdout
    print(board, size)
    text, data, bss = (int(v) for v in size.splitlines()[1].split()[:3])
    assert text > 0 and bss > 0
    ops = build / "classify_microarena" / "microarena_model_ops.h"
    assert linked_operators(build / "classify") == selected_operators(ops)
    model = (project / "model.tflite").read_bytes()
    embedded, arena, target = embedded_model(cmake_header(build))
    assert embedded == model and target == "microarena-cortex-m"
    assert arena == arena_size(model, "cortex-m")[0]
