"""Conformance of the short int8 forms of ADD, SUB and MUL (elementwise.c's fast_q8) with the
real TFLM: one-operator models on the runtime's ASan+UBSan build and on TFLM with the same
inputs (int8 inputs span the type, ends included), outputs bit for bit. The cases hit what
changes those forms: equal input scales (a rescale by exactly 1/2, no rounding shift), an
output multiplier of at least 1/2 (no output shift), MUL's left shift, zero points at the
int8 ends, odd sizes, broadcast shapes (either input repeated over the output's rows, which
walks in rows, and broadcasts that take the general index walk), fused activations, and a MUL
multiplier beyond what
the forms admit (the general loop; TFLM itself aborts on an ADD/SUB output multiplier of 1 or
more). tests/runtime/test_runtime_qemu.py runs the same cases on a
Cortex-M4 (the DSP's SMMULR) against the host build, test_runtime_mve_qemu.py on the
Cortex-M55 (Helium's four-lane loop, fast_mve_elementwise.c) against TFLM.
"""

from __future__ import annotations

import pytest
from support.conformance import Case, T, check, q8, run_cases

ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 1, 2, 3
OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}


def case(op: str, name: str, a: T, b: T, out: T, act: int = 0) -> Case:
    return Case(f"{op} int8 {name}", op, [a, b], [out], OPTIONS[op], {0: ("b", act)} if act else {})


def add_sub(op: str) -> list[Case]:
    cases = [
        case(op, "odd shape zero points at the ends", q8((3, 5, 7), 0.05, -128),
             q8((3, 5, 7), 0.03, 127), q8((3, 5, 7), 0.07, 3)),
        case(op, "equal input scales (no input shift)", q8((1, 17, 19, 16), 0.04, 5),
             q8((1, 17, 19, 16), 0.04, -7), q8((1, 17, 19, 16), 0.08, -2)),
        case(op, "broadcast channels RELU", q8((1, 4, 5, 6), 0.02, -3), q8((1, 1, 1, 6), 0.05, 9),
             q8((1, 4, 5, 6), 0.04, -128), ACT_RELU),
        case(op, "broadcast both ways RELU6", q8((2, 3, 1), 0.1, 0), q8((1, 3, 4), 0.06, -20),
             q8((2, 3, 4), 0.05, -128), ACT_RELU6),
        case(op, "first input repeated over rows", q8((5, 7), 0.03, 11), q8((2, 3, 5, 7), 0.05, -9),
             q8((2, 3, 5, 7), 0.06, 4)),
        case(op, "scalar RELU_N1_TO_1", q8((5, 3), 0.01, 100), q8((1,), 0.02, -50),
             q8((5, 3), 0.01, 0), ACT_RELU_N1_TO_1),
        case(op, "output multiplier above 1/2 (no output shift)", q8((7, 9), 0.5, -1),
             q8((7, 9), 0.4, 2), q8((7, 9), 1.2e-6, 1)),
        # Helium's loop: the second input's scale the larger, a two-value tail, rows of 5
        case(op, "second scale larger, 4n + 2 values, negative outputs", q8((2, 3, 7), 0.01, 60),
             q8((2, 3, 7), 0.09, -100), q8((2, 3, 7), 0.004, 90)),
        case(op, "second input repeated in rows of 5 RELU", q8((3, 4, 5), 0.02, -128),
             q8((4, 5), 0.03, 127), q8((3, 4, 5), 0.03, -60), ACT_RELU),
    ]  # fmt: skip
    return cases


def mul() -> list[Case]:
    return [
        case("MUL", "odd shape zero points at the ends", q8((3, 5, 7), 0.05, -128),
             q8((3, 5, 7), 0.03, 127), q8((3, 5, 7), 0.9, 3)),
        case("MUL", "output multiplier above 1/2 (no shift)", q8((1, 9, 11, 8), 0.04, 5),
             q8((1, 9, 11, 8), 0.05, -7), q8((1, 9, 11, 8), 0.0028, -2)),
        case("MUL", "left shift 3 broadcast channels", q8((1, 4, 5, 6), 0.1, -3),
             q8((1, 1, 1, 6), 0.1, 9), q8((1, 4, 5, 6), 0.0018, 0)),
        case("MUL", "broadcast both ways RELU6", q8((2, 3, 1), 0.1, 0), q8((1, 3, 4), 0.06, -20),
             q8((2, 3, 4), 0.05, -128), ACT_RELU6),
        case("MUL", "scalar RELU", q8((5, 3), 0.02, 100), q8((1,), 0.02, -50),
             q8((5, 3), 0.03, -128), ACT_RELU),
        case("MUL", "first input per channel, rank 4 against rank 1", q8((6,), 0.05, 2),
             q8((1, 4, 5, 6), 0.04, -7), q8((1, 4, 5, 6), 0.03, 1)),
        case("MUL", "middle axis broadcast (general walk)", q8((2, 1, 4), 0.05, 2),
             q8((2, 3, 4), 0.04, -7), q8((2, 3, 4), 0.03, 1)),
        case("MUL", "first input repeated in rows of 7, 4n + 3 values per row",
             q8((7,), 0.06, -128), q8((2, 5, 7), 0.07, 127), q8((2, 5, 7), 0.01, -5)),
        case("MUL", "left shift 15 (general loop)", q8((6, 5), 1.0, 0), q8((6, 5), 1.0, 0),
             q8((6, 5), 2.5e-5, 0)),
    ]  # fmt: skip


CASES = [*add_sub("ADD"), *add_sub("SUB"), *mul()]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_fast_elementwise"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
