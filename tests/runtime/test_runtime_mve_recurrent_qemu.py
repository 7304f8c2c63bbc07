"""SVDF's and UNIDIRECTIONAL_SEQUENCE_LSTM's Helium paths (firmware/src/kernels/fast_dot_s8.h's
dot products, lstm.c's four units at a time) on QEMU's Cortex-M55 (mps3-an547) against the
real TFLM: every intermediate tensor bit for bit.

One image (built once; test_runtime_mve_qemu.py's images have no room left) holds
test_conformance_recurrent.py's cases (16-byte vector tails, memories of whole words and not,
int8 and int16 states, both LSTM layouts, cell scales on both sides of 2^-12, clips, zero
points at the int8 ends) and the shared SVDF and LSTM models, each with every operator's
outputs and its variable tensors (SVDF's state, the LSTM's hidden and cell states, as the
invocation leaves them) made model outputs: a gate value one step off shows in the cell state
long before it reaches an int8 output. Each runs one invocation on the firmware's
deterministic input, from its variables' initial values (several invocations run on the host
and the M4); the CRC-32 of every output must be TFLM's.

The same image holds the int8 TRANSPOSE_CONV and the CONCATENATION cases of
test_conformance_shape.py (transpose_conv.c's four-channel Helium sums, shape_ops.c's
predicated short-run copies) and tests/data/keras/unet_int8.tflite with every tensor an output."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from support.conformance import single_op_model
from support.tflm_oracle import run_tflm, with_every_output
from test_conformance_recurrent import CASES as RECURRENT_CASES
from test_conformance_shape import GENERIC as SHAPE_CASES
from test_runtime_mve_qemu import BOARD, OUTPUT_LINE, pytestmark  # noqa: F401

from host.device import emulate
from host.device.boards import BuildError, build_image
from host.paths import SHARED_MODELS

SHARED = ["tflm_keyword_scrambled_int8", "tflm_mnist_lstm_int8"]
UNET = Path(__file__).resolve().parents[1] / "data" / "keras" / "unet_int8.tflite"
CASES = RECURRENT_CASES + [
    c
    for c in SHAPE_CASES
    if c.name.startswith("CONCATENATION") or c.name.startswith("TRANSPOSE_CONV int8")
]


def case_stem(i: int) -> str:
    return f"recurrent{i:02d}"


@pytest.fixture(scope="module")
def models() -> dict[str, bytes]:
    missing = [n for n in SHARED if not (SHARED_MODELS / f"{n}.tflite").exists()]
    if missing:
        pytest.skip(f"shared models absent (tests read ../shared/models): {', '.join(missing)}")
    originals = {n: (SHARED_MODELS / f"{n}.tflite").read_bytes() for n in SHARED}
    originals["keras_unet_int8"] = UNET.read_bytes()
    originals.update({case_stem(i): single_op_model(c) for i, c in enumerate(CASES)})
    return {name: with_every_output(data, variables=True)[0] for name, data in originals.items()}


@pytest.fixture(scope="module")
def image(models: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mve_recurrent_models")
    for name, data in models.items():
        (folder / f"{name}.tflite").write_bytes(data)
    try:
        return build_image(BOARD, [folder / f"{name}.tflite" for name in models])
    except BuildError as exc:
        pytest.fail(str(exc))


@pytest.mark.parametrize("name", [*SHARED, "keras_unet_int8", *map(case_stem, range(len(CASES)))])
def test_every_tensor_matches_tflm_on_the_m55(image: Path, models: dict[str, bytes], name: str):
    result = emulate.run(BOARD, image, timeout=60, args=name)
    assert result.ok, result.uart_text[-2000:]
    got = [(int(b), int(c, 16)) for _, b, c in OUTPUT_LINE.findall(result.uart_text)]
    want = [t.tobytes() for t in run_tflm(models[name], deterministic=True).outputs]
    assert got == [(len(data), zlib.crc32(data)) for data in want] and got, name
