"""Converter-made models (tests/data/keras) on emulated boards: the model application on a
Cortex-M4F (mps2-an386) and a Cortex-M7 (mps2-an500), and the upload probe on the M4F, give
the host build's outputs byte for byte on the boards' deterministic input (and the host build
gives the real TFLM's). One image per board holds both models: two builds in all."""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import run_tflm
from test_boards_models import firmware_outputs

from host.device import emulate, record
from host.device.boards import BuildError, build_image, deterministic_input
from host.runtime.binding import Interpreter

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)

KERAS = Path(__file__).resolve().parents[1] / "data" / "keras"
BOARDS = ["mps2-an386", "mps2-an500"]  # Cortex-M4F, Cortex-M7
# A MobileNetV3-style CNN (hard-swish, squeeze-excite, MEAN) and a fused LSTM.
NAMES = ["mobilenet_v3ish_int8", "lstm_int8"]


def host_outputs(name: str) -> bytes:
    """All outputs of the host build on the boards' deterministic input, concatenated."""
    data = (KERAS / f"{name}.tflite").read_bytes()
    it = Interpreter(data)
    for i in range(it.num_inputs()):
        d = it.input_details(i)
        it.set_input(i, deterministic_input(d.dtype, int(np.prod(d.shape))).reshape(d.shape))
    it.invoke()
    ours = [it.get_output(i) for i in range(it.num_outputs())]
    for got, want in zip(ours, run_tflm(data, deterministic=True).outputs, strict=True):
        np.testing.assert_array_equal(got, want)  # and the host build is TFLM's
    return b"".join(np.ascontiguousarray(o).tobytes() for o in ours)


@pytest.fixture(scope="module")
def images() -> dict[str, Path]:
    try:
        return {b: build_image(b, [KERAS / f"{n}.tflite" for n in NAMES]) for b in BOARDS}
    except BuildError as exc:
        pytest.fail(str(exc))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("board", BOARDS)
def test_board_outputs_equal_the_host_build(images: dict[str, Path], board: str, name: str) -> None:
    result = emulate.run(board, images[board], timeout=120, args=name)
    assert result.ok, result.uart_text[-2000:]
    outputs = firmware_outputs(result.uart_text)
    assert all(crc == zlib.crc32(data) for _, data, crc in outputs)
    assert b"".join(data for _, data, _ in outputs) == host_outputs(name)


def test_upload_probe_runs_a_converter_model(capsys: pytest.CaptureFixture[str]) -> None:
    path = KERAS / "mobilenet_v3ish_int8.tflite"
    code = record.main(["--board", BOARDS[0], "--upload", str(path), "--json", "--timeout", "120"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)["report"]
    expected = host_outputs("mobilenet_v3ish_int8")
    assert report["status_name"] == "ok"
    assert (report["output_crc"], report["output_bytes"]) == (zlib.crc32(expected), len(expected))
