"""A short seeded run of the model fuzzers (tests/support/model_fuzz.py; run long by hand with
tools/fuzz_models.py), and the findings kept as regression cases."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.callgraph_models import fanout_model
from support.model_fuzz import check_call_graph, check_plan, fuzz, random_plan
from support.subgraph_models import shared_branch_model, variable_state_model

from host.tflite.model import Model

ROUNDS = 3


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzzers_find_nothing(seed: int, tmp_path: Path) -> None:
    findings = [f for f in fuzz(seed, tmp_path, rounds=ROUNDS) if f is not None]
    assert not findings, "\n".join(f"{f.fuzzer}: {f.message}" for f in findings)


def test_the_findings_pass_the_call_graph_check() -> None:
    """Finding 1 of issue 18 (a subgraph called twice) fails this check before its fix."""
    assert check_call_graph(shared_branch_model()) is None
    assert check_call_graph(fanout_model([2, 3, 2])) is None


@pytest.mark.parametrize("seed", range(20))
def test_random_plans_of_a_shared_branch_and_a_variable(seed: int) -> None:
    """Plans over the two models of findings 1 and 2: --check and the runtime agree, and an
    accepted plan leaves the outputs as they were."""
    rng = random.Random(seed)
    for data in (shared_branch_model(), variable_state_model()[0]):
        assert check_plan(data, random_plan(rng, Model(data))) is None
