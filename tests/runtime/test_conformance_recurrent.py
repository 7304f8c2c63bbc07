"""Conformance of SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM int8 with the real TFLM over several
invocations (their state is in variable tensors carried between them): one-operator models on
the runtime's ASan+UBSan build and on TFLM with the same inputs, every invocation's output bit
for bit. The cases hit the four-wide dot products' tails (input, memory and cell counts that
are not multiples of 4), SVDF's rank 2, batches, both LSTM layouts, zero points at the int8
ends (input, state, hidden), weight zero points (the LSTM's plain loop), and SVDF's int16
state (rows of whole words moved a word at a time, others element by element).
tests/runtime/test_runtime_qemu.py runs them on a Cortex-M4 (the DSP form) against the host
build, tests/runtime/test_runtime_mve_qemu.py on a Cortex-M55 (Helium dot products) against
TFLM.
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


def lstm(
    name: str,
    steps: int,
    batch: int,
    n_in: int,
    n_cell: int,
    time_major: bool = True,
    zps: tuple[int, int] = (-7, 3),
    weight_zp: int = 0,
    clip: float = 0.0,
    cell_scale: float = 2.0**-11,
    h_scale: float = 0.02,
) -> Case:
    """int8 LSTM with an int16 cell state; zps: input and hidden (output) zero points."""
    w = [T((n_cell, n_in), I8, [0.02], [weight_zp], RNG.integers(-127, 128, (n_cell, n_in)))
         for _ in range(4)]  # fmt: skip
    r = [T((n_cell, n_cell), I8, [0.03], [0], RNG.integers(-127, 128, (n_cell, n_cell)))
         for _ in range(4)]  # fmt: skip
    b = [T((n_cell,), I32, [0.05 * 0.02], [0], RNG.integers(-3000, 3000, n_cell)) for _ in range(4)]
    state = [T((batch, n_cell), I8, [h_scale], [zps[1]], variable=True),
             T((batch, n_cell), I16, [cell_scale], [0], variable=True)]  # fmt: skip
    shape = (steps, batch, n_in) if time_major else (batch, steps, n_in)
    out = (steps, batch, n_cell) if time_major else (batch, steps, n_cell)
    ins = [q8(shape, 0.05, zps[0]), *w, *r, None, None, None, *b, None, None, *state]
    return Case(f"UNIDIRECTIONAL_SEQUENCE_LSTM int8 {name}", "UNIDIRECTIONAL_SEQUENCE_LSTM",
                [*ins, None, None, None, None], [q8(out, h_scale, zps[1])],
                "UnidirectionalSequenceLSTMOptions",
                {0: ("b", 4), 1: ("f", clip), 3: ("B", int(time_major))}, invokes=3)  # fmt: skip


CASES = [
    svdf("rank 1 input 13 memory 5", 1, 13, 6, 5, 1),
    svdf("rank 2 batch 2 memory 7 RELU", 2, 8, 8, 7, 2, act=1),
    svdf("zero points at the ends input 96 memory 8", 1, 96, 16, 8, 1, zps=(127, -128, 127)),
    svdf("state zero point 100 input 3", 1, 3, 4, 9, 2, zps=(-128, 100, 0)),
    svdf("int16 state rank 2 input 9", 2, 9, 6, 5, 2, state_type=I16),
    # Memories of whole words: each row pushed and multiplied a word at a time (one word: 4).
    svdf("input 17 filters 6 memory 8 words", 1, 17, 6, 8, 1, zps=(5, -128, 3)),
    svdf("rank 2 batch 2 input 33 memory 4 one word", 2, 33, 10, 4, 2, zps=(-9, 127, -1)),
    svdf("int16 state memory 8 words", 2, 9, 6, 8, 1, state_type=I16),
    lstm("time-major batch 2 input 28 cells 20", 3, 2, 28, 20),
    lstm("batch-major input 7 cells 5 (tails) clip", 4, 2, 7, 5, time_major=False, clip=1.5),
    lstm("zero points at the ends input 13 cells 9", 2, 1, 13, 9, zps=(127, -128)),
    lstm("weight zero point (plain loop)", 2, 1, 8, 4, weight_zp=3),
    lstm("input 33 cells 17 (16-byte vector tails)", 2, 1, 33, 17),
    # A small clip and a fine hidden scale, so that a tanh one step off shows in the outputs.
    lstm(
        "cell scale 2^-14 (tanh input shifted right) clip 0.01",
        *(3, 2, 12, 6),
        clip=0.01,
        cell_scale=2.0**-14,
        h_scale=2.0**-14,
    ),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_recurrent"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
