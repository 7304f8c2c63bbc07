"""Requantization against the real TFLM, operator by operator, on every int8 and int16 input
value under seeded random scales (support.requant_sweep). One or two configurations per
operator here; `tools/sweep_requant.py --configs N` runs many (counts in docs/kernels.md).

RELU, LEAKY_RELU and ABS once formed their scale ratios in float, as TFLM's source writes them;
the pip TFLM's results are those of the ratios in double, and int16 inputs differed by one
step on a few values in almost every configuration: config 0 of each catches it. Per-tensor
FULLY_CONNECTED did the same with int16 inputs (config 0 catches it); for its int8 inputs, for
BATCH_MATMUL and for SVDF's output requantization the crafted ties catch it.
"""

from __future__ import annotations

import pytest
from support.conformance import run_cases
from support.requant_sweep import OPS, WEIGHTED, case, check_bits, tie_cases, weighted_case

CASES = [
    *(case(op, t, k) for op in OPS for t in op.types for k in range(2)),
    *(weighted_case(op, t, 0) for op in WEIGHTED for t in op.types),
    *tie_cases(),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_cases(CASES, tmp_path_factory.mktemp("requant"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_input_matches_tflm(results, case):
    check_bits(case, results[case.name])
