"""Conformance of float QUANTIZE, DEQUANTIZE and PAD with the real TFLM at the values and
shapes their short forms (firmware/src/kernels/quantize.c, shape_ops.c) depend on.

QUANTIZE rounds value / scale half away from zero by truncation and the exact remainder
(no roundf, no float -> int64 conversion): inputs exactly halfway between outputs, one float
step either side of the halves, zeros of both signs, and values far beyond the int8 range
(the early saturation). DEQUANTIZE forms TFLM's double product in float, the same number
while |value - zero point| < 2^24: scales with long mantissas, tiny and subnormal scales,
large ones. PAD fills the output with one memset where the pad value's bytes are equal and
copies the input in runs as long as the unpadded inner dimensions allow: padding on each
dimension alone, on several, none, and pad values whose bytes differ.

Out of the cases: values whose conversion is undefined in C++ (NaN, infinities, quotients
beyond int32, dequantized values beyond FLT_MAX), where the pip TFLM on x86 and TFLM on Arm
disagree with each other.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.conformance import I32, U8, Case, T, check, f32, q8, q16, run_cases

SHAPE = (4, 64)


def halves(scale: float, zp: int, lo: int, hi: int):
    """Inputs around (k + 1/2) * scale for k across the output range, as float32: the half
    itself and its neighbours one float step away, zeros of both signs, far values."""

    def make(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
        k = np.arange(lo - zp - 2, hi - zp + 2, dtype=np.float64)
        mid = ((k + 0.5) * scale).astype(np.float32)
        vals = np.concatenate(
            [
                mid,
                np.nextafter(mid, np.float32(np.inf)),
                np.nextafter(mid, np.float32(-np.inf)),
                np.float32([0.0, -0.0, 1e6 * scale, -1e6 * scale, 3e8 * scale, -3e8 * scale]),
                rng.uniform(-300 * scale, 300 * scale, 64).astype(np.float32),
            ]
        ).astype(np.float32)
        out = np.resize(vals, int(np.prod(ts[0].shape))).reshape(ts[0].shape)
        return [out]

    return make


def quantize(name: str, scale: float, zp: int, out: T, lo: int, hi: int) -> Case:
    n = (hi - lo + 4) * 3 + 70
    shape = (n,)
    out.shape = shape
    return Case(f"QUANTIZE float {name}", "QUANTIZE", [f32(shape)], [out],
                make_inputs=halves(scale, zp, lo, hi))  # fmt: skip


def dequantize(name: str, src: T) -> Case:
    return Case(f"DEQUANTIZE {name}", "DEQUANTIZE", [src], [f32(src.shape)])


def pad(name: str, src: T, pads: list[list[int]], value: T | None = None) -> Case:
    shape = tuple(d + a + b for d, (a, b) in zip(src.shape, pads, strict=True))
    out = T(shape, src.dtype, list(src.scale), list(src.zp))
    ins = [src, T((len(pads), 2), I32, data=pads)] + ([value] if value is not None else [])
    op = "PADV2" if value is not None else "PAD"
    return Case(f"{op} {name}", op, ins, [out], "PadV2Options" if value else "PadOptions")


NHWC = (1, 9, 7, 16)
CASES = [
    quantize("to int8, scale 0.0037", 0.0037, 7, q8((1,), 0.0037, 7), -128, 127),
    quantize("to int8, scale 1/256 (exact halves)", 1 / 256, -128, q8((1,), 1 / 256, -128),
             -128, 127),
    quantize("to int8, scale 0.1", 0.1, 0, q8((1,), 0.1, 0), -128, 127),
    quantize("to int16, scale 0.00031", 0.00031, 0, q16((1,), 0.00031), -300, 300),
    dequantize("int8 scale 0.0123456789", q8(SHAPE, 0.0123456789, -3)),
    dequantize("int8 subnormal scale", q8(SHAPE, 3e-39, 100)),
    dequantize("int8 scale 1e-30", q8(SHAPE, 1e-30, -128)),
    dequantize("int16 scale 0.000987654321", q16(SHAPE, 0.000987654321)),
    dequantize("int16 scale 1e33", q16(SHAPE, 1e33)),
    dequantize("uint8 scale 0.0078125 zero point 255", T(SHAPE, U8, [0.0078125], [255])),
    pad("int8 bottom and right (the stride-2 convolutions' PAD)", q8(NHWC, 0.1, -5),
        [[0, 0], [0, 1], [0, 1], [0, 0]]),
    pad("int8 all four sides", q8(NHWC, 0.1, 3), [[0, 0], [2, 1], [1, 3], [0, 0]]),
    pad("int8 channels only", q8(NHWC, 0.1, 0), [[0, 0], [0, 0], [0, 0], [3, 2]]),
    pad("int8 batch only", q8((2, 3, 5, 4), 0.1, -128), [[1, 2], [0, 0], [0, 0], [0, 0]]),
    pad("int8 none", q8((2, 3, 5, 4), 0.1, 9), [[0, 0], [0, 0], [0, 0], [0, 0]]),
    pad("int8 rank 1", q8((37,), 0.1, 1), [[5, 70]]),
    pad("int8 rank 5 inner", q8((2, 2, 3, 2, 5), 0.1, 2), [[0, 0], [1, 0], [0, 0], [0, 1], [0, 0]]),
    pad("int16 zero point 0", q16((1, 5, 6, 3), 0.01), [[0, 0], [1, 1], [1, 1], [0, 0]]),
    pad("int16 constant of unequal bytes", q16((1, 5, 6, 3), 0.01),
        [[0, 0], [1, 1], [1, 1], [0, 0]], q16((1,), 0.01, data=[0x0102])),
    pad("int8 constant", q8((3, 4, 5), 0.1, 1), [[0, 0], [2, 2], [0, 1]],
        q8((1,), 0.1, 1, data=[-77])),
    pad("float constant 1.5", f32((2, 3, 4)), [[1, 0], [0, 2], [1, 1]], f32((1,), data=[1.5])),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_quant_pad"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])


def test_halves_are_exact_ties() -> None:
    """The QUANTIZE inputs do hold exact halves (value / scale = k + 1/2 in float), so the
    rounding direction is what the cases test."""
    case = CASES[1]
    (x,) = halves(1 / 256, -128, -128, 127)(np.random.default_rng(0), case.inputs)
    q = x[:259].astype(np.float32) / np.float32(1 / 256)
    assert np.all(q - np.floor(q) == 0.5)
