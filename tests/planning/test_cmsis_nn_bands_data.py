"""Bands below CMSIS-NN's per-operator floor, on the real TFLM + CMSIS-NN
(tests/data/tflm_cmsis_nn/bands_m4.json, docs/tflm_cmsis_nn.md): the models `host.plan M --bands
--overlap --kernels cmsis-nn --cpu cortex-m4` writes, rebuilt byte for byte from their recorded
cut, bands and offsets, ran on mps2-an386 over seeded inputs (20 for person_detect, 5 for the
others). TFLM reported the head and minimum arena the planner predicts (person_detect: at most
0.75 x the unbanded head, issue 17's goal), and every tensor the banded model computes equals
the pip TFLM's on the same input: the original model's tensors from the cut on (and its
outputs), and the band tensors, which only the banded model has."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import tflm_cmsis_nn as tc

from host.paths import REPO, SHARED_MODELS
from host.planning import checker
from host.planning.libraries.registry import library
from host.planning.targets.tflm import predict
from host.planning.tflm.structs import CORTEX_M
from host.rewrite.bands import find_stage, rewrite
from host.tflite.model import Model

BANDS = tc.load(tc.BANDS_DATA)
NAMES = sorted(BANDS.models)
GOAL_MODEL = "tflm_person_detect_int8"
GOAL = 0.75  # issue 17: at most 0.75 x the head TFLM + CMSIS-NN needs without a plan
BOARD = "mps2-an386"


def _run(name: str, plan: str) -> tc.Run:
    run = BANDS.run(name, BOARD, "cmsis-nn", plan)
    assert run is not None, (name, plan)
    return run


def _original(name: str) -> bytes:
    return tc.measured_model_bytes(BANDS.models[name])


def _banded(name: str) -> Model:
    entry = BANDS.models[name]
    planned = tc.planned_model_bytes(entry, _original(name))
    assert tc.sha256(planned) == entry.planned_sha256, "the rebuilt model is not the one measured"
    return Model(planned, name)


def _after_cut(name: str) -> set[int]:
    """The original model's tensors the banded model computes too: the cut and all after it."""
    entry = BANDS.models[name]
    assert entry.bands is not None
    cut = entry.bands[0]
    model = Model(_original(name))
    later = {t for op in model.subgraphs[0].operators[cut + 1 :] for t in op.outputs}
    return {find_stage(model, cut).t} | later


def test_data_is_banded_runs_over_seeded_inputs() -> None:
    assert GOAL_MODEL in NAMES
    assert {(r.model, r.board, r.kernels, r.plan) for r in BANDS.runs} == {
        (n, BOARD, "cmsis-nn", p) for n in NAMES for p in ("none", "bands-overlap")
    }
    for run in BANDS.runs:
        count = 20 if run.model == GOAL_MODEL else 5
        assert [x.seed for x in run.inputs] == list(range(count)), run.model
        assert all(len(x.crc32) == len(run.nodes) for x in run.inputs)
    outputs = {x.outputs_crc32 for x in _run(GOAL_MODEL, "none").inputs}
    assert len(outputs) > 1, "the inputs do not vary the output: they test little"


@pytest.mark.parametrize("name", NAMES)
def test_banded_head_is_below_the_unbanded_one_measured(name: str) -> None:
    banded, unbanded = _run(name, "bands-overlap"), _run(name, "none")
    assert banded.head <= (GOAL if name == GOAL_MODEL else 1) * unbanded.head
    assert banded.head < unbanded.head and banded.min_arena < unbanded.min_arena


@pytest.mark.parametrize("name", NAMES)
def test_measured_banded_plan_is_accepted_and_predicted(name: str) -> None:
    model = _banded(name)
    cmsis_m4 = library("cmsis-nn", "cortex-m4")
    assert checker.check(model, cmsis_m4) == []
    run = _run(name, "bands-overlap")
    p = predict(model, CORTEX_M, lib=cmsis_m4)
    assert (p.head, p.min_arena_tail, p.min_arena) == (run.head, run.tail, run.min_arena)


