"""CMSIS-NN's DSP-path overlap rules on the real TFLM + CMSIS-NN (tests/data/tflm_cmsis_nn/
overlap_m4.json, docs/tflm_cmsis_nn.md): `--overlap --kernels cmsis-nn --cpu cortex-m4` plans of
every int8 model measured, rebuilt byte for byte, computed every operator's output exactly as
TFLM planning online did (per-operator CRCs on mps2-an386, the deterministic input and 5 seeded
ones, equal to the pip TFLM's), with a head no larger than the plan without overlap, and TFLM
reported the head, tail and minimum arena the predictor gives. The current rules still accept
each measured plan."""

from __future__ import annotations

import pytest
from support import tflm_cmsis_nn as tc

from host.planning import checker
from host.planning.libraries.registry import library
from host.planning.targets.tflm import predict
from host.planning.tflm.structs import CORTEX_M
from host.tflite.model import Model

OVERLAP = tc.load(tc.OVERLAP_DATA)
NAMES = sorted(OVERLAP.models)


def _planned(name: str) -> Model:
    entry = OVERLAP.models[name]
    planned = tc.planned_model_bytes(entry, tc.measured_model_bytes(entry))
    assert tc.sha256(planned) == entry.planned_sha256
    return Model(planned, name)


def test_data_covers_every_int8_model_measured() -> None:
    """Every model of measured.json (the int8 shared models TFLM runs, the converter-made ones,
    the demo), planned with overlap and not, each over the same 5 seeded inputs."""
    assert set(NAMES) == set(tc.load().models)
    assert {(r.model, r.board, r.kernels, r.plan) for r in OVERLAP.runs} == {
        (n, "mps2-an386", "cmsis-nn", p) for n in NAMES for p in ("none", "overlap")
    }
    for run in OVERLAP.runs:
        assert [x.seed for x in run.inputs] == list(range(5)), run.model
        assert all(len(x.crc32) == len(run.nodes) for x in run.inputs)


def _runs(name: str) -> tuple[tc.Run, tc.Run]:
    run = OVERLAP.run(name, "mps2-an386", "cmsis-nn", "overlap")
    unplanned = OVERLAP.run(name, "mps2-an386", "cmsis-nn", "none")
    assert run is not None and unplanned is not None
    return run, unplanned


@pytest.mark.parametrize("name", NAMES)
def test_overlap_plan_computes_the_unplanned_tensors(name: str) -> None:
    """Every operator's output on the real TFLM + CMSIS-NN equals the run without a plan, on
    the deterministic input and on each seeded one."""
    run, unplanned = _runs(name)
    assert run.nodes and [(n.tensor, n.crc32) for n in run.nodes] == [
        (n.tensor, n.crc32) for n in unplanned.nodes
    ]
    assert run.outputs_crc32 == unplanned.outputs_crc32
    assert run.inputs == unplanned.inputs  # seeds, inputs read, every CRC


@pytest.mark.parametrize("name", NAMES)
def test_unplanned_tensors_are_the_pip_tflm_ones(name: str) -> None:
    """The seeded runs' CRCs are the pip TFLM's (reference kernels) intermediate tensors on
    the same inputs: the inputs were reproduced and the comparison above means something."""
    _, unplanned = _runs(name)
    data = tc.measured_model_bytes(OVERLAP.models[name])
    tensors = [n.tensor for n in unplanned.nodes]
    pip = tc.pip_runs(data, [x.seed for x in unplanned.inputs], set(tensors))
    for x, want in zip(unplanned.inputs, pip, strict=True):
        assert x.input_crc32 == want.input_crc32, f"seed {x.seed}: not the same input"
        assert dict(zip(tensors, x.crc32, strict=True)) == want.crc32, f"seed {x.seed}"


@pytest.mark.parametrize("name", NAMES)
def test_overlap_head_is_no_larger_than_without_overlap(name: str) -> None:
    """As TFLM reported them: no larger than TFLM's online plan and than the measured plan
    made without --overlap (measured.json's "offline")."""
    run, unplanned = _runs(name)
    plain = tc.load().run(name, "mps2-an386", "cmsis-nn", "offline")
    assert plain is not None
    assert run.head <= min(unplanned.head, plain.head)
    assert run.min_arena <= plain.min_arena


@pytest.mark.parametrize("name", NAMES)
def test_measured_overlap_plan_is_accepted_and_predicted(name: str) -> None:
    """The rules accept the measured plan, and the predictor gives what TFLM reported."""
    model = _planned(name)
    cmsis_m4 = library("cmsis-nn", "cortex-m4")
    assert checker.check(model, cmsis_m4) == []
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
        if checker.check(model, library("cmsis-nn", "cortex-m3")):
            refused.append(name)
    assert len(refused) >= 2, refused


def test_docs_table_is_the_data() -> None:
    """docs/tflm_cmsis_nn.md's overlap table: one row per measured model, the measured figures."""
    rows = {cells[0]: cells[1:] for cells in tc.doc_rows(7) if cells[0] in OVERLAP.models}
    assert set(rows) == set(NAMES)
    for name, cells in rows.items():
        run, unplanned = _runs(name)
        plain = tc.load().run(name, "mps2-an386", "cmsis-nn", "offline")
        assert plain is not None
        n = len({x.node for x in run.nodes})
        want = [unplanned.head, plain.head, run.head, run.tail, run.min_arena, f"{n} of {n}"]
        assert cells == [str(v) for v in want], name
