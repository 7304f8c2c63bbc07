"""Converter-made models (tests/data/keras) on emulated boards: the model application on a
Cortex-M4F (mps2-an386) and a Cortex-M7 (mps2-an500), and the upload probe on the M4F, give
the host build's outputs byte for byte on the boards' deterministic input (and the host build
gives the real TFLM's). TFLM's audio preprocessor and its two Signal* segments (when the
shared model is present) run in the same images, against the host build: the FFT twiddles
come from the board's libm. One image per board holds all models: two builds in all."""

from __future__ import annotations

import json
import re
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest
from support.audio_segments import MODEL, SEGMENTS, cut
from support.tflm_oracle import MODELS, run_tflm
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
CRC_LINE = re.compile(r"^output \d+ type=\d+ bytes=(\d+) crc32=([0-9a-f]{8})", re.M)


def segment_paths(folder: Path) -> list[Path]:
    """The Signal segments as model files, or [] where the shared model is absent."""
    source = MODELS / f"{MODEL}.tflite"
    if not source.exists():
        return []
    paths = [source]  # the whole audio preprocessor, and its two Signal segments
    for name, seg in SEGMENTS.items():
        paths.append(folder / f"signal_{name}.tflite")
        paths[-1].write_bytes(cut(source.read_bytes(), *seg))
    return paths


def host_run(path: Path) -> list[np.ndarray]:
    """The host build's outputs on the boards' deterministic input."""
    it = Interpreter(path.read_bytes())
    for i in range(it.num_inputs()):
        d = it.input_details(i)
        it.set_input(i, deterministic_input(d.dtype, int(np.prod(d.shape))).reshape(d.shape))
    it.invoke()
    return [it.get_output(i) for i in range(it.num_outputs())]


def host_outputs(name: str) -> bytes:
    """All outputs of the host build, concatenated; checked against TFLM's first."""
    path = KERAS / f"{name}.tflite"
    ours = host_run(path)
    for got, want in zip(
        ours, run_tflm(path.read_bytes(), deterministic=True).outputs, strict=True
    ):
        np.testing.assert_array_equal(got, want)
    return b"".join(np.ascontiguousarray(o).tobytes() for o in ours)


@pytest.fixture(scope="module")
def segments(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return segment_paths(tmp_path_factory.mktemp("signal"))


@pytest.fixture(scope="module")
def images(segments: list[Path]) -> dict[str, Path]:
    paths = [KERAS / f"{n}.tflite" for n in NAMES] + segments
    try:
        return {b: build_image(b, paths) for b in BOARDS}
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


@pytest.mark.parametrize("segment", [*sorted(SEGMENTS), "whole"])
@pytest.mark.parametrize("board", BOARDS)
def test_signal_segments_on_the_board_equal_the_host_build(
    images: dict[str, Path], segments: list[Path], board: str, segment: str
) -> None:
    """Compared by CRC (the application prints long outputs as CRCs only). SignalEnergy's
    unset bins hold what the same plan left there on both, so they agree too."""
    if not segments:
        pytest.skip(f"{MODELS / MODEL}.tflite is absent (shared models: ../shared/models)")
    stem = MODEL if segment == "whole" else f"signal_{segment}"
    path = next(p for p in segments if p.stem == stem)
    result = emulate.run(board, images[board], timeout=120, args=path.stem)
    assert result.ok, result.uart_text[-2000:]
    board_crcs = [(int(n), int(c, 16)) for n, c in CRC_LINE.findall(result.uart_text)]
    want = [(o.nbytes, zlib.crc32(np.ascontiguousarray(o).tobytes())) for o in host_run(path)]
    assert board_crcs == want, f"{board} {segment}: (bytes, crc32) per output"
