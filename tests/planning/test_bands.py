"""Band rewrite (host.rewrite.bands) and its plan (host.planning.bands) on the real TFLM.

The rewritten model must give the original's outputs bit for bit, and its cut tensor T (joined
from the bands by a CONCATENATION whose inputs already sit at their destinations) must equal
the original's T in every byte, under the very plan host.plan embeds. The head the pip
interpreter reports must be the plan's.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import CONVERTER_MODELS, run_tflm, shared_model

from host.planning import bands, offline_plan
from host.planning.cli import main as plan_main
from host.rewrite import bands as rw
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model

RUNS = 20  # random inputs compared per model


def _truncated(model: Model, ops: int, output: int) -> bytes:
    """The model's first `ops` operators with tensor `output` as its only output; the tensors
    keep their indices, so an embedded plan places them where the full model does."""
    m = Model(model.to_bytes())
    sg = m.root.get(S.MODEL_SUBGRAPHS)[0]
    set_child(sg, S.SUBGRAPH_OPERATORS, sg.get(S.SUBGRAPH_OPERATORS)[:ops])
    set_child(sg, S.SUBGRAPH_OUTPUTS, struct.pack("<i", output))
    return m.to_bytes()


def _concat_op(model: Model) -> int:
    ops = model.subgraphs[0].operators
    return next(op.index for op in ops if op.name == "CONCATENATION")


def _same_outputs(a: bytes, b: bytes, runs: int) -> None:
    for seed in range(runs):
        want, got = run_tflm(a, seed).outputs, run_tflm(b, seed).outputs
        for x, y in zip(want, got, strict=True):
            assert np.array_equal(x, y), f"seed {seed}: outputs differ"


def _planned(model: Model, budget: float, overlap: bool) -> tuple[bands.Banding, Model, int]:
    banding = bands.apply(model, budget, "tflm", overlap)
    result = bands.plan_model(
        banding.model, "best", 1.5, "tflm", None, overlap=overlap, aliases=banding.aliases
    )
    assert result.offline, "the bands' plan should beat TFLM's own placement"
    offline_plan.embed(banding.model, result.tensor_offsets())
    assert offline_plan.check(banding.model, "tflm") == []
    return banding, banding.model, result.head


def _check_t(original: Model, banding: bands.Banding, planned: Model, runs: int) -> None:
    """Every byte of T, computed in bands under the plan, equals the original's T."""
    stage = rw.find_stage(original, banding.chosen.cut)
    want = _truncated(original, banding.chosen.cut + 1, stage.t)
    got = _truncated(planned, _concat_op(planned) + 1, stage.t)
    _same_outputs(want, got, runs)


def test_person_detect_half_the_head_on_tflm() -> None:
    """The issue's target: person_detect with --bands --overlap on the reference kernels."""
    original = Model.load(shared_model("tflm_person_detect_int8"))
    banding, planned, head = _planned(original, 0.1, overlap=True)
    tflm_original = run_tflm(original.to_bytes()).head
    assert head <= tflm_original // 2, f"head {head} B, TFLM's own {tflm_original} B"
    assert banding.chosen.added_macs > 0
    assert banding.chosen.added_macs <= 0.1 * banding.chosen.model_macs
    data = planned.to_bytes()
    assert run_tflm(data).head == head
    _same_outputs(original.to_bytes(), data, RUNS)
    _check_t(original, banding, planned, 4)


@pytest.mark.parametrize("overlap", [False, True])
def test_demo_model_every_cut(overlap: bool) -> None:
    """The project's own CNN (SAME stride-2 convolutions: explicit edge padding), banded at
    every cut with 2 and 3 bands: outputs and T identical, TFLM's head equals the plan's."""
    original = Model(build_demo_model(), "demo")
    for cut in bands.cuts(original):
        stage = rw.find_stage(original, cut)
        t = stage.t_tensor
        for count in (2, 3):
            bounds = bands.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], count)
            if bounds is None:
                continue
            banded, result = bands.plan_banded(original, cut, bounds, "tflm", overlap, 0.3)
            offline_plan.embed(banded, result.tensor_offsets())
            assert offline_plan.check(banded, "tflm") == []
            data = banded.to_bytes()
            assert run_tflm(data).head == result.head
            _same_outputs(original.to_bytes(), data, 3)
            want = _truncated(original, cut + 1, stage.t)
            _same_outputs(want, _truncated(banded, _concat_op(banded) + 1, stage.t), 2)


