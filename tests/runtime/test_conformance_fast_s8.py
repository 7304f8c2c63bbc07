"""Conformance of the fast int8 paths (firmware/src/kernels/fast/fast_s8.c) with the real TFLM:
CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED one-operator models run on the runtime's
ASan+UBSan build and on TFLM with the same inputs (integer inputs span int8, ends included),
outputs compared bit for bit. The cases hit each loop's edges: channel and depth counts that
are not multiples of the 4-wide loops (their tails), convolution pixel pairs (across rows and
batches, an odd pixel left alone, neighbours whose clipped windows differ, windows gathered
into one run with the zero point as padding, windows longer than the widened rows' buffer,
widened in parts), depthwise channels across the 32-channel block,
depth multipliers (1 to 8, four output lanes reading different input channels), padding that
clips the window, strides, dilation (taps no longer contiguous), batches, per-tensor and per-
channel weights, zero points at the int8 ends, no bias, saturating outputs, grouped
convolutions, and the shapes the fast paths leave to the reference loops (a FULLY_CONNECTED
weight zero point). The same paths run with the DSP instructions on the Cortex-M boards, where
tests/device/test_boards_models.py compares every intermediate tensor with the host's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.conformance import I8, I32, Case, T, check, q8, run_cases

RNG = np.random.default_rng(2020)
SAME, VALID = 0, 1
ACT_RELU, ACT_RELU6 = 1, 3


def weights(shape: tuple[int, ...], channels: int, qdim: int, per_channel: bool, zp: int = 0) -> T:
    scales = [0.004 + 0.001 * (i % 7) for i in range(channels)] if per_channel else [0.006]
    data = RNG.integers(-127, 128, shape)
    return T(shape, I8, scales, [zp] * len(scales), data=data, qdim=qdim)


def bias(n: int, with_bias: bool) -> list[T]:
    return [T((n,), I32, data=RNG.integers(-20_000, 20_000, n))] if with_bias else []


def conv(
    name: str,
    ins: tuple[int, int, int, int],
    kernel: tuple[int, int],
    cout: int,
    out_hw: tuple[int, int],
    stride: int = 1,
    dilation: int = 1,
    padding: int = SAME,
    act: int = 0,
    per_channel: bool = True,
    zps: tuple[int, int] = (-128, 5),
    out_scale: float = 0.5,
    with_bias: bool = True,
    fin: int | None = None,
    depthwise: bool = False,
) -> Case:
    """CONV_2D, or DEPTHWISE_CONV_2D (depth multiplier cout / input channels)."""
    if depthwise:
        shape, qdim, op, options = (1, *kernel, cout), 3, "DEPTHWISE_CONV_2D", "DepthwiseConv2D"
        slots = {3: ("i", cout // ins[3]), 4: ("b", act), 5: ("i", dilation), 6: ("i", dilation)}
    else:
        shape, qdim, op, options = (cout, *kernel, fin or ins[3]), 0, "CONV_2D", "Conv2D"
        slots = {3: ("b", act), 4: ("i", dilation), 5: ("i", dilation)}
    slots.update({0: ("B", padding), 1: ("i", stride), 2: ("i", stride)})
    out = q8((ins[0], out_hw[0], out_hw[1], cout), out_scale, zps[1])
    tensors = [
        q8(ins, 0.05, zps[0]),
        weights(shape, cout, qdim, per_channel),
        *bias(cout, with_bias),
    ]
    return Case(f"{op} int8 {name}", op, tensors, [out], f"{options}Options", slots)


def dwconv(name: str, ins: tuple[int, int, int, int], kernel: tuple[int, int],
           out_hw: tuple[int, int], multiplier: int = 1, **kw: Any) -> Case:  # fmt: skip
    kw.setdefault("out_scale", 0.1)
    return conv(name, ins, kernel, ins[3] * multiplier, out_hw, depthwise=True, **kw)


def fc(
    name: str,
    ins: tuple[int, int],
    units: int,
    per_channel: bool = False,
    act: int = 0,
    zps: tuple[int, int] = (-128, 5),
    out_scale: float = 0.3,
    filter_zp: int = 0,
    with_bias: bool = True,
) -> Case:
    w = weights((units, ins[1]), units, 0, per_channel, filter_zp)
    out = q8((ins[0], units), out_scale, zps[1])
    return Case(
        f"FULLY_CONNECTED int8 {name}",
        "FULLY_CONNECTED",
        [q8(ins, 0.05, zps[0]), w, *bias(units, with_bias)],
        [out],
        "FullyConnectedOptions",
        {0: ("b", act)},
    )


CASES = [
    conv("1x1 16 -> 8 per-channel", (1, 5, 6, 16), (1, 1), 8, (5, 6)),
    conv("1x1 7 -> 6 (depth and channel tails) per-tensor", (1, 4, 5, 7), (1, 1), 6, (4, 5),
         per_channel=False, zps=(127, -128)),
    conv("1x1 stride 2 VALID 9 -> 13", (2, 7, 7, 9), (1, 1), 13, (4, 4), stride=2,
         padding=VALID),
    conv("3x3 SAME 3 -> 5 clipped windows", (1, 6, 7, 3), (3, 3), 5, (6, 7)),
    conv("3x3 SAME stride 2 5 -> 9 RELU6", (1, 9, 8, 5), (3, 3), 9, (5, 4), stride=2,
         act=ACT_RELU6, out_scale=0.02),
    conv("3x3 VALID dilation 2 6 -> 4", (1, 9, 9, 6), (3, 3), 4, (5, 5), dilation=2,
         padding=VALID),
    conv("10x4 SAME stride 2 1 -> 8 no bias", (1, 25, 10, 1), (10, 4), 8, (13, 5), stride=2,
         with_bias=False, zps=(0, 0)),
    conv("3x3 SAME 12 -> 4 saturating RELU", (1, 5, 5, 12), (3, 3), 4, (5, 5), act=ACT_RELU,
         out_scale=0.05, zps=(127, -100)),
    conv("1x1 7 -> 5 odd pixel count (pairs across rows, last pixel alone) per-tensor",
         (1, 3, 5, 7), (1, 1), 5, (3, 5), per_channel=False, zps=(-128, 127)),
    conv("1x1 batch 3 (pixel pairs across batches) 12 -> 6 RELU", (3, 1, 1, 12), (1, 1), 6,
         (1, 1), act=ACT_RELU, zps=(127, -128)),
    conv("3x3 SAME stride 2 3 -> 16 (first layer: runs of 9 bytes)", (1, 9, 9, 3), (3, 3), 16,
         (5, 5), stride=2),
    conv("3x3 SAME 4 -> 6 gathered windows (zero point -128 fills the padding), odd pixels",
         (1, 5, 5, 4), (3, 3), 6, (5, 5), zps=(-128, 3)),
    conv("3x3 VALID dilation 2 4 -> 5 gathered windows per-tensor", (1, 7, 7, 4), (3, 3), 5,
         (3, 3), dilation=2, padding=VALID, per_channel=False, zps=(127, 0)),
    conv("3x3 SAME 16 -> 10 (rows of 48 bytes in one assembly call)", (1, 5, 6, 16), (3, 3), 10,
         (5, 6)),
    conv("3x3 SAME 40 -> 35 (windows of 360 values widened in parts, an odd channel)",
         (1, 4, 5, 40), (3, 3), 35, (4, 5)),
    conv("1x1 300 -> 18 per-tensor (rows of 300 values widened in parts)", (1, 3, 4, 300),
         (1, 1), 18, (3, 4), per_channel=False, zps=(-128, 5)),
    conv("3x3 VALID stride 2 20 -> 7 batch 2 per-tensor (pairs across batches)", (2, 7, 7, 20),
         (3, 3), 7, (3, 3), stride=2, padding=VALID, per_channel=False, zps=(127, -128)),
    conv("3x3 groups 2 (group by group)", (1, 5, 5, 4), (3, 3), 6, (5, 5), fin=2),
    conv("3x3 SAME stride 2 groups 4 per-tensor", (1, 7, 6, 12), (3, 3), 8, (4, 3), stride=2,
         fin=3, per_channel=False, zps=(127, -128)),
    conv("1x1 groups 2 odd channels per group", (2, 3, 3, 8), (1, 1), 6, (3, 3), fin=4,
         act=ACT_RELU6, out_scale=0.02),
    dwconv("3x3 SAME 8 channels", (1, 6, 6, 8), (3, 3), (6, 6)),
    dwconv("3x3 SAME stride 2 37 channels (block and tails)", (1, 7, 9, 37), (3, 3), (4, 5),
           stride=2, act=ACT_RELU6, out_scale=0.02),
    dwconv("5x5 VALID dilation 2 6 channels per-tensor", (2, 11, 12, 6), (5, 5), (3, 4),
           dilation=2, padding=VALID, per_channel=False, zps=(127, -128)),
    dwconv("3x3 SAME 3 channels no bias", (1, 4, 5, 3), (3, 3), (4, 5), with_bias=False,
           zps=(0, 0)),
    dwconv("3x3 VALID 64 channels saturating", (1, 4, 4, 64), (3, 3), (2, 2), padding=VALID,
           out_scale=0.005),
    dwconv("3x3 SAME multiplier 2", (1, 5, 5, 3), (3, 3), (5, 5), multiplier=2),
    dwconv("3x3 SAME stride 2 multiplier 8 from 1 channel", (1, 9, 10, 1), (3, 3), (5, 5),
           stride=2, multiplier=8, act=ACT_RELU6, out_scale=0.02),
    dwconv("3x3 SAME multiplier 4 10 -> 40 channels (block)", (1, 5, 4, 10), (3, 3), (5, 4),
           multiplier=4, zps=(-5, 3)),
    dwconv("3x3 VALID multiplier 3 (lanes across input channels) 11 -> 33", (1, 5, 6, 11),
           (3, 3), (3, 4), padding=VALID, multiplier=3, per_channel=False, zps=(127, -128)),
    # multiplier 1, windows one to three taps wide: the assembly rows of fast_depthwise_s8.c
    dwconv("3x3 SAME 64 channels on 25x5 (kws)", (1, 25, 5, 64), (3, 3), (25, 5), act=ACT_RELU,
           zps=(-128, -128)),
    dwconv("3x3 SAME 36 channels on 2 columns (two-tap rows, block tail)", (1, 4, 2, 36),
           (3, 3), (4, 2), zps=(127, 127)),
    dwconv("3x3 SAME 5 channels on 1 column (one-tap rows, lane tail)", (1, 5, 1, 5), (3, 3),
           (5, 1), zps=(-128, 127)),
    dwconv("5x5 SAME 8 channels (3-wide clipped windows of a wider filter)", (1, 6, 5, 8),
           (5, 5), (6, 5), per_channel=False),
    dwconv("2x3 VALID stride 2 4 channels", (1, 7, 7, 4), (2, 3), (3, 3), stride=2,
           padding=VALID),
    dwconv("3x3 SAME dilation 2 8 channels (dilated rows: C loop)", (1, 6, 7, 8), (3, 3),
           (6, 7), dilation=2),
    # multipliers of 4 and 8, windows one to three taps wide: the broadcast assembly rows
    dwconv("3x3 SAME dilation 2 multiplier 4 3 -> 12 channels", (1, 7, 6, 3), (3, 3), (7, 6),
           dilation=2, multiplier=4, zps=(127, -128)),
    dwconv("3x3 SAME multiplier 8 on 1 column", (1, 5, 1, 2), (3, 3), (5, 1), multiplier=8,
           per_channel=False),
    dwconv("5x5 VALID stride 2 multiplier 4 batches 2", (2, 9, 9, 2), (5, 5), (3, 3), stride=2,
           padding=VALID, multiplier=4, act=ACT_RELU),
    # windows wider than three taps: three columns at a time
    dwconv("10x8 SAME stride 2 multiplier 8 from 1 channel (micro_speech)", (1, 14, 12, 1),
           (10, 8), (7, 6), stride=2, multiplier=8, act=ACT_RELU, zps=(-128, -128)),
    dwconv("1x7 SAME 12 channels (parts of 3, 3 and 1 columns)", (1, 3, 9, 12), (1, 7), (3, 9)),
    # scales of 1/2 and more: shifts of 0 and above (no rounding shift), per channel and tensor
    dwconv("3x3 SAME 12 channels shifts 0 and 1", (1, 5, 5, 12), (3, 3), (5, 5),
           out_scale=0.0004),
    dwconv("3x3 SAME 8 channels per-tensor shift 3", (1, 4, 4, 8), (3, 3), (4, 4),
           per_channel=False, out_scale=0.00006, zps=(3, -7)),
    fc("depth 18 units 7 batch 3 RELU", (3, 18), 7, act=ACT_RELU),
    fc("depth 64 units 8 per-channel", (2, 64), 8, per_channel=True, zps=(127, -128)),
    fc("depth 3 units 2 no bias", (1, 3), 2, with_bias=False, zps=(0, 0), out_scale=0.01),
    fc("depth 130 units 10", (1, 130), 10, out_scale=1.0),
    fc("weight zero point (reference loop)", (2, 16), 5, filter_zp=3),
    # one_row: a single value per row; rows in chunks of 32 with a block tail and a value tail
    fc("depth 1 units 16", (1, 1), 16, act=ACT_RELU),
    fc("depth 6 units 37 per-channel", (1, 6), 37, per_channel=True),
    # one_row's 16-value loop entered at its second, third and fourth step; per-tensor
    # requantization with an even half (clamped, full range) and with a shift of -1 (half 1)
    fc("depth 44 units 9 per-tensor RELU", (1, 44), 9, act=ACT_RELU),
    fc("depth 24 units 12 per-tensor full range", (1, 24), 12, zps=(3, -128)),
    fc("depth 20 units 8 per-tensor shift -1 no bias", (1, 20), 8, out_scale=0.001, zps=(5, 0),
       with_bias=False),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_fast_s8"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
