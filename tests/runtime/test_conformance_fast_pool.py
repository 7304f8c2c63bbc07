"""Conformance of the int8 pools' four-channel loops (pooling.c's pool_s8_pixel) with the real
TFLM: AVERAGE_POOL_2D and MAX_POOL_2D one-operator models on the runtime's ASan+UBSan build and
on TFLM with the same inputs (int8 inputs span the type, ends included), outputs bit for bit.
The cases hit depths that are not multiples of 4 (the one-channel tail), SAME windows clipped
by the image, strides, batches, fused activations, zero points at the int8 ends, a global
window (kws's 25x5), 255 cells and more (beyond the 16-bit lane sums of the DSP and Helium
loops), depths across Helium's 16- and 8-channel steps and one-cell windows.
tests/runtime/test_runtime_qemu.py runs them on a Cortex-M4 against the host build,
test_runtime_mve_qemu.py on the Cortex-M55 (fast_mve_pool.c) against TFLM.
"""

from __future__ import annotations

import pytest
from support.conformance import Case, check, q8, run_cases

SAME, VALID = 0, 1
ACT_RELU, ACT_RELU6 = 1, 3


def pool(op: str, name: str, ins: tuple[int, int, int, int], out_hw: tuple[int, int],
         window: tuple[int, int], stride: int = 1, padding: int = VALID, act: int = 0,
         zp: int = 3, scale: float = 0.05) -> Case:  # fmt: skip
    out = (ins[0], *out_hw, ins[3])
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("i", window[1]),
             4: ("i", window[0]), 5: ("b", act)}  # fmt: skip
    return Case(f"{op} int8 {name}", op, [q8(ins, scale, zp)], [q8(out, scale, zp)],
                "Pool2DOptions", slots)  # fmt: skip


def cases(op: str) -> list[Case]:
    return [
        pool(op, "2x2 stride 2 depth 8 zero point 127", (1, 8, 10, 8), (4, 5), (2, 2),
             stride=2, zp=127),
        pool(op, "SAME 3x3 stride 2 depth 7 clipped windows", (2, 7, 9, 7), (4, 5), (3, 3),
             stride=2, padding=SAME),
        pool(op, "SAME 3x3 depth 5 RELU6", (1, 5, 6, 5), (5, 6), (3, 3), padding=SAME,
             act=ACT_RELU6, zp=-128, scale=0.03),
        pool(op, "VALID 3x2 depth 12 RELU", (1, 6, 7, 12), (4, 6), (3, 2), act=ACT_RELU,
             zp=-20),
        pool(op, "global 25x5 depth 64", (1, 25, 5, 64), (1, 1), (25, 5)),
        pool(op, "global 16x17 (272 cells) depth 6", (1, 16, 17, 6), (1, 1), (16, 17),
             zp=-128),
        # Helium: 16- and 8-channel steps with tails, one-cell windows, 255 cells
        pool(op, "SAME 2x2 depth 37 RELU", (1, 5, 4, 37), (5, 4), (2, 2), padding=SAME,
             act=ACT_RELU, zp=-100),
        pool(op, "1x1 window stride 2 depth 20 (one cell)", (1, 5, 6, 20), (3, 3), (1, 1),
             stride=2, zp=-128),
        pool(op, "global 15x17 (255 cells) depth 19", (1, 15, 17, 19), (1, 1), (15, 17),
             zp=127),
    ]  # fmt: skip


CASES = [*cases("AVERAGE_POOL_2D"), *cases("MAX_POOL_2D")]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_fast_pool"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
