"""Valid models that once made the runtime answer wrongly without a word (issue 18), each
checked against the real TFLM: its outputs and its head, or a clean refusal."""

from __future__ import annotations

import numpy as np
import pytest
from support.subgraph_models import (
    shared_branch_model,
    twice_called_subgraph_model,
    variable_state_model,
)
from support.tflm_oracle import oracle, run_tflm

from host.planning import offline_plan
from host.planning.packing.problem import align_up
from host.runtime import arena as arena_layout
from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite import schema as S
from host.tflite.flatbuf import new_table, set_child
from host.tflite.model import OFFLINE_PLAN_NAME, Model


def _tflm(data: bytes, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], object]:
    interp = oracle().Interpreter.from_bytes(data, arena_size=1 << 16)
    for i, arr in enumerate(inputs):
        interp.set_input(arr, i)
    interp.invoke()
    return [np.array(interp.get_output(0))], interp


def _ours(data: bytes, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], Interpreter]:
    interp = Interpreter(data)
    for i, arr in enumerate(inputs):
        interp.set_input(i, arr)
    interp.invoke()
    return [interp.get_output(0)], interp


def test_subgraph_called_twice_keeps_its_tensors_live_across_both_calls() -> None:
    """Two IFs calling one subgraph: its tensors live from the first call to the last (TFLM
    keeps a tensor's first creation); planning them for the last call alone put them over a
    tensor live across the first call (outputs -24 where TFLM gives -16)."""
    x = np.arange(8, dtype=np.float32).reshape(1, 8) - 4
    for data in (shared_branch_model(), twice_called_subgraph_model()[0]):
        for c in (True, False):
            inputs = [np.array([c]), x]
            want, _ = _tflm(data, inputs)
            got, ours = _ours(data, inputs)
            np.testing.assert_array_equal(got[0], want[0])
            assert ours.stats().head == arena_layout.predict(data, "host")["head"]


def _with_plans(data: bytes, plans: list[list[int]]) -> bytes:
    """The model with one OfflineMemoryAllocation entry per plan, in order."""
    model = Model(data)
    buffers, entries = list(model.buffers), list(model.root.get(S.MODEL_METADATA, []))
    for offsets in plans:
        buf = new_table("Buffer", {}, 1)
        set_child(buf, S.BUFFER_DATA, offline_plan.encode(offsets, len(model.subgraphs)))
        meta = new_table("Metadata", {S.METADATA_BUFFER: ("I", len(buffers))}, 2)
        set_child(meta, S.METADATA_NAME, OFFLINE_PLAN_NAME)
        buffers.append(buf)
        entries.append(meta)
    set_child(model.root, S.MODEL_BUFFERS, buffers)
    set_child(model.root, S.MODEL_METADATA, entries)
    return model.to_bytes()


def test_of_two_offline_plans_the_last_counts_everywhere() -> None:
    """TFLM reads the last OfflineMemoryAllocation entry; the runtime read the first, so each
    validated a different plan. Now the runtime, --check and the arena model use the last."""
    data = shared_branch_model()
    sizes = [align_up(t.nbytes()) for t in Model(data).tensors]
    stacked = [sum(sizes[:i]) for i in range(len(sizes))]  # nothing shared: valid
    online = [-1] * len(sizes)
    planned = _with_plans(data, [online, stacked])
    got = {t.subgraph * 6 + t.index: t.offset for t in Interpreter(planned).tensors()}
    assert [got[g] for g in range(len(sizes))] == stacked
    assert offline_plan.check(Model(planned)) == []
    inputs = [np.array([True]), np.arange(8, dtype=np.float32).reshape(1, 8) - 4]
    want, _ = _tflm(planned, inputs)
    np.testing.assert_array_equal(_ours(planned, inputs)[0][0], want[0])
    heads = [run_tflm(_with_plans(data, [p])).head for p in (online, stacked)]
    assert heads[0] < heads[1] == run_tflm(planned).head  # TFLM too follows the last
    # An entry with the wrong count is refused by TFLM wherever it stands; so by both here.
    short = _with_plans(data, [online[:-1], stacked])
    assert any("entry 1 of 2" in p for p in offline_plan.check(Model(short)))
    with pytest.raises(MicroarenaError, match="OfflineMemoryAllocation has 7 offsets"):
        Interpreter(short)


def _invocations(data: bytes, n: int, tflm: bool) -> list[np.ndarray]:
    """Outputs of n invocations of one interpreter on the same input (a state drifts)."""
    x = np.array([[1.0, 2.0, -3.0, 0.5]], dtype=np.float32)
    out = []
    if tflm:
        interp = oracle().Interpreter.from_bytes(data, arena_size=1 << 16)
        for _ in range(n):
            interp.set_input(x, 0)
            interp.invoke()
            out.append(np.array(interp.get_output(0)))
    else:
        ours = Interpreter(data)
        for _ in range(n):
            ours.set_input(0, x)
            ours.invoke()
            out.append(ours.get_output(0))
    return out


def test_variable_tensors_never_share_bytes() -> None:
    """A variable keeps its state between invocations. A plan putting z (live after v's last
    use) over v was accepted by --check and the runtime, and the state drifted; now both
    refuse it, and the runtime's own placement keeps every other tensor off v's bytes."""
    data, _ = variable_state_model()
    want = _invocations(data, 3, tflm=True)
    assert not np.array_equal(want[0], want[1])  # the state does change the output
    for ours in (data, _with_plans(data, [[0, 16, 32, -1]]), _with_plans(data, [[-1, 0, -1, -1]])):
        np.testing.assert_array_equal(np.array(_invocations(ours, 3, tflm=False)), want)
    over_v = _with_plans(data, [[0, 16, 32, 16]])  # z at v's bytes
    problems = offline_plan.check(Model(over_v))
    assert len(problems) == 1 and "variable tensor" in problems[0], problems
    with pytest.raises(MicroarenaError, match="one is a variable tensor"):
        Interpreter(over_v)
    assert arena_layout.predict(_with_plans(data, [[-1, 0, -1, -1]]), "host")["head"] == (
        Interpreter(_with_plans(data, [[-1, 0, -1, -1]])).stats().head
    )
