"""CMSIS-NN's DSP-path overlap rules on the real TFLM + CMSIS-NN (tests/data/tflm_cmsis_nn/
overlap_m4.json, docs/tflm_cmsis_nn.md): `--overlap --kernels cmsis-nn --cpu cortex-m4` plans,
rebuilt byte for byte from their offsets, computed every operator's output exactly as TFLM
planning online did (per-operator CRCs on mps2-an386), and TFLM reported the head, tail and
minimum arena the predictor gives. The current rules still accept each measured plan."""

from __future__ import annotations

import pytest
from support import tflm_cmsis_nn as tc

from host.paths import REPO
from host.planning import offline_plan
from host.planning.kernels.libraries import library
from host.planning.tflm_structs import CORTEX_M
from host.planning.tflm_tail import predict
from host.tflite.model import Model

OVERLAP = tc.load(tc.OVERLAP_DATA)
NAMES = sorted(OVERLAP.models)


def _planned(name: str) -> Model:
    entry = OVERLAP.models[name]
    data = tc.model_bytes(entry)
    if data is None:
        pytest.skip(f"{entry.origin} is absent (tests read ../shared/models)")
    assert (tc.sha256(data), len(data)) == (entry.sha256, entry.size), f"{name} changed"
    planned = tc.planned_model_bytes(entry, data)
    assert tc.sha256(planned) == entry.planned_sha256
    return Model(planned, name)


def test_data_covers_person_detect_and_four_more() -> None:
    assert "tflm_person_detect_int8" in NAMES and len(NAMES) >= 5
    assert {(r.model, r.board, r.kernels, r.plan) for r in OVERLAP.runs} == {
        (n, "mps2-an386", "cmsis-nn", "overlap") for n in NAMES
    }


@pytest.mark.parametrize("name", NAMES)
def test_overlap_plan_computes_the_unplanned_tensors(name: str) -> None:
    """Every operator's output on the real TFLM + CMSIS-NN equals the run without a plan."""
    run = OVERLAP.run(name, "mps2-an386", "cmsis-nn", "overlap")
    unplanned = tc.load().run(name, "mps2-an386", "cmsis-nn", "none")
    assert run is not None and unplanned is not None
    assert run.nodes and [(n.tensor, n.crc32) for n in run.nodes] == [
        (n.tensor, n.crc32) for n in unplanned.nodes
    ]
    assert run.outputs_crc32 == unplanned.outputs_crc32
    assert run.head <= unplanned.head


@pytest.mark.parametrize("name", NAMES)
def test_measured_overlap_plan_is_accepted_and_predicted(name: str) -> None:
    """The rules accept the measured plan, and the predictor gives what TFLM reported."""
    model = _planned(name)
    cmsis_m4 = library("cmsis-nn", "cortex-m4")
    assert offline_plan.check(model, cmsis_m4) == []
    run = OVERLAP.run(name, "mps2-an386", "cmsis-nn", "overlap")
    assert run is not None
    p = predict(model, CORTEX_M, run.min_arena, cmsis_m4)
    assert (p.head, p.tail, p.min_arena) == (run.head, run.tail, run.min_arena)


def test_measured_plans_use_dsp_only_overlaps() -> None:
    """Some measured plans overlap tensors that only the DSP path's rules allow: the no-DSP
    path (Cortex-M3) refuses them, so the real runs did exercise the new rules."""
    refused = []
    for name in NAMES:
        model = _planned(name)
        if offline_plan.check(model, library("cmsis-nn", "cortex-m3")):
            refused.append(name)
    assert len(refused) >= 2, refused


def test_docs_table_is_the_data() -> None:
    """docs/tflm_cmsis_nn.md's overlap table: one row per measured model, the measured figures."""
    doc = (REPO / "docs" / "tflm_cmsis_nn.md").read_text(encoding="utf-8")
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in OVERLAP.models:
            rows[cells[0]] = cells[1:]
    assert set(rows) == set(NAMES)
    for name, cells in rows.items():
        run = OVERLAP.run(name, "mps2-an386", "cmsis-nn", "overlap")
        unplanned = tc.load().run(name, "mps2-an386", "cmsis-nn", "none")
        assert run is not None and unplanned is not None
        n = len(run.nodes)
        want = [unplanned.head, run.head, run.tail, run.min_arena, f"{n} of {n}"]
        assert cells == [str(v) for v in want], name
