"""The project's own demo model: deterministic, and the real TFLM runs it (planned or not)."""

from __future__ import annotations

import numpy as np
from support.tflm_oracle import run_tflm

from host.planning.model import metadata
from host.planning.plan import plan_model
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model


def test_demo_model_is_deterministic() -> None:
    assert build_demo_model(0) == build_demo_model(0)
    assert build_demo_model(0) != build_demo_model(1)


def test_tflm_runs_demo_model_and_output_depends_on_input() -> None:
    data = build_demo_model()
    runs = [run_tflm(data, seed=s) for s in range(4)]
    outs = [r.outputs[0] for r in runs]
    assert outs[0].dtype == np.int8 and outs[0].shape == (1, 4)
    assert any(not np.array_equal(outs[0], o) for o in outs[1:])
    # softmax output: int8 probabilities summing to about one (zero point -128, scale 1/256)
    assert abs(((outs[0].astype(int) + 128) / 256).sum() - 1) < 0.05


def test_demo_model_plan_in_tflm() -> None:
    model = Model(build_demo_model())
    result = plan_model(model)
    metadata.embed(model, result.tensor_offsets())
    before, after = run_tflm(build_demo_model()), run_tflm(model.to_bytes())
    assert np.array_equal(before.outputs[0], after.outputs[0])
    assert after.head == result.head <= before.head
