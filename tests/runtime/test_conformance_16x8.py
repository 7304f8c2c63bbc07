"""Conformance of CONV_2D and FULLY_CONNECTED with int16 activations and int8 weights (16x8)
with the real TFLM: one-operator models run on the runtime's ASan+UBSan build and on TFLM
with the same inputs, outputs compared bit for bit. What changes the arithmetic: the bias type
(int64: int64 sums and the 64-bit MultiplyByQuantizedMultiplier; int32: int32 sums and the
32-bit one; none: the options' quantized_bias_type decides), per-channel or per-tensor
weights, strides, dilation, padding, groups, fused activations, and (FULLY_CONNECTED only,
which applies them) zero points.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.conformance import I8, I16, I32, I64, Case, T, check, q8, q16, run_cases

RNG = np.random.default_rng(1608)
SAME, VALID = 0, 1
ACT_RELU, ACT_RELU6 = 1, 3


def weights(shape: tuple[int, ...], per_channel: bool, zp: int = 0) -> T:
    channels = shape[0]
    scales = [0.004 + 0.002 * i for i in range(channels)] if per_channel else [0.01]
    return T(shape, I8, scales, [zp] * len(scales), data=RNG.integers(-127, 128, shape))


def bias(dtype: int | None, n: int) -> list[T]:
    if dtype is None:
        return []
    return [T((n,), dtype, data=RNG.integers(-200_000, 200_000, n))]


def conv(name: str, ins: tuple[int, int, int, int], kernel: tuple[int, int], fin: int,
         cout: int, out_hw: tuple[int, int], bias_type: int | None = I64, stride: int = 1,
         dilation: int = 1, padding: int = SAME, act: int = 0, per_channel: bool = True,
         out_scale: float = 0.02, bias_type_option: int | None = None, zp: int = 0,
         refuse: tuple[str, list[str]] | None = None) -> Case:  # fmt: skip
    w = weights((cout, kernel[0], kernel[1], fin), per_channel)
    out = q16((ins[0], out_hw[0], out_hw[1], cout), out_scale, zp)
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("b", act),
             4: ("i", dilation), 5: ("i", dilation)}  # fmt: skip
    if bias_type_option is not None:
        slots[6] = ("b", bias_type_option)
    return Case(f"CONV_2D 16x8 {name}", "CONV_2D", [q16(ins, 0.001), w, *bias(bias_type, cout)],
                [out], "Conv2DOptions", slots, refuse=refuse)  # fmt: skip


def fc(name: str, ins: tuple[int, ...], units: int, bias_type: int | None = I64,
       per_channel: bool = True, act: int = 0, keep_dims: bool = False,
       zps: tuple[int, int] = (0, 0), out_scale: float = 0.02, filter_zp: int = 0,
       bias_type_option: int | None = None, dtype: int = I16) -> Case:  # fmt: skip
    depth = ins[-1]
    out_shape = (*ins[:-1], units) if keep_dims else (int(np.prod(ins[:-1])), units)
    w = weights((units, depth), per_channel, filter_zp)
    act_in = q16(ins, 0.001, zps[0]) if dtype == I16 else q8(ins, 0.05, zps[0])
    out = q16(out_shape, out_scale, zps[1]) if dtype == I16 else q8(out_shape, out_scale, zps[1])
    slots = {0: ("b", act), 2: ("B", int(keep_dims))}
    if bias_type_option is not None:
        slots[4] = ("b", bias_type_option)
    return Case(f"FULLY_CONNECTED {name}", "FULLY_CONNECTED", [act_in, w, *bias(bias_type, units)],
                [out], "FullyConnectedOptions", slots)  # fmt: skip


CASES = [
    conv("int64 bias SAME", (1, 6, 6, 3), (3, 3), 3, 4, (6, 6)),
    conv("int64 bias VALID stride 2 dilation 2", (2, 9, 9, 4), (3, 3), 4, 5, (3, 3), stride=2,
         dilation=2, padding=VALID),
    conv("int32 bias per-tensor", (1, 5, 7, 6), (3, 3), 6, 4, (5, 7), I32, per_channel=False),
    conv("no bias (int64 sums)", (1, 5, 5, 8), (2, 2), 8, 3, (5, 5), None),
    conv("no bias quantized_bias_type INT32", (1, 5, 5, 8), (2, 2), 8, 3, (5, 5), None,
         bias_type_option=I32),
    conv("RELU6 fine output", (1, 4, 4, 5), (3, 3), 5, 6, (4, 4), act=ACT_RELU6,
         out_scale=0.0003),
    conv("groups 2", (1, 5, 5, 4), (3, 3), 2, 6, (5, 5)),
    conv("coarse output saturating", (1, 6, 6, 16), (3, 3), 16, 2, (6, 6), out_scale=0.002),
    conv("output zero point refused", (1, 4, 4, 2), (3, 3), 2, 2, (4, 4), zp=5,
         refuse=("MA_ERR_UNSUPPORTED", ["CONV_2D", "zero points"])),
    fc("16x8 int64 bias per-channel batch 3", (3, 40), 7),
    fc("16x8 int32 bias per-tensor", (2, 33), 5, I32, per_channel=False),
    fc("16x8 no bias keep_num_dims", (2, 3, 24), 4, None, keep_dims=True),
    fc("16x8 no bias quantized_bias_type INT32", (4, 24), 6, None, bias_type_option=I32),
    fc("16x8 RELU zero points", (2, 30), 6, per_channel=False, act=ACT_RELU, zps=(300, -1000)),
    fc("16x8 zero points at the ends", (3, 20), 5, I32, per_channel=False,
       zps=(-32768, 32767), out_scale=0.05),
    fc("int8 per-channel filter zero point (TFLM ignores it)", (2, 16), 4, I32, dtype=I8,
       out_scale=0.3, filter_zp=3),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_16x8"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
