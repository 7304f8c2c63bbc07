"""The hand-measured TFLM + CMSIS-NN data (tests/support/tflm_cmsis_nn.py, docs/tflm_cmsis_nn.md)
is whole and still describes these models: the model files and the rebuilt planned models are
the bytes that were measured, the figures hang together, and the per-operator CRCs measured on
QEMU equal the pip TFLM's intermediate tensors on the same deterministic input."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from support import tflm_cmsis_nn as tc
from support.tflm_oracle import deterministic_inputs, oracle

from host.planning.model import metadata
from host.tflite.model import Model

DATA = tc.load()
NAMES = sorted(DATA.models)


def _bytes(name: str) -> bytes:
    data = tc.model_bytes(DATA.models[name])
    if data is None:
        pytest.skip(f"{DATA.models[name].origin} is absent (tests read ../shared/models)")
    return data


def test_data_covers_every_model_on_the_m4() -> None:
    for name in NAMES:
        for kernels in ("cmsis-nn", "reference"):
            for plan in ("none", "offline"):
                assert DATA.run(name, "mps2-an386", kernels, plan), (name, kernels, plan)


@pytest.mark.parametrize("name", NAMES)
def test_model_and_plan_are_the_measured_bytes(name: str) -> None:
    entry = DATA.models[name]
    data = _bytes(name)
    assert (tc.sha256(data), len(data)) == (entry.sha256, entry.size), (
        f"{name} changed since it was measured on TFLM + CMSIS-NN: re-measure "
        "(docs/tflm_cmsis_nn.md) or restore it"
    )
    planned = tc.planned_model_bytes(entry, data)
    plan = metadata.read(Model(planned))
    assert plan is not None and tuple(plan.offsets) == entry.plan_offsets
    assert tc.sha256(planned) == entry.planned_sha256


@pytest.mark.parametrize(
    "run", DATA.runs, ids=lambda r: f"{r.model}-{r.board}-{r.kernels}-{r.plan}"
)
def test_run_is_consistent(run: tc.Run) -> None:
    assert run.model in DATA.models
    assert run.head + run.tail == run.total
    assert run.head >= 0 and run.tail > 0 and run.min_arena >= run.total - 16
    # Per-operator figures are whole SysTick ticks (40 instructions at 25 MHz): each may be up to
    # one tick long, so their sum may pass the invoke's by as much.
    tick = DATA.boards[run.board]["instructions_per_tick"]
    per_node = {n.node: n.instructions for n in run.nodes}  # one row per output
    assert 0 < sum(per_node.values()) <= run.instructions + tick * len(per_node)
    persistent = sum(c.used for c in run.categories if c.name != "TfLiteEvalTensor data")
    assert persistent <= run.tail
    node_crcs = {n.crc32 for n in run.nodes}
    assert set(run.outputs_crc32) <= node_crcs, "a model output is no operator's output"


def _crcs(run: tc.Run) -> list[tuple[int, int]]:
    return [(n.tensor, n.crc32) for n in run.nodes]


# Where a run's tensors differ from the reference, the first operator that differs (found by
# hand; docs/tflm_cmsis_nn.md): CMSIS-NN's MVE path under QEMU 7.2 on a 1x3 stride-2 convolution.
DIFFERENT = {("keras_conv1d_audio_int8", "mps3-an547"): (5, "CONV_2D")}


def test_every_kernel_set_board_and_plan_computes_the_same_tensors() -> None:
    """CMSIS-NN is bit-exact with the reference kernels on every board, planned or not, except
    where DIFFERENT says, and there from that operator on."""
    for name in NAMES:
        want = DATA.run(name, "mps2-an386", "reference", "none")
        assert want is not None
        for run in (r for r in DATA.runs if r.model == name):
            where = (name, run.board, run.kernels, run.plan)
            assert [n.tensor for n in run.nodes] == [n.tensor for n in want.nodes], where
            pairs = zip(run.nodes, want.nodes, strict=True)
            first = next((g for g, w in pairs if g.crc32 != w.crc32), None)
            expected = DIFFERENT.get((name, run.board))
            got = None if first is None else (first.node, first.op)
            assert got == expected, where


@pytest.mark.parametrize("name", NAMES)
def test_crcs_are_the_pip_tflm_intermediate_tensors(name: str) -> None:
    runtime = oracle()
    data = _bytes(name)
    it = runtime.Interpreter.from_bytes(
        data, arena_size=16 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )  # fmt: skip
    n_inputs = len(Model(data).subgraphs[0].inputs)
    for i, x in enumerate(deterministic_inputs(it, n_inputs)):
        it.set_input(x, i)
    it.invoke()
    run = DATA.run(name, "mps2-an386", "cmsis-nn", "none")
    assert run is not None
    for node in run.nodes:
        got = np.ascontiguousarray(np.asarray(it.GetTensor(node.tensor, 0)["tensor_data"]))
        assert got.nbytes == node.bytes, (name, node)
        assert zlib.crc32(got.tobytes()) == node.crc32, f"{name}: node {node.node} {node.op}"


def test_docs_tables_are_the_data() -> None:
    """docs/tflm_cmsis_nn.md's results table has one row per model, board and kernel set, and
    every figure in it is the measured one."""
    rows = {
        tuple(cells[:3]): cells[3:]
        for cells in tc.doc_rows(9)
        if cells[1] in DATA.boards and cells[3].isdigit()
    }
    measured = {(r.model, r.board, r.kernels) for r in DATA.runs}
    assert set(rows) == measured
    for (model, board, kernels), cells in rows.items():
        a = DATA.run(model, board, kernels, "none")
        b = DATA.run(model, board, kernels, "offline")
        assert a is not None and b is not None and a.tail == b.tail
        want = [a.head, b.head, a.tail, a.min_arena, b.min_arena, a.instructions]
        assert cells == [str(v) for v in want], (model, board, kernels)
