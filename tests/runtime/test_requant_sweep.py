"""Requantization against the real TFLM, operator by operator, on every int8 and int16 input
value under seeded random scales (support.requant_sweep). A few configurations per operator
here; `tools/sweep_requant.py --configs N` runs many (counts in docs/operators.md).

RELU, LEAKY_RELU and ABS once formed their scale ratios in float, as TFLM's source writes them;
the pip TFLM's results are those of the ratios in double, and int16 inputs differed by one
step on a few values in almost every configuration: config 0 of each catches it.
"""

from __future__ import annotations

import pytest
from support.conformance import check, run_cases
from support.requant_sweep import cases

CASES = cases(range(2))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_cases(CASES, tmp_path_factory.mktemp("requant"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_input_matches_tflm(results, case):
    check(case, results[case.name])
