"""Conformance of the type combinations real models use beyond int8 and float32 with the real
TFLM: one-operator models run on the runtime's ASan+UBSan build and on TFLM with the same
inputs, outputs compared bit for bit (see support.conformance).

QUANTIZE requantizes between integer types (uint8 <-> int8 around the int8 body of ST's and
Wake Vision's image models, int32 -> int8/int16); the pairs TFLM's Prepare accepts but its
Eval refuses (float32 -> uint8, uint8 -> uint8) are refused at open here.

Files whose 8-byte constants are only 4-byte aligned (a flatbuffer writer that ignores the
schema's force_align, as ARM ML-zoo's int16 models were written) open: int64 biases are read
with alignment-safe loads; an operator that reads such a constant in place is refused with
that cause (never "malformed").
"""

from __future__ import annotations

import numpy as np
import pytest
from support.conformance import (
    I8,
    I32,
    I64,
    U8,
    Case,
    T,
    buffers_4_aligned,
    check,
    f32,
    q8,
    q16,
    run_cases,
    single_op_model,
)  # fmt: skip

SHAPE = (2, 5, 7)
RNG = np.random.default_rng(19)


def quantize(name: str, src: T, dst: T, refuse: tuple[str, list[str]] | None = None) -> Case:
    return Case(f"QUANTIZE {name}", "QUANTIZE", [src], [dst], refuse=refuse)


def u8(scale: float, zp: int, **kw: object) -> T:
    return T(SHAPE, U8, [scale], [zp], **kw)  # type: ignore[arg-type]


def weights(shape: tuple[int, ...]) -> T:
    scales = [0.004 + 0.002 * i for i in range(shape[0])]
    return T(shape, I8, scales, data=RNG.integers(-127, 128, shape))


def bias64(n: int) -> T:
    return T((n,), I64, data=RNG.integers(-200_000, 200_000, n))


def i32(scale: float, zp: int) -> T:
    return T(SHAPE, I32, [scale], [zp], low=-40_000, high=40_000)


CASES = [
    quantize("uint8 to int8 shift of 128 (the image models' input)", u8(0.02, 128),
             q8(SHAPE, 0.02, 0)),
    quantize("uint8 to int8 rescaled", u8(0.02, 100), q8(SHAPE, 0.05, -7)),
    quantize("int8 to uint8 shift of 128 (the image models' output)", q8(SHAPE, 0.004, -128),
             u8(0.004, 0)),
    quantize("int8 to uint8 rescaled saturating", q8(SHAPE, 0.05, 3), u8(0.03, 120)),
    quantize("int32 to int8", i32(0.001, 5), q8(SHAPE, 0.2, -3)),
    quantize("int32 to int16", i32(0.001, -9), q16(SHAPE, 0.003, 2)),
    quantize("int16 to int8", q16(SHAPE, 0.001, 0), q8(SHAPE, 0.2, 4)),
    quantize("float32 to uint8 refused as TFLM's Eval refuses it", f32(SHAPE), u8(0.02, 128),
             refuse=("MA_ERR_UNSUPPORTED", ["QUANTIZE", "FLOAT32", "UINT8"])),
    quantize("uint8 to uint8 refused as TFLM's Eval refuses it", u8(0.02, 128),
             u8(0.03, 128), refuse=("MA_ERR_UNSUPPORTED", ["QUANTIZE", "UINT8"])),
    Case("DEQUANTIZE uint8", "DEQUANTIZE", [u8(0.02, 131)], [f32(SHAPE)]),
    Case("CONV_2D 16x8 int64 bias 4-byte aligned in the file", "CONV_2D",
         [q16((1, 5, 5, 3), 0.001), weights((4, 3, 3, 3)), bias64(4)], [q16((1, 5, 5, 4), 0.02)],
         "Conv2DOptions", {1: ("i", 1), 2: ("i", 1)}, edit=buffers_4_aligned),
    Case("FULLY_CONNECTED 16x8 int64 bias 4-byte aligned in the file", "FULLY_CONNECTED",
         [q16((3, 24), 0.001), weights((5, 24)), bias64(5)], [q16((3, 5), 0.02)],
         "FullyConnectedOptions", edit=buffers_4_aligned),
    Case("MAXIMUM int64 constant 4-byte aligned in the file refused with the cause", "MAXIMUM",
         [T((2, 6), I64), T((2, 6), I64, data=RNG.integers(-1000, 1000, 12))], [T((2, 6), I64)],
         edit=buffers_4_aligned,
         refuse=("MA_ERR_UNSUPPORTED", ["MAXIMUM", "4-byte aligned"])),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_types"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])


def test_refusals_are_refused_by_tflm(results: dict) -> None:
    """The type pairs refused above are ones TFLM refuses too (else they would be gaps)."""
    for case in CASES:
        if case.refuse is not None and case.edit is None:
            assert results[case.name].tflm is None, f"{case}: TFLM runs it"


def test_buffers_are_only_4_byte_aligned() -> None:
    """The edited models do hold their int64 constants at 4 modulo 8."""
    for case in CASES:
        if case.edit is not None:
            model = single_op_model(case)
            for t in case.inputs:
                if t is not None and t.dtype == I64 and t.data is not None:
                    assert model.find(t.data.tobytes()) % 8 == 4, case
