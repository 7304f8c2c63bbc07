"""SVDF's and UNIDIRECTIONAL_SEQUENCE_LSTM's Helium paths (firmware/src/kernels/fast/fast_dot_s8.h's
dot products, fast/mve/fast_mve_svdf.h's memory rows, fast/mve/fast_mve_lstm.h's four units at a
time) on QEMU's Cortex-M55 (mps3-an547) against the real TFLM: every intermediate tensor bit for
bit.

One image (built once; test_runtime_mve_qemu.py's images have no room left) holds
test_conformance_recurrent.py's cases (16-byte vector tails, memories of whole words and not,
int8 and int16 states, both LSTM layouts, cell scales on both sides of 2^-12, clips, zero
points at the int8 ends) and the shared SVDF and LSTM models, each with every operator's
outputs and its variable tensors (SVDF's state, the LSTM's hidden and cell states, as the
invocation leaves them) made model outputs: a gate value one step off shows in the cell state
long before it reaches an int8 output. Each runs once on the firmware's deterministic input
from its variables' initial values, and the recurrent ones also three times in a row (the
model app's "name*3", state carried over): from a uniform initial state a state byte moved to
the wrong place is invisible, only a later invocation reading it shows it. The CRC-32 of
every output must be TFLM's after the same invocations on one interpreter.

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
    if (c.name.startswith("CONCATENATION") or c.name.startswith("TRANSPOSE_CONV int8"))
    and c.refuse is None  # a refusal is checked on the host: the image runs models
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


ALL = [*SHARED, "keras_unet_int8", *map(case_stem, range(len(CASES)))]
# The models with state carried between invocations: the shared ones and the recurrent cases.
RECURRENT = [*SHARED, *map(case_stem, range(len(RECURRENT_CASES)))]


def check(image: Path, models: dict[str, bytes], name: str, invocations: int) -> None:
    args = name if invocations == 1 else f"{name}*{invocations}"
    result = emulate.run(BOARD, image, timeout=60, args=args)
    assert result.ok, result.uart_text[-2000:]
    got = [(int(b), int(c, 16)) for _, b, c in OUTPUT_LINE.findall(result.uart_text)]
    run = run_tflm(models[name], deterministic=True, invocations=invocations)
    want = [t.tobytes() for t in run.outputs]
    assert got == [(len(data), zlib.crc32(data)) for data in want] and got, args


@pytest.mark.parametrize("name", ALL)
def test_every_tensor_matches_tflm_on_the_m55(image: Path, models: dict[str, bytes], name: str):
    check(image, models, name, 1)


@pytest.mark.parametrize("name", RECURRENT)
def test_state_carried_over_three_invocations_matches_tflm(
    image: Path, models: dict[str, bytes], name: str
):
    check(image, models, name, 3)


@pytest.mark.parametrize("count", ["0", "", "3x", "1000000"])
def test_a_bad_invocation_count_is_a_clear_error(image: Path, count: str):
    result = emulate.run(BOARD, image, timeout=60, args=f"{SHARED[0]}*{count}")
    assert not result.ok and result.fault is None and not result.timed_out
    assert "the count after '*' must be a whole number from 1 to 999999" in result.uart_text
    assert "output 0" not in result.uart_text
