"""The planner against the real TFLM: for every shared model TFLM runs, the embedded plan
gives identical outputs, TFLM reports exactly the predicted head, and never more than TFLM's
own online planning."""

from __future__ import annotations

import numpy as np
import pytest
from support.tflm_oracle import run_tflm, runnable_models, shared_model

from host.planning import checker
from host.planning.model import metadata
from host.planning.plan import plan_model
from host.tflite.model import Model

RUNNABLE = runnable_models()


def _plan_and_embed(name: str) -> tuple[bytes, bytes, object]:
    original = shared_model(name).read_bytes()
    model = Model(original, name)
    result = plan_model(model, time_limit=5)
    metadata.embed(model, result.tensor_offsets())
    return original, model.to_bytes(), result


@pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv is absent")
@pytest.mark.parametrize("name", RUNNABLE or ["none"])
def test_embedded_plan_matches_tflm(name: str) -> None:
    original, planned, result = _plan_and_embed(name)
    before = run_tflm(original)
    after = run_tflm(planned)
    assert len(before.outputs) == len(after.outputs)
    for a, b in zip(before.outputs, after.outputs, strict=True):
        assert np.array_equal(a, b), f"{name}: outputs differ with the embedded plan"
    assert result.tflm_head == before.head, "simulated TFLM greedy head differs from TFLM's"
    assert after.head == result.head, "TFLM's head with the plan differs from the prediction"
    assert after.head <= before.head
    assert checker.check(Model(planned)) == []


def test_vww_reaches_lower_bound_in_tflm() -> None:
    _, planned, result = _plan_and_embed("tiny_vww_mobilenet_int8")
    after = run_tflm(planned)
    assert after.head <= 55296 < run_tflm(shared_model("tiny_vww_mobilenet_int8").read_bytes()).head
    assert after.head == result.lower_bound


def test_audio_preprocessor_reaches_bound_with_scratch() -> None:
    """A tensors-only plan makes TFLM stack the RFFT's 1024 B scratch on top (head 3120);
    planning around the scratch reaches the bound, which counts that scratch (3040)."""
    name = "tflm_audio_preprocessor_int8"
    original, planned, result = _plan_and_embed(name)
    after = run_tflm(planned).head
    assert after == result.lower_bound <= run_tflm(original).head
    assert sum(s.size for s in result.scratch) > 0
