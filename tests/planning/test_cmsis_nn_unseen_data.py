"""Models the CMSIS-NN predictor was not written against, on the real TFLM + CMSIS-NN
(tests/data/tflm_cmsis_nn/unseen_m4.json, docs/tflm_cmsis_nn.md "Models not given"): the zoo's
int8 models TFLM runs with the harness's operators, and three int16 ones. The predictor itself
is checked against these runs in test_cmsis_nn_predictor.py; here, the data still describes
the models (bytes, rebuilt plans), every operator's CRC is the pip TFLM's intermediate tensor,
and the docs table is the data."""

from __future__ import annotations

import pytest
from support import tflm_cmsis_nn as tc

UNSEEN = tc.load(tc.UNSEEN_DATA)
NAMES = sorted(UNSEEN.models)


def _bytes(name: str) -> bytes:
    return tc.measured_model_bytes(UNSEEN.models[name])


def test_data_covers_each_model_planned_and_not() -> None:
    assert len(NAMES) >= 5 and not set(NAMES) & set(tc.load().models)
    for name in NAMES:
        for plan in ("none", "offline"):
            assert UNSEEN.run(name, "mps2-an386", "cmsis-nn", plan), (name, plan)


@pytest.mark.parametrize("name", NAMES)
def test_planned_model_is_the_one_measured(name: str) -> None:
    entry = UNSEEN.models[name]
    assert tc.sha256(tc.planned_model_bytes(entry, _bytes(name))) == entry.planned_sha256


@pytest.mark.parametrize("name", NAMES)
def test_crcs_are_the_pip_tflm_intermediate_tensors(name: str) -> None:
    """On every board and plan measured: CMSIS-NN computed what the reference kernels do."""
    runs = [r for r in UNSEEN.runs if r.model == name]
    want = tc.pip_deterministic(_bytes(name), {n.tensor for r in runs for n in r.nodes})
    for run in runs:
        got = {n.tensor: n.crc32 for n in run.nodes}
        assert got == {t: want[t] for t in got}, (run.board, run.plan)


def test_docs_table_is_the_data() -> None:
    rows = {
        tuple(cells[:2]): cells[2:]
        for cells in tc.doc_rows(7)
        if cells[0] in UNSEEN.models and cells[1] in UNSEEN.boards
    }
    runs = {(r.model, r.board) for r in UNSEEN.runs}
    assert set(rows) == runs
    for (name, board), cells in rows.items():
        a = UNSEEN.run(name, board, "cmsis-nn", "none")
        b = UNSEEN.run(name, board, "cmsis-nn", "offline")
        assert a is not None
        planned = "-" if b is None else str(b.head)
        want = [str(a.head), planned, str(a.tail), str(a.min_arena), str(a.instructions)]
        assert cells == want, (name, board)