def test_converter_made_cnn_identical() -> None:
    """A converter-made MobileNetV3-like CNN (residual ADD/MUL, hard-swish) banded by cost."""
    path = CONVERTER_MODELS / "mobilenet_v3ish_int8.tflite"
    original = Model.load(path)
    banding, planned, head = _planned(original, 0.5, overlap=True)
    assert run_tflm(planned.to_bytes()).head == head
    _same_outputs(original.to_bytes(), planned.to_bytes(), 5)
    _check_t(original, banding, planned, 2)


def test_checker_refuses_a_band_off_its_destination() -> None:
    original = Model(build_demo_model(), "demo")
    stage = rw.find_stage(original, 2)
    t = stage.t_tensor
    bounds = bands.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], 2)
    banded, result = bands.plan_banded(original, 2, bounds, "tflm", False, 0.3)
    offsets = {t.global_index: t.offset for t in result.tensors}  # with the bands in T
    offline_plan.embed(banded, offsets)
    assert offline_plan.check(banded, "tflm") == []
    part = banded.subgraphs[0].operators[_concat_op(banded)].inputs[1]
    offsets[part] += 16  # still inside T, but not where the concatenation copies it
    offline_plan.embed(banded, offsets)
    problems = offline_plan.check(banded, "tflm")
    assert any("no kernel rule allows" in p for p in problems), problems


def test_unsupported_operator_is_named() -> None:
    original = Model(build_demo_model(), "demo")
    reshape = next(op.index for op in original.subgraphs[0].operators if op.name == "RESHAPE")
    with pytest.raises(rw.BandError, match="RESHAPE"):
        rw.find_stage(original, reshape)


def test_cli_bands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "demo.tflite"
    src.write_bytes(build_demo_model())
    out = tmp_path / "banded.tflite"
    assert plan_main([str(src), "--bands", "-q", "--json", "-o", str(out)]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    chosen = doc["bands"]["chosen"]
    assert chosen["added_fraction"] <= 0.1
    assert doc["head"] == run_tflm(out.read_bytes()).head
    assert src.read_bytes() == build_demo_model()  # the original is never replaced
    with pytest.raises(SystemExit):
        plan_main([str(src), "--bands", "--embed"])
    with pytest.raises(SystemExit):
        plan_main([str(src), "--bands-mac-budget", "0.2"])


def test_runtime_runs_the_bands_in_place() -> None:
    """This project's runtime (host build) accepts each band at its destination inside T,
    gives the original model's outputs on the real TFLM, reports the plan's head, and refuses
    a band moved 16 bytes off its destination."""
    from support.tflm_oracle import random_inputs

    from host.runtime.binding import Interpreter, MicroarenaError

    original = Model.load(shared_model("tflm_person_detect_int8"))
    banding = bands.apply(original, 0.1, "microarena", True)
    result = bands.plan_model(
        banding.model, "best", 1.5, "microarena", None, overlap=True, aliases=banding.aliases
    )
    offsets = {t.global_index: t.offset for t in result.tensors}
    offline_plan.embed(banding.model, offsets)
    assert offline_plan.check(banding.model, "microarena") == []
    it = Interpreter(banding.model.to_bytes())
    assert it.stats().head == result.head
    for seed in range(RUNS // 2):
        it.set_input(0, random_inputs(it, 1, seed)[0])
        it.invoke()
        assert np.array_equal(it.get_output(0), run_tflm(original.to_bytes(), seed).outputs[0])
    part = banding.model.subgraphs[0].operators[_concat_op(banding.model)].inputs[1]
    offsets[part] += 16
    offline_plan.embed(banding.model, offsets)
    with pytest.raises(MicroarenaError, match="overlap while both are live"):
        Interpreter(banding.model.to_bytes())
