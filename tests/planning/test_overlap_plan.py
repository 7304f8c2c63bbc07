"""Plans with --overlap on the real TFLM: every shared model TFLM runs.

The head is never larger than without overlap, TFLM reports exactly the predicted head, the
outputs are identical to TFLM's own run, and so is the full output tensor of every operator
that writes over its input: the model is cut after that operator (its output becomes the model
output, the plan kept for the tensors that remain) and compared on the same random inputs.
TFLM's preserve-all-tensors mode would show intermediates directly, but it refuses offline
plans, hence the cut models.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from support.tflm_oracle import run_tflm, runnable_models, shared_model

from host.planning import checker
from host.planning.model import metadata
from host.planning.model.lifetimes import walk
from host.planning.plan import PlanResult, plan_model
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import OFFLINE_PLAN_NAME, Model

RUNNABLE = runnable_models()
PERSON = "tflm_person_detect_int8"
PERSON_TARGET = 41472  # 0.75 x 55296, TFLM's head without a plan


def _plan(name: str, overlap: bool) -> tuple[bytes, bytes, PlanResult]:
    original = shared_model(name).read_bytes()
    model = Model(original, name)
    result = plan_model(model, time_limit=1.5, overlap=overlap)
    metadata.embed(model, result.tensor_offsets())
    return original, model.to_bytes(), result


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _cut_after(model: bytes, op: int, offsets: dict[int, int]) -> bytes:
    """The model's subgraph 0 up to operator `op`, whose output becomes the model output;
    tensors still used keep their planned offsets."""
    m = Model(model)
    sg = m.root.get(S.MODEL_SUBGRAPHS)[0]
    set_child(sg, S.SUBGRAPH_OPERATORS, list(sg.get(S.SUBGRAPH_OPERATORS)[: op + 1]))
    out = m.subgraphs[0].operators[op].outputs[0]
    set_child(sg, S.SUBGRAPH_OUTPUTS, struct.pack("<i", out))
    cut = Model(m.to_bytes())
    used = {lt.tensor.global_index for lt in walk(cut).lifetimes}
    metadata.embed(cut, {t: o for t, o in offsets.items() if t in used})
    return cut.to_bytes()


def _check(name: str, runs: int) -> PlanResult:
    original, planned, result = _plan(name, overlap=True)
    _, _, plain = _plan(name, overlap=False)
    assert result.head <= plain.head
    assert result.overlap_bound is not None and result.overlap_bound <= result.head
    assert checker.check(Model(planned)) == []
    for seed in range(runs):
        before, after = run_tflm(original, seed), run_tflm(planned, seed)
        assert _same(before.outputs, after.outputs), f"{name}: outputs differ (seed {seed})"
        assert after.head == result.head, "TFLM's head differs from the prediction"
    if len(Model(original).subgraphs) == 1:
        offsets = result.tensor_offsets()
        for s in result.shared:
            cut_plain = _cut_after(original, s.op, {})
            cut_planned = _cut_after(original, s.op, offsets)
            for seed in range(runs):
                a, b = run_tflm(cut_plain, seed).outputs, run_tflm(cut_planned, seed).outputs
                assert _same(a, b), f"{name}: output of op {s.op} {s.op_name} differs"
    return result


def test_person_detect_below_three_quarters_of_tflm() -> None:
    result = _check(PERSON, runs=20)
    assert result.head <= PERSON_TARGET
    assert result.shared, "no operator writes over its input"


@pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv is absent")
@pytest.mark.parametrize("name", [n for n in RUNNABLE if n != PERSON] or ["none"])
def test_overlap_plan_on_real_tflm(name: str) -> None:
    _check(name, runs=5)


def test_check_names_an_overlap_no_rule_allows() -> None:
    """One 16-byte step below a rule's offset, --check names both tensors, the operator and
    the rule; a plan of ours passes."""
    _, planned, result = _plan(PERSON, overlap=True)
    s = next(x for x in result.shared if x.op_name == "CONV_2D" and x.delta == 18448)
    m = Model(planned)
    offsets = metadata.read(m).offsets  # type: ignore[union-attr]
    offsets[s.input] -= 16
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode(offsets, 1))
    problems = checker.check(m)
    assert any(
        f"tensor {s.input} " in p
        and f"tensor {s.output} " in p
        and "operator 2 CONV_2D" in p
        and ">= 18439" in p
        for p in problems
    ), problems


def test_cli_overlap_report_json_and_check(tmp_path, capsys) -> None:
    from host.planning.cli import main

    p = tmp_path / "m.tflite"
    p.write_bytes(shared_model(PERSON).read_bytes())
    assert main([str(p), "--overlap", "--kernels", "reference", "-q"]) == 0
    out = capsys.readouterr().out
    for words in ("overlap bound", "TFLM reference kernels only", "bytes shared", "CONV_2D"):
        assert words in out
    assert main([str(p), "--overlap", "--kernels", "reference", "--embed", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["head"] <= PERSON_TARGET < r["lower_bound"] == r["tflm_greedy_head"]
    assert r["overlap_bound"] <= r["head"] and r["overlaps"]
    assert r["kernel_set"] == "TFLM reference kernels"
    assert main(["--check", str(p)]) == 0
    assert "write over their input" in capsys.readouterr().out
    assert main([str(p), "--json"]) == 0  # without --overlap: no overlap fields
    assert "overlap_bound" not in json.loads(capsys.readouterr().out)
    assert main([str(p), "--overlap", "--runtime", "microarena", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kernel_set"] == "microarena kernels"


def test_plot_draws_the_shared_bytes(tmp_path) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the plot extra)")
    from host.planning.cli import main

    out = tmp_path / "layout.svg"
    assert (
        main(
            [
                str(shared_model(PERSON)),
                "--overlap",
                "--kernels",
                "reference",
                "--plot",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    _, _, result = _plan(PERSON, overlap=True)
    svg = out.read_text()
    assert "output shares input bytes" in svg  # the legend says what the black regions are
    for s in result.shared:  # one labelled region per overlapping operator
        assert f"op {s.op}: {s.bytes} B shared" in svg
