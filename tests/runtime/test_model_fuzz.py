"""A short seeded run of the model fuzzers (tests/support/model_fuzz.py; run long by hand with
tools/fuzz_models.py), and the findings kept as regression cases."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.callgraph_models import fanout_model
from support.model_fuzz import (
    check_call_graph,
    check_mutation,
    check_plan,
    fuzz,
    random_plan,
    tflm_in_child,
)
from support.subgraph_models import shared_branch_model, variable_state_model

from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]

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


FINDINGS = REPO / "tests/data/fuzz"


@pytest.mark.parametrize(
    "name, refusal",
    [
        # TFLM's pooling Prepare refuses int8/int16 pooling that would requantize.
        ("max_pool_requantizes", "input and output quantization differ"),
        ("average_pool_requantizes", "input and output quantization differ"),
        # DepthwiseConv2DOptions.depth_multiplier 2050 for 6 -> 12 channels: TFLM's kernel
        # loops over the option and gives a different garbage output each run.
        ("depthwise_multiplier_mismatch", "depth multiplier 2050 does not match 6 -> 12"),
        # An LSTM state of shape [1, 4, 4, 1] for [1, 16]: TFLM's Prepare wants [batch, cells].
        ("lstm_state_reshaped", "state or output shape does not match"),
        # An LSTM cell clip below one cell-state step: TFLM clamps the cell to 0, the runtime
        # did not clip at all.
        ("lstm_tiny_cell_clip", None),
    ],
)
def test_mutation_findings(name: str, refusal: str | None, tmp_path: Path) -> None:
    data = (FINDINGS / f"{name}.tflite").read_bytes()
    assert check_mutation(data, tmp_path) is None
    if refusal is not None:
        with pytest.raises(MicroarenaError, match=refusal):
            Interpreter(data)
    else:
        assert not isinstance(tflm_in_child(data, tmp_path), str)  # both ran, alike
