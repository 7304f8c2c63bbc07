"""Conformance of SVDF int8 with the real TFLM over several invocations (the state is a
variable tensor carried between them, shifted by one step each time): one-operator models on
the runtime's ASan+UBSan build and on TFLM with the same inputs, every invocation's output bit
for bit. The cases hit the four-wide dot products' tails (input and memory lengths that are not
multiples of 4), rank 2, batches, zero points at the int8 ends (input and state), and the
int16 state whose time products stay in the plain loop. tests/runtime/test_runtime_qemu.py
runs them on a Cortex-M4 (the DSP form) against the host build.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.conformance import I8, I16, I32, Case, T, check, q8, run_cases

RNG = np.random.default_rng(44)


def svdf(
    name: str,
    batch: int,
    n_input: int,
    n_filter: int,
    n_memory: int,
    rank: int,
    zps: tuple[int, int, int] = (3, 0, -4),
    state_type: int = I8,
    act: int = 0,
) -> Case:
    """int8 SVDF; zps: input, state, output zero points."""
    n_unit = n_filter // rank
    tmax = 127 if state_type == I8 else 20_000
    time_scale, state_scale = (0.01, 1.0) if state_type == I8 else (0.0004, 0.002)
    # TFLM requires the bias scale to be the state scale times the time weights' scale.
    ins = [
        q8((batch, n_input), 0.05, zps[0]),
        T((n_filter, n_input), I8, [0.01], [0], RNG.integers(-127, 128, (n_filter, n_input))),
        T((n_filter, n_memory), state_type, [time_scale], [0],
          RNG.integers(-tmax, tmax + 1, (n_filter, n_memory))),
        T((n_unit,), I32, [time_scale * state_scale], [0], RNG.integers(-3000, 3000, n_unit)),
        T((batch, n_filter * n_memory), state_type, [state_scale], [zps[1]], variable=True),
    ]  # fmt: skip
    out = q8((batch, n_unit), 2.0 if state_type == I8 else 0.05, zps[2])
    return Case(f"SVDF int8 {name}", "SVDF", ins, [out], "SVDFOptions",
                {0: ("i", rank), 1: ("b", act)}, invokes=4)  # fmt: skip


CASES = [
    svdf("rank 1 input 13 memory 5", 1, 13, 6, 5, 1),
    svdf("rank 2 batch 2 memory 7 RELU", 2, 8, 8, 7, 2, act=1),
    svdf("zero points at the ends input 96 memory 8", 1, 96, 16, 8, 1, zps=(127, -128, 127)),
    svdf("state zero point 100 input 3", 1, 3, 4, 9, 2, zps=(-128, 100, 0)),
    svdf("int16 state rank 2 input 9", 2, 9, 6, 5, 2, state_type=I16),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_recurrent"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
