"""examples/cmake as a user's project: copied out of the checkout (conftest.user_examples), built
with CMake against the runtime by path (add_subdirectory) for the host, and with
cmake/arm-none-eabi.cmake for QEMU's mps2-an386 (Cortex-M4F) and mps3-an547 (Cortex-M55),
linked with the board support a board's SDK would give (support.board_sdk). Each build runs
once: outputs equal the real TFLM's, the arena the build generated is the one the runtime
reports it needs (and on the boards host.runtime.arena's Cortex-M prediction), and the model it
embedded is the planned model, byte for byte (its plan kept)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.user_projects import (
    board_sdk,
    cmake_build,
    cmake_header,
    embedded_model,
    example_outputs,
    linked_operators,
    selected_operators,
)

from host.device import emulate
from host.device.model_header import arena_size
from host.paths import REPO

BOARDS = ["mps2-an386", "mps3-an547"]

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")


def _check_run(text: str, header: Path, model: bytes, tflm_outputs: list[bytes]) -> int:
    """Everything one run shows, against the header the build generated; returns its arena."""
    assert example_outputs(text) == tflm_outputs
    embedded, arena, target = embedded_model(header)
    assert embedded == model  # the plan the model carries survived the build
    assert f"arena_bytes={arena} target={target}" in text
    required = int(re.search(r"\[microarena\] Arena required (\d+) bytes", text)[1])
    assert arena == (required + 15) // 16 * 16
    return arena


def test_host_build_runs(user_examples, tflm_outputs):
    project = user_examples / "cmake"
    build = project / "build-host"
    cmake_build(project, build)
    text = subprocess.run(
        [str(build / "classify")], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    model = (project / "model.tflite").read_bytes()
    _check_run(text, cmake_header(build), model, tflm_outputs)
    assert "target=microarena-host" in text


@pytest.mark.parametrize("board", BOARDS)
def test_board_build_runs_on_qemu(user_examples, tflm_outputs, board):
    project = user_examples / "cmake"
    build = project / f"build-{board}"
    cmake_build(project, build, *board_sdk(board, project / f"sdk-{board}"))
    size = subprocess.run(
        ["arm-none-eabi-size", str(build / "classify")], capture_output=True, text=True, check=True
    ).stdout
    print(board, size)
    ops = build / "classify_microarena" / "microarena_model_ops.h"
    assert linked_operators(build / "classify") == selected_operators(ops)
    run = emulate.run(board, build / "classify", timeout=60)
    assert run.exit_code == 0 and run.fault is None, run.uart_text
    model = (project / "model.tflite").read_bytes()
    arena = _check_run(run.uart_text, cmake_header(build), model, tflm_outputs)
    assert "target=microarena-cortex-m" in run.uart_text
    assert arena == arena_size(model, "cortex-m")[0]


def _makefile_recipe() -> str:
    """docs/library.md's plain-Makefile recipe, as a user copies it."""
    doc = (REPO / "docs" / "library.md").read_text()
    section = doc.split("## Plain Makefile", 1)[1]
    block = re.search(r"\n\n((?:    .*\n)+)", section)[1]
    return "".join(line[4:] + "\n" for line in block.splitlines())


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_plain_makefile_build_runs(user_examples, tflm_outputs, tmp_path):
    """microarena.mk: the recipe of docs/library.md beside the example's main.c, built by make
    (at -O0: the recipe's CFLAGS, which only decide compile time here) and run."""
    project = tmp_path / "make"
    project.mkdir()
    for name in ("main.c", "model.tflite"):
        shutil.copy(user_examples / "cmake" / name, project / name)
    recipe = _makefile_recipe().replace("path/to/microarena", str(REPO))
    assert "include " in recipe and "\t$(CC)" in recipe
    (project / "Makefile").write_text(recipe)
    done = subprocess.run(
        ["make", "-C", str(project), f"MICROARENA_PYTHON={sys.executable}", "CFLAGS=-O0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "warning" not in done.stdout + done.stderr
    text = subprocess.run(
        [str(project / "app")], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    model = (project / "model.tflite").read_bytes()
    header = project / "build" / "microarena" / "microarena_model.h"
    _check_run(text, header, model, tflm_outputs)
    assert "target=microarena-host" in text
