"""The planner on public model-zoo models made by others (../shared/zoo): for every one the pip
TFLM runs, the embedded plan gives TFLM's outputs, TFLM reports the predicted head, and the
tflm-x86_64 tail and minimum arena are TFLM's (an arena of that size runs, one byte less does
not); an --overlap plan gives the same outputs. For every one TFLM refuses, the report says so
and names the operators TFLM names."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from support.tflm_oracle import BIG_ARENA, capture_output, oracle, run_tflm, runs_in_arena

from host.paths import SHARED_ZOO
from host.planning.cli import main
from host.planning.model import metadata
from host.planning.plan import plan_model
from host.planning.targets.target import target_arena
from host.planning.tflm.refusal import tflm_refusal
from host.tflite.model import Model


def _zoo() -> list:
    names = sorted(p.stem for p in SHARED_ZOO.glob("*.tflite"))
    if names:
        return names
    reason = f"no zoo models in {SHARED_ZOO} (tests read ../shared/zoo)"
    return [pytest.param("absent", marks=pytest.mark.skip(reason=reason))]


_RUNS: dict[str, bool] = {}


def _tflm_runs(name: str) -> bool:
    """Whether the pip TFLM sets the model up and runs it (once per session)."""
    if name not in _RUNS:
        _RUNS[name] = runs_in_arena((SHARED_ZOO / f"{name}.tflite").read_bytes(), BIG_ARENA)
    return _RUNS[name]


def _planned(name: str, overlap: bool = False) -> tuple[bytes, bytes, object]:
    original = (SHARED_ZOO / f"{name}.tflite").read_bytes()
    model = Model(original, name)
    result = plan_model(model, overlap=overlap)
    metadata.embed(model, result.tensor_offsets())
    return original, model.to_bytes(), result


def _same_outputs(a: bytes, b: bytes, seeds: int = 2) -> None:
    for seed in range(seeds):
        x, y = run_tflm(a, seed).outputs, run_tflm(b, seed).outputs
        assert len(x) == len(y)
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            assert np.array_equal(u, v, equal_nan=True), f"output {i} differs (seed {seed})"


@pytest.mark.parametrize("name", _zoo())
def test_zoo_model_plan_is_tflms_or_refusal_is_reported(name: str, capsys) -> None:
    oracle()
    if _tflm_runs(name):
        _check_plan(name)
    else:
        _check_refusal(name, capsys)


def _check_plan(name: str) -> None:
    assert tflm_refusal(Model.load(SHARED_ZOO / f"{name}.tflite")) is None
    original, planned, result = _planned(name)
    before, after = run_tflm(original), run_tflm(planned)
    assert result.tflm_head == before.head, "TFLM's own head is not the simulated greedy's"
    assert after.head == result.head, "TFLM's head with the plan is not the predicted one"
    target = target_arena(Model(planned), "tflm-x86_64")
    assert all(target.exact.values()), target.notes
    assert (target.head, target.tail) == (after.head, after.tail)
    assert runs_in_arena(planned, target.min_arena)
    assert not runs_in_arena(planned, target.min_arena - 1)
    _same_outputs(original, planned)


@pytest.mark.parametrize("name", _zoo())
def test_zoo_model_overlap_plan_keeps_outputs(name: str) -> None:
    oracle()
    original, planned, result = _planned(name, overlap=True)
    if not _tflm_runs(name):
        assert result.tflm_refusal is not None  # the overlap report says so too
        return
    assert run_tflm(planned).head == result.head
    _same_outputs(original, planned, seeds=3)


def _check_refusal(name: str, capsys) -> None:
    path = SHARED_ZOO / f"{name}.tflite"
    runtime = oracle()
    said: list[str] = []

    def load() -> None:
        try:
            runtime.Interpreter.from_bytes(path.read_bytes(), arena_size=BIG_ARENA)
        except Exception as e:  # noqa: BLE001 - whatever TFLM raises is its verdict
            said.append(str(e))

    said.append(capture_output(load))
    missing = set(re.findall(r"Failed to get registration from op code (\S+)", "".join(said)))
    refusal = tflm_refusal(Model.load(path))
    assert refusal is not None, "TFLM refuses the model; the planner thinks it runs it"
    builtin = {u.name for u in refusal.unregistered if not u.custom}
    custom = {u.name for u in refusal.unregistered if u.custom}
    assert missing == builtin | ({"CUSTOM"} if custom else set()), (missing, refusal.text())
    assert main([str(path), "-q", "--kernels", "reference"]) == 0
    out = capsys.readouterr().out
    assert "exact: what TFLM reports" not in out
    assert f"TFLM refuses this model: {refusal.text()}" in out
    assert main([str(path), "--json", "--target", "tflm-x86_64"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tflm_runtime"]["runs"] is False
    assert not any(doc["target"]["exact"].values())