def test_host_plan_chooses_and_predicts_the_measured_model() -> None:
    """host.plan today still writes the person_detect model measured and states its figures."""
    path = SHARED_MODELS / f"{GOAL_MODEL}.tflite"
    _original(GOAL_MODEL)
    args = ["--bands", "--overlap", "--kernels", "cmsis-nn", "--cpu", "cortex-m4", "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", "host.plan", str(path), *args],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    d = json.loads(proc.stdout)
    chosen = d["bands"]["chosen"]
    assert (chosen["cut_operator"], tuple(chosen["bounds"])) == BANDS.models[GOAL_MODEL].bands
    run, unbanded = _run(GOAL_MODEL, "bands-overlap"), _run(GOAL_MODEL, "none")
    assert (d["head"], d["min_arena"]) == (run.head, run.min_arena)
    assert d["target"]["min_arena_tail"] == run.tail  # TFLM printed it in exactly that arena
    assert d["bands"]["unbanded_head"] == unbanded.head


@pytest.mark.parametrize("name", NAMES)
def test_original_tensors_from_the_cut_are_identical(name: str) -> None:
    """Every input: the cut tensor, every tensor after it and the outputs, as the banded model
    computed them on TFLM + CMSIS-NN, equal the original model's on the pip TFLM (reference
    kernels) and on TFLM + CMSIS-NN unplanned."""
    keep = _after_cut(name)
    banded, unbanded = _run(name, "bands-overlap"), _run(name, "none")
    seeds = [x.seed for x in banded.inputs]
    pip = tc.pip_runs(_original(name), seeds, {n.tensor for n in unbanded.nodes})
    rows = [n.tensor for n in banded.nodes]
    assert keep <= set(rows)
    for b, u, want in zip(banded.inputs, unbanded.inputs, pip, strict=True):
        assert b.input_crc32 == u.input_crc32 == want.input_crc32, "inputs not reproduced"
        assert dict(zip((n.tensor for n in unbanded.nodes), u.crc32, strict=True)) == want.crc32
        got = {t: c for t, c in zip(rows, b.crc32, strict=True) if t in keep}
        assert got == {t: want.crc32[t] for t in keep}, f"seed {b.seed}"
        assert b.outputs_crc32 == u.outputs_crc32


@pytest.mark.parametrize("name", NAMES)
def test_every_banded_tensor_is_the_pip_tflm_one(name: str) -> None:
    """Every operator output of the banded run (the band tensors too, which the original has
    not) equals the pip TFLM's on the banded model planned online, so no overlap of the plan
    damaged a byte while it was needed."""
    entry = BANDS.models[name]
    assert entry.bands is not None
    banded, _ = rewrite(Model(_original(name)), entry.bands[0], list(entry.bands[1]))
    run = _run(name, "bands-overlap")
    seeds = [x.seed for x in run.inputs]
    pip = tc.pip_runs(banded.to_bytes(), seeds, {n.tensor for n in run.nodes})
    for x, want in zip(run.inputs, pip, strict=True):
        got = dict(zip((n.tensor for n in run.nodes), x.crc32, strict=True))
        assert got == want.crc32, f"seed {x.seed}"


def test_docs_state_the_data() -> None:
    """docs/tflm_cmsis_nn.md's band table and person_detect sentence are the measured figures."""
    rows = {cells[0]: cells[1:] for cells in tc.doc_rows(8) if cells[0] in BANDS.models}
    assert set(rows) == set(NAMES)
    for name, cells in rows.items():
        b, u = _run(name, "bands-overlap"), _run(name, "none")
        entry = BANDS.models[name]
        assert entry.bands is not None
        ops = [len({n.node for n in r.nodes}) for r in (u, b)]
        want = [u.head, b.head, u.min_arena, b.min_arena, *ops, len(b.inputs)]
        assert cells == [str(v) for v in want], name
    banded, unbanded = _run(GOAL_MODEL, "bands-overlap"), _run(GOAL_MODEL, "none")
    more = len({n.node for n in banded.nodes}) - len({n.node for n in unbanded.nodes})
    sentence = (
        f"The bands' {more} more operators add {banded.tail - unbanded.tail} B of tail, and the "
        f"arena to set still falls by {unbanded.min_arena - banded.min_arena} B."
    )
    text = " ".join(tc.DOC.read_text(encoding="utf-8").split())
    assert sentence in text
    assert f"the {len(_after_cut(GOAL_MODEL)) - 1} tensors after it" in text
