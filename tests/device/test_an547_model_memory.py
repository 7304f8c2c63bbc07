"""mps3-an547 keeps the models out of its 512 KiB ITCM (boards/mps3-an547/link.ld): the code
stays in the ITCM, the model arrays go to the SRAM beside it that QEMU's ELF loader fills. A
model larger than the ITCM (the converter-made MobileNetV2, 634 KB) builds, sits where the
board says, and runs with the real TFLM's output; models larger than the model memory still
fail at build time, before anything compiles. One image build."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import run_tflm
from test_boards_models import firmware_outputs

from host.device import emulate
from host.device.boards import BuildError, build_image, get_board

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)

BOARD = "mps3-an547"
REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "tests" / "data" / "mobilenet_v2" / "mobilenet_v2_035_160_int8.tflite"


def loaded_sections(elf: Path) -> dict[str, tuple[int, int]]:
    """Section name -> (load address, size) of the sections the ELF loader writes."""
    out = subprocess.run(
        ["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    rows = re.findall(
        r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s.*\n\s+(.*)$", out, re.M
    )
    return {name: (int(lma, 16), int(n, 16)) for name, n, lma, flags in rows if "LOAD" in flags}


def region_origin(name: str) -> int:
    text = (REPO / "boards" / BOARD / "link.ld").read_text()
    return int(re.search(rf"\b{name} \([rwx]+\) : ORIGIN = (0x[0-9A-Fa-f]+)", text).group(1), 16)


@pytest.fixture(scope="module")
def image() -> Path:
    try:
        return build_image(BOARD, MODEL)
    except BuildError as exc:
        pytest.fail(str(exc))


def test_model_larger_than_the_itcm_sits_in_the_model_memory(image: Path) -> None:
    board = get_board(BOARD)
    size = MODEL.stat().st_size
    assert board.flash_bytes < size <= board.model_memory_bytes  # what makes the test worth it
    found = loaded_sections(image)
    assert found.pop(".model") == (region_origin("MODEL"), size)
    # Everything else the loader writes (code, constants, .data's initial values) is in the ITCM.
    assert found[".isr_vector"][0] == region_origin("FLASH") == 0
    assert max(lma + n for lma, n in found.values()) <= board.flash_bytes
    assert (image.parent / "firmware-model.bin").read_bytes() == MODEL.read_bytes()


def test_model_larger_than_the_itcm_runs_with_tflms_output(image: Path) -> None:
    result = emulate.run(BOARD, image, timeout=120)
    assert result.ok, result.uart_text[-2000:]
    want = run_tflm(MODEL.read_bytes(), deterministic=True).outputs
    got = firmware_outputs(result.uart_text)
    assert len(got) == len(want)
    for (_, data, _), expected in zip(got, want, strict=True):
        assert np.array_equal(np.frombuffer(data, expected.dtype).reshape(expected.shape), expected)


def test_models_beyond_the_model_memory_fail_at_build_time(tmp_path: Path) -> None:
    limit = get_board(BOARD).model_memory_bytes
    copies = limit // MODEL.stat().st_size + 1
    paths = [tmp_path / f"copy{i}.tflite" for i in range(copies)]
    for path in paths:
        path.write_bytes(MODEL.read_bytes())
    with pytest.raises(BuildError) as failure:
        build_image(BOARD, paths, build_root=tmp_path / "build")
    message = str(failure.value)
    assert f"does not fit board {BOARD}" in message
    assert f"the model needs {copies * MODEL.stat().st_size} bytes" in message
    assert f"the board's model memory has {limit}" in message
    assert not list(tmp_path.rglob("firmware.elf"))
