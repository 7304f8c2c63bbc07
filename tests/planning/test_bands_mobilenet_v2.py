"""Bands on a converter-made MobileNetV2 (alpha 0.35, 160x160, tools/make_mobilenets.py).

Its early stages are inverted-residual blocks: a residual ADD whose two branches both lie in
the banded stage runs in bands; a cut between a branch and its ADD is refused. On the real TFLM
(reference kernels) the banded, planned model's head is the plan's and at most 0.6x the
--overlap head; its outputs, every byte of the cut tensor T and of the last feature map before
the pool equal the original's. This project's runtime runs it with the same outputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.tflm_oracle import MOBILENET_V2, MOBILENET_V2_BANDS, random_inputs, run_tflm
from test_bands import _concat_op, _same_outputs, _truncated

from host.planning import band_choice, checker
from host.planning.libraries.base import KernelLibrary
from host.planning.libraries.microarena import MICROARENA
from host.planning.libraries.reference import REFERENCE
from host.planning.model import metadata
from host.planning.plan import PlanResult, plan_model
from host.rewrite import bands as rw
from host.runtime.binding import Interpreter
from host.tflite.model import Model

CUT, BANDS = MOBILENET_V2_BANDS  # test_choice_and_20_inputs checks host.plan's own choice
TARGET = 0.6  # the bound: head at most 0.6x the --overlap head


@pytest.fixture(scope="module")
def original() -> Model:
    return Model.load(MOBILENET_V2)


def _bounds(model: Model, cut: int, count: int) -> list[int]:
    t = rw.find_stage(model, cut).t_tensor
    bounds = band_choice.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], count)
    assert bounds is not None
    return bounds


def _planned(original: Model, cut: int, count: int, lib: KernelLibrary) -> tuple[Model, PlanResult]:
    banded, result = band_choice.plan_banded(
        original, cut, _bounds(original, cut, count), lib, True, 1.5
    )
    metadata.embed(banded, result.tensor_offsets())
    assert checker.check(banded, lib) == []
    return banded, result


def _features(model: Model) -> tuple[int, int]:
    """(operators up to the global pool, the feature map it reads): the last map whose every
    byte depends on the input (the pool averages random inputs to near-constant features)."""
    pool = next(op for op in model.subgraphs[0].operators if op.name == "MEAN")
    return pool.index, pool.inputs[0]


def _same_maps(original: Model, banded: Model, cut: int, runs: int) -> None:
    """Every byte of T and of the features before the pool, banded (under its embedded plan)
    vs the original, on the real TFLM."""
    t = rw.find_stage(original, cut).t
    want = _truncated(original, cut + 1, t)
    _same_outputs(want, _truncated(banded, _concat_op(banded, t) + 1, t), runs)
    (ops_a, f), (ops_b, f_b) = _features(original), _features(banded)
    assert f == f_b  # the operators after the cut keep their tensors
    _same_outputs(_truncated(original, ops_a, f), _truncated(banded, ops_b, f), runs)


def test_head_at_most_0_6_of_overlap_on_tflm(original: Model) -> None:
    banded, result = _planned(original, CUT, BANDS, REFERENCE)
    over = plan_model(original, "best", 1.5, REFERENCE, None, overlap=True)
    data = banded.to_bytes()
    assert run_tflm(data).head == result.head
    assert result.head <= TARGET * over.head, f"head {result.head} B, --overlap {over.head} B"
    stage = rw.find_stage(original, CUT)
    assert rw.band_macs(stage, _bounds(original, CUT, BANDS)) > rw.stage_macs(stage)
    _same_outputs(original.to_bytes(), data, 3)
    _same_maps(original, banded, CUT, 2)


def test_residual_inside_the_stage(original: Model) -> None:
    """Cut after block 3's projection: the stage holds block 2 whole, its ADD reading the
    output of block 1 (a branch of rows the bands' union of needs) and block 2's projection."""
    ops = original.subgraphs[0].operators
    add = next(op for op in ops if op.name == "ADD")
    cut = next(op.index for op in ops[add.index + 1 :] if op.name == "DEPTHWISE_CONV_2D") + 1
    assert rw.find_stage(original, cut).ops[add.index].op.name == "ADD"
    banded, result = _planned(original, cut, 3, REFERENCE)
    assert run_tflm(banded.to_bytes()).head == result.head
    _same_outputs(original.to_bytes(), banded.to_bytes(), 2)
    _same_maps(original, banded, cut, 2)


def test_residual_crossing_the_cut_is_refused(original: Model) -> None:
    ops = original.subgraphs[0].operators
    add = next(op for op in ops if op.name == "ADD")
    with pytest.raises(rw.BandError, match=rf"by operator {add.index} \(ADD\): a residual"):
        rw.find_stage(original, add.index - 1)
    assert add.index - 1 not in band_choice.cuts(original)


def test_runs_on_this_runtime(original: Model) -> None:
    """Planned for this runtime (which reuses no rows of the stage input): its outputs and its
    features before the pool equal TFLM's on the original."""
    banded, result = _planned(original, CUT, BANDS, MICROARENA)
    over = plan_model(original, "best", 1.5, MICROARENA, None, overlap=True)
    assert result.head < over.head
    assert Interpreter(banded.to_bytes()).stats().head == result.head
    ops, f = _features(banded)
    for data, tflm_model in (
        (banded.to_bytes(), original.to_bytes()),
        (_truncated(banded, ops, f), _truncated(original, *_features(original))),
    ):
        it = Interpreter(data)
        for seed in range(2):
            (x,) = random_inputs(it, 1, seed)
            it.set_input(0, x)
            it.invoke()
            want = run_tflm(tflm_model, seed).outputs[0]
            np.testing.assert_array_equal(it.get_output(0), want)


@pytest.mark.slow
def test_choice_and_20_inputs(original: Model) -> None:
    """host.plan --bands --overlap --kernels reference's own choice (every cut and count, about
    a minute): at most 0.6x the --overlap head on the real TFLM; outputs, T and features
    identical on 20 inputs."""
    banding = band_choice.apply(original, 0.1, REFERENCE, True)
    c = banding.chosen
    assert c is not None and 0 < c.added_fraction <= 0.1
    result = plan_model(
        banding.model, "best", 1.5, REFERENCE, None, overlap=True, **banding.placement
    )
    metadata.embed(banding.model, result.tensor_offsets())
    data = banding.model.to_bytes()
    assert run_tflm(data).head == result.head <= TARGET * banding.unbanded_head
    _same_outputs(original.to_bytes(), data, 20)
    _same_maps(original, banding.model, c.cut, 20)
