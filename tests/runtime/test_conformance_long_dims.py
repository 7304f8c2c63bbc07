"""Dimensions above 32,767 (issue 26, class 5): a 1-D convolution over 2.5 s of 16 kHz audio
has an input 40,000 wide. TFLM runs such models and so must the runtime; what it cannot hold
(a stride, dilation, filter size or padding above 32,767: its op data keeps them in 16 bits)
is refused naming that limit, not called malformed."""

from __future__ import annotations

import numpy as np
import pytest
from support.conformance import I8, I32, Case, T, check, f32, q8, run_cases

WIDE = 40_000
SAME, VALID = 0, 1
RNG = np.random.default_rng(26)


def conv_slots(padding: int, stride: int, dilation: int = 1) -> dict:
    return {0: ("B", padding), 1: ("i", stride), 2: ("i", 1), 3: ("b", 0),
            4: ("i", dilation), 5: ("i", 1)}  # fmt: skip


def conv(name: str, taps: int, stride: int, padding: int, out_w: int, dilation: int = 1,
         refuse: tuple[str, list[str]] | None = None) -> Case:  # fmt: skip
    w = T((3, 1, taps, 2), I8, [0.02], [0], data=RNG.integers(-127, 128, (3, 1, taps, 2)))
    b = T((3,), I32, [0.001 * 0.02], [0], data=RNG.integers(-5000, 5000, 3))
    return Case(f"CONV_2D int8 {name}", "CONV_2D", [q8((1, 1, WIDE, 2), 0.05, 3), w, b],
                [q8((1, 1, out_w, 3), 0.3, -4)], "Conv2DOptions",
                conv_slots(padding, stride, dilation), refuse=refuse)  # fmt: skip


def depthwise(name: str, taps: int, stride: int, padding: int, out_w: int) -> Case:
    w = T((1, 1, taps, 4), I8, [0.02], [0], data=RNG.integers(-127, 128, (1, 1, taps, 4)))
    b = T((4,), I32, [0.001], [0], data=RNG.integers(-5000, 5000, 4))
    slots = {**conv_slots(padding, stride), 3: ("i", 1), 4: ("b", 0), 5: ("i", 1), 6: ("i", 1)}
    return Case(f"DEPTHWISE_CONV_2D int8 {name}", "DEPTHWISE_CONV_2D",
                [q8((1, 1, WIDE, 4), 0.05, 3), w, b], [q8((1, 1, out_w, 4), 0.2, 1)],
                "DepthwiseConv2DOptions", slots)  # fmt: skip


def pool(op: str, x: T, out: T, filt: int, stride: int, padding: int) -> Case:
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", 1), 3: ("i", filt), 4: ("i", 1)}
    name = "int8" if x.dtype == I8 else "float"
    return Case(f"{op} {name} {WIDE} wide filter {filt} stride {stride}", op, [x], [out],
                "Pool2DOptions", slots)  # fmt: skip


CASES = [
    conv("9 taps SAME", 9, 1, SAME, WIDE),
    conv("400 taps stride 160 VALID (a frame of 25 ms every 10 ms)", 400, 160, VALID,
         (WIDE - 400) // 160 + 1),
    conv("5 taps dilation 3 SAME", 5, 1, SAME, WIDE, dilation=3),
    depthwise("9 taps stride 2 SAME", 9, 2, SAME, WIDE // 2),
    pool("MAX_POOL_2D", q8((1, 1, WIDE, 2), 0.05, 3), q8((1, 1, WIDE // 4, 2), 0.05, 3), 4, 4,
         VALID),
    pool("AVERAGE_POOL_2D", q8((1, 1, WIDE, 2), 0.05, 3), q8((1, 1, WIDE // 3 + 1, 2), 0.05, 3),
         5, 3, SAME),
    pool("MAX_POOL_2D", f32((1, 1, WIDE, 2)), f32((1, 1, WIDE, 2)), 3, 1, SAME),
    conv("stride 40000 refused", 1, WIDE, VALID, 1,
         refuse=("MA_ERR_UNSUPPORTED", ["CONV_2D", "stride 40000", "limit of 32767"])),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("wide"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
