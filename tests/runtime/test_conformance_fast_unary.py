"""Conformance of int8 LOGISTIC and TANH and of QUANTIZE int8/uint8/int16 -> int8 with the
real TFLM, for their Helium loops (kernels/fast/mve/fast_mve_activations.c, which evaluates
activations.c's fixed-point steps four lanes at a time, and fast_mve_quantize.c): one-operator
models on the runtime's ASan+UBSan build (the portable loops) and on TFLM with the same inputs,
outputs bit for bit. 255 values (a 3-value tail of the four lanes); LOGISTIC and TANH with input
scales from fine to coarse and zero points at the int8 ends, so that the input minus its zero
point covers both signs, both saturation radii and 0; QUANTIZE (int8, uint8 and int16 inputs)
with multipliers below and above 1 (left shifts), saturating outputs and zero points at the
ends.
tests/runtime/test_runtime_mve_qemu.py runs them on the Cortex-M55 against TFLM (the
firmware's deterministic input: 251 distinct values); QUANTIZE of equal scales (quantize.c's
offset a word at a time, QADD8 on the DSP) also runs on the Cortex-M4 (test_runtime_qemu.py).
"""

from __future__ import annotations

import pytest
from support.conformance import U8, Case, T, check, q8, q16, run_cases

SHAPE = (1, 255)


def sigmoid(op: str, name: str, scale: float, zp: int) -> Case:
    out = q8(SHAPE, 1 / 256, -128) if op == "LOGISTIC" else q8(SHAPE, 1 / 128, 0)
    return Case(f"{op} int8 {name}", op, [q8(SHAPE, scale, zp)], [out])


CASES = [
    sigmoid("LOGISTIC", "scale 0.09 zero point -7", 0.09, -7),
    sigmoid("LOGISTIC", "fine scale 0.004 zero point 10", 0.004, 10),
    sigmoid("LOGISTIC", "coarse scale 0.3 zero point 127 (negative side)", 0.3, 127),
    sigmoid("LOGISTIC", "scale 0.05 zero point -128 (positive side)", 0.05, -128),
    sigmoid("TANH", "scale 0.05 zero point 3", 0.05, 3),
    sigmoid("TANH", "fine scale 0.002 zero point -128", 0.002, -128),
    sigmoid("TANH", "coarse scale 0.3 zero point 127", 0.3, 127),
    sigmoid("TANH", "scale 0.02 zero point -3", 0.02, -3),
    Case("QUANTIZE int16 -> int8 right shift", "QUANTIZE", [q16(SHAPE, 0.0005)],
         [q8(SHAPE, 0.05, 3)]),
    Case("QUANTIZE int16 -> int8 left shift saturating", "QUANTIZE", [q16(SHAPE, 0.01)],
         [q8(SHAPE, 0.002, -128)]),
    Case("QUANTIZE int8 -> int8 left shift zero points at the ends", "QUANTIZE",
         [q8(SHAPE, 0.05, -128)], [q8(SHAPE, 0.03, -100)]),
    Case("QUANTIZE int8 -> int8 right shift", "QUANTIZE", [q8(SHAPE, 0.02, 100)],
         [q8(SHAPE, 0.09, -20)]),
    Case("QUANTIZE uint8 -> int8 (a camera input)", "QUANTIZE", [T(SHAPE, U8, [0.004], [128])],
         [q8(SHAPE, 0.004, 0)]),
    Case("QUANTIZE uint8 -> int8 right shift", "QUANTIZE", [T(SHAPE, U8, [0.01], [3])],
         [q8(SHAPE, 0.03, -100)]),
    # equal scales: the offset alone (quantize.c's words), saturating both ways
    Case("QUANTIZE uint8 -> int8 equal scales zero points 200 and 10", "QUANTIZE",
         [T(SHAPE, U8, [0.004], [200])], [q8(SHAPE, 0.004, 10)]),
    Case("QUANTIZE int8 -> int8 equal scales zero points -100 and 20", "QUANTIZE",
         [q8(SHAPE, 0.02, -100)], [q8(SHAPE, 0.02, 20)]),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_fast_unary"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
