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

int16 activations ("16x8") beyond CONV_2D and FULLY_CONNECTED (test_conformance_16x8.py), as
ARM ML-zoo's int16 keyword spotter uses them: DEPTHWISE_CONV_2D (int64 bias or none),
AVERAGE_POOL_2D, MAX_POOL_2D and SOFTMAX (TFLM's table method).
"""

from __future__ import annotations

import sys
from pathlib import Path

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
SAME, VALID = 0, 1
REPO = Path(__file__).resolve().parents[2]


def quantize(name: str, src: T, dst: T, refuse: tuple[str, list[str]] | None = None) -> Case:
    return Case(f"QUANTIZE {name}", "QUANTIZE", [src], [dst], refuse=refuse)


def u8(scale: float, zp: int, **kw: object) -> T:
    return T(SHAPE, U8, [scale], [zp], **kw)  # type: ignore[arg-type]


def weights(shape: tuple[int, ...]) -> T:
    scales = [0.004 + 0.002 * i for i in range(shape[0])]
    return T(shape, I8, scales, data=RNG.integers(-127, 128, shape))


def bias64(n: int) -> T:
    return T((n,), I64, data=RNG.integers(-200_000, 200_000, n))


def dwconv(
    name: str,
    ins: tuple[int, int, int, int],
    kernel: tuple[int, int],
    mult: int,
    out_hw: tuple[int, int],
    bias: bool = True,
    stride: int = 1,
    dilation: int = 1,
    padding: int = SAME,
    act: int = 0,
    per_channel: bool = True,
    bias_type: int = I64,
    out_scale: float = 0.01,
    refuse: tuple[str, list[str]] | None = None,
) -> Case:
    cout = ins[3] * mult
    shape = (1, *kernel, cout)
    scales = [0.004 + 0.002 * i for i in range(cout)] if per_channel else [0.01]
    w = T(shape, I8, scales, qdim=3 if per_channel else 0, data=RNG.integers(-127, 128, shape))
    b = [T((cout,), bias_type, data=RNG.integers(-200_000, 200_000, cout))] if bias else []
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("i", mult),
             4: ("b", act), 5: ("i", dilation), 6: ("i", dilation)}  # fmt: skip
    return Case(
        f"DEPTHWISE_CONV_2D 16x8 {name}",
        "DEPTHWISE_CONV_2D",
        [q16(ins, 0.001), w, *b],
        [q16((ins[0], *out_hw, cout), out_scale)],
        "DepthwiseConv2DOptions",
        slots,
        refuse=refuse,
    )


def pool(
    op: str,
    name: str,
    ins: tuple[int, int, int, int],
    out_hw: tuple[int, int],
    size: int | tuple[int, int],
    stride: int,
    padding: int = SAME,
    act: int = 0,
) -> Case:
    fw, fh = (size, size) if isinstance(size, int) else size
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("i", fw),
             4: ("i", fh), 5: ("b", act)}  # fmt: skip
    out = q16((ins[0], *out_hw, ins[3]), 0.002, 0)
    return Case(f"{op} int16 {name}", op, [q16(ins, 0.002, 0)], [out], "Pool2DOptions", slots)


def softmax(
    name: str,
    shape: tuple[int, ...],
    in_scale: float,
    beta: float = 1.0,
    out_scale: float = 1 / 32768,
    refuse: tuple[str, list[str]] | None = None,
) -> Case:
    return Case(
        f"SOFTMAX int16 {name}",
        "SOFTMAX",
        [q16(shape, in_scale)],
        [q16(shape, out_scale)],
        "SoftmaxOptions",
        {0: ("f", beta)},
        refuse=refuse,
    )


def sub_ties(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Random int16 pairs, the first three exactly halfway between outputs (0.05 a - 0.03 b
    = 0.06 (k + 1/2)), where the multipliers' last bit decides the rounding."""
    a = rng.integers(-32768, 32768, ts[0].shape).astype(np.int16)
    b = rng.integers(-32768, 32768, ts[1].shape).astype(np.int16)
    a.flat[:3], b.flat[:3] = [237, 2859, -2562], [-15472, -27262, 25585]
    return [a, b]


def div_ties(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """int8 dividends and divisors (never at the divisor's zero point -5), the first two
    exactly halfway between outputs: (a - 3) 0.05 / ((b + 5) 0.02) / 0.1 = k + 1/2."""
    a = rng.integers(-128, 128, ts[0].shape).astype(np.int8)
    b = rng.integers(-128, 127, ts[1].shape)
    b = np.where(b >= -5, b + 1, b).astype(np.int8)
    a[:2], b[:2] = [-84, 0], [-63, -11]
    return [a, b]


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
    dwconv("int64 bias SAME", (1, 6, 6, 4), (3, 3), 1, (6, 6)),
    dwconv("no bias VALID stride 2 dilation 2", (2, 9, 8, 3), (3, 3), 1, (3, 2), bias=False,
           stride=2, dilation=2, padding=VALID),
    dwconv("depth multiplier 2 RELU6 per-tensor", (1, 5, 7, 3), (2, 3), 2, (5, 7), act=3,
           per_channel=False, out_scale=0.0005),
    dwconv("int32 bias refused as TFLM reads int64", (1, 4, 4, 2), (3, 3), 1, (4, 4),
           bias_type=I32, refuse=("MA_ERR_UNSUPPORTED", ["DEPTHWISE_CONV_2D", "bias"])),
    pool("AVERAGE_POOL_2D", "SAME partial windows", (2, 7, 9, 5), (4, 5), 3, 2),
    pool("AVERAGE_POOL_2D", "VALID whole frame (the keyword spotter's)", (1, 25, 5, 6),
         (1, 1), (5, 25), 1, padding=VALID),
    pool("MAX_POOL_2D", "SAME RELU", (1, 6, 6, 4), (3, 3), 2, 2, act=1),
    softmax("beta 1 coarse input", (2, 12), 0.001),
    softmax("beta 1 fine input rows of 100", (3, 100), 0.0001),
    softmax("beta 0.5 one-hot scale", (1, 4, 10), 0.0003, beta=0.5),
    softmax("output scale refused", (1, 12), 0.001, out_scale=1 / 256,
            refuse=("MA_ERR_UNSUPPORTED", ["SOFTMAX", "1/32768"])),
    Case("SUB int16 multipliers in double (exact ties)", "SUB",
         [q16((2, 40), 0.05), q16((2, 40), 0.03)], [q16((2, 40), 0.06)], "SubOptions",
         make_inputs=sub_ties),
        Case("DIV int8 multiplier in double (exact ties)", "DIV",
         [q8((40,), 0.05, 3), q8((40,), 0.02, -5)], [q8((40,), 0.1, 2)], "DivOptions",
         make_inputs=div_ties),
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
    """The type pairs refused above are ones TFLM refuses too (else they would be gaps), but
    for a 16x8 depthwise convolution with an int32 bias: TFLM reads its 4-byte values as
    int64, past the buffer's end, and runs it with wrong results (that it runs is checked)."""
    for case in CASES:
        if case.name.startswith("DEPTHWISE_CONV_2D 16x8 int32 bias"):
            assert results[case.name].tflm is not None, f"{case}: TFLM now refuses it"
        elif case.refuse is not None and case.edit is None:
            assert results[case.name].tflm is None, f"{case}: TFLM runs it"


def test_buffers_are_only_4_byte_aligned() -> None:
    """The edited models do hold their int64 constants at 4 modulo 8."""
    for case in CASES:
        if case.edit is not None:
            model = single_op_model(case)
            for t in case.inputs:
                if t is not None and t.dtype == I64 and t.data is not None:
                    assert model.find(t.data.tobytes()) % 8 == 4, case


def test_softmax_tables_are_generated() -> None:
    """softmax_lut.c is what tools/gen_softmax_lut.py computes (with this machine's expf)."""
    if sys.platform != "linux":
        pytest.skip("the tables are computed with glibc's expf")
    sys.path.insert(0, str(REPO / "tools"))
    import gen_softmax_lut as tool

    assert tool.OUT.read_text() == tool.c_source(), "run python tools/gen_softmax_lut.py"
