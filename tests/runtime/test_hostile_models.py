"""Valid models that once made the runtime answer wrongly without a word (issue 18), each
checked against the real TFLM: its outputs and its head, or a clean refusal."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest
from support.callgraph_models import fanout_model
from support.model_fuzz import our_outputs, tflm_outputs
from support.subgraph_models import (
    shared_branch_model,
    shared_tables_model,
    twice_called_subgraph_model,
    variable_state_model,
)
from support.tflm_oracle import oracle, run_tflm

from host.planning import checker
from host.planning.libraries.reference import REFERENCE
from host.planning.model import lifetimes, metadata
from host.planning.packing.problem import align_up
from host.planning.scratch import predict_tflm_head
from host.runtime import arena
from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite import schema as S
from host.tflite.flatbuf import new_table, set_child
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

REPO = Path(__file__).resolve().parents[2]
PROBE = 64 << 20  # an arena far larger than any of these models needs


def test_subgraph_called_twice_keeps_its_tensors_live_across_both_calls() -> None:
    """Two IFs calling one subgraph: its tensors live from the first call to the last (TFLM
    keeps a tensor's first creation); planning them for the last call alone put them over a
    tensor live across the first call (outputs -24 where TFLM gives -16)."""
    for data in (shared_branch_model(), twice_called_subgraph_model()[0]):
        _runs_as_tflm(data)


def _runs_as_tflm(data: bytes) -> None:
    """Outputs equal TFLM's for both conditions; the head is what host.runtime.arena says."""
    x = np.arange(8, dtype=np.float32).reshape(1, 8) - 4
    for c in (True, False):
        inputs = [np.array([c]), x]
        want = tflm_outputs(data, inputs)
        got, ours = our_outputs(data, inputs)
        np.testing.assert_array_equal(got[0], want[0])
        assert ours.stats().head == arena.predict(data, "host")["head"]


def _with_plans(data: bytes, plans: list[list[int]]) -> bytes:
    """The model with one OfflineMemoryAllocation entry per plan, in order."""
    model = Model(data)
    buffers, entries = list(model.buffers), list(model.root.get(S.MODEL_METADATA, []))
    for offsets in plans:
        buf = new_table("Buffer", {}, 1)
        set_child(buf, S.BUFFER_DATA, metadata.encode(offsets, len(model.subgraphs)))
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
    assert checker.check(Model(planned)) == []
    inputs = [np.array([True]), np.arange(8, dtype=np.float32).reshape(1, 8) - 4]
    want = tflm_outputs(planned, inputs)
    np.testing.assert_array_equal(our_outputs(planned, inputs)[0][0], want[0])
    heads = [run_tflm(_with_plans(data, [p])).head for p in (online, stacked)]
    assert heads[0] < heads[1] == run_tflm(planned).head  # TFLM too follows the last
    # An entry with the wrong count is refused by TFLM wherever it stands; so by both here.
    short = _with_plans(data, [online[:-1], stacked])
    assert any("entry 1 of 2" in p for p in checker.check(Model(short)))
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
    problems = checker.check(Model(over_v))
    assert len(problems) == 1 and "variable tensor" in problems[0], problems
    with pytest.raises(MicroarenaError, match="one is a variable tensor"):
        Interpreter(over_v)
    # TFLM itself lets its greedy put a later tensor over an offline-planned variable: the
    # state drifts there (2, 4, 6 where 2, 3, 4 belong), which the runtime does not follow.
    drift = np.array(_invocations(_with_plans(data, [[-1, 0, -1, -1]]), 3, tflm=True))
    assert not np.array_equal(drift, np.array(want))
    assert arena.predict(_with_plans(data, [[-1, 0, -1, -1]]), "host")["head"] == (
        Interpreter(_with_plans(data, [[-1, 0, -1, -1]])).stats().head
    )


@pytest.mark.parametrize("plan", [[0, 16, 32, 48], [0, 64, 16, -1], [-1, 0, -1, -1]])
def test_planned_variable_counts_in_the_predicted_head(plan: list[int]) -> None:
    """TFLM places a variable tensor with an offset in the head (here past every other tensor,
    below them, or alone with the rest online), so host.plan's head prediction counts it."""
    data = _with_plans(variable_state_model()[0], [plan])
    assert predict_tflm_head(Model(data), REFERENCE) == run_tflm(data).head


def test_fanned_out_call_graphs_are_refused_in_bounded_time() -> None:
    """An IF calling the next subgraph as both branches, 12 IFs a subgraph, 7 levels: 20 KB
    whose walk unfolds into about 24**7 operator visits (TFLM walks them all; the runtime took
    minutes, with a signed overflow in its scope counter). Both the runtime and the Python
    walk now count the walk per subgraph and refuse it past MAX_SCOPES."""
    data = fanout_model([12] * 7)
    assert len(data) < 25_000
    start = time.monotonic()
    with pytest.raises(MicroarenaError, match=f"more than {lifetimes.MAX_SCOPES} operator"):
        Interpreter(data, PROBE)
    with pytest.raises(ModelError, match=f"more than {lifetimes.MAX_SCOPES} operator"):
        lifetimes.walk(Model(data))
    assert time.monotonic() - start < 5


def test_fanned_out_call_graphs_within_the_limit_run_as_tflm() -> None:
    data = fanout_model([3, 3, 3, 3])  # 3627 scopes
    assert lifetimes.unfolded_scopes(Model(data), lifetimes.TFLM) == 3627
    _runs_as_tflm(data)
    predicted = predict_tflm_head(Model(data), REFERENCE)
    assert run_tflm(data).head == predicted  # host.plan's walk is TFLM's


def test_subgraphs_sharing_their_lists_are_refused() -> None:
    """250 subgraphs listing one tensor 5000 times: 21 KB naming 1.25 million tensors (the
    runtime never finished opening it). Refused: each listed entry takes 4 bytes of a file."""
    data = shared_tables_model(250, 5000)
    with pytest.raises(MicroarenaError, match="more than its 21396 bytes can hold"):
        Interpreter(data, PROBE)
    with pytest.raises(ModelError, match="more than 8 times its size"):
        Model(data)


def test_limits_agree() -> None:
    header = (REPO / "firmware/include/microarena.h").read_text()
    assert re.search(rf"#define MA_MAX_SCOPES {lifetimes.MAX_SCOPES}\b", header)


def test_plan_and_scratch_refuse_a_fanned_out_model(tmp_path: Path, capsys) -> None:
    from host.planning.cli import main as plan_main
    from host.planning.scratch_cli import main as scratch_main

    p = tmp_path / "fan.tflite"
    p.write_bytes(fanout_model([12] * 7))
    for main in (plan_main, scratch_main):
        assert main([str(p)]) == 2
        assert "operator visits" in capsys.readouterr().err


def test_hostile_models_under_sanitizers() -> None:
    """The models above, and random call graphs and plans, on the ASan + UBSan build (the
    fanned-out walk once overflowed a signed scope counter): run or refused, no report."""
    import subprocess
    import sys

    from support.sanitize import sanitized_env

    script = """
import random
from support.callgraph_models import fanout_model, random_call_graph
from support.model_fuzz import inputs_for, our_outputs, random_plan, with_plan
from support.subgraph_models import shared_branch_model, shared_tables_model, variable_state_model
from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite.model import Model
for d in (fanout_model([12] * 7), shared_tables_model(250, 5000)):
    try:
        Interpreter(d, 64 << 20)
        raise SystemExit("not refused")
    except MicroarenaError:
        pass
rng = random.Random(3)
models = [shared_branch_model(), variable_state_model()[0], fanout_model([3, 3, 3, 3])]
for _ in range(10):
    d = random_call_graph(rng, rng.randint(2, 5), rng.randint(1, 5))
    models += [d, with_plan(d, random_plan(rng, Model(d)))]
for d in models:
    try:
        for c in (False, True):
            our_outputs(d, inputs_for(d, c))
    except MicroarenaError:
        pass
print("done")
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], env=sanitized_env(), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr[-4000:]


def test_an_intermediate_tensor_holding_data_is_refused_as_tflm_refuses_it() -> None:
    """Found by the mutation fuzzer: an LSTM's intermediate tensor given a shape. TFLM
    refuses the model ('Does not support intermediate tensor with non-zero size'); the runtime
    ran it, and host.plan did not say TFLM refuses it."""
    from host.planning.tflm.refusal import refused_ops

    data = (REPO / "tests/data/fuzz/lstm_intermediate_with_data.tflite").read_bytes()
    with pytest.raises(RuntimeError):
        oracle().Interpreter.from_bytes(data, arena_size=1 << 20)
    with pytest.raises(MicroarenaError, match="intermediate tensor 21 of 3 bytes"):
        Interpreter(data, PROBE)
    assert refused_ops(Model(data)) == [
        "subgraph 0 op 0 UNIDIRECTIONAL_SEQUENCE_LSTM (intermediate tensor 21 holds data)"
    ]
    assert refused_ops(Model((REPO / "tests/data/keras/lstm_int8.tflite").read_bytes())) == []


def _field_pos(buf: bytes, table: int, slot: int) -> int:
    """Where a table's field `slot` is stored (the flatbuffer layout, read by hand)."""
    vt = table - int.from_bytes(buf[table : table + 4], "little", signed=True)
    return table + int.from_bytes(buf[vt + 4 + 2 * slot : vt + 6 + 2 * slot], "little")


def _target(buf: bytes, pos: int) -> int:
    return pos + int.from_bytes(buf[pos : pos + 4], "little")


def test_quantization_table_outside_the_file_is_refused() -> None:
    """A tensor whose quantization offset leads outside the file was read as unquantized at
    load, then read without checks on every invoke (a heap overflow the fuzzer found)."""
    data = bytearray((REPO / "tests/data/keras/conv_options_int8.tflite").read_bytes())
    subgraph = _target(data, _target(data, _field_pos(data, _target(data, 0), 2)) + 4)
    tensors = _target(data, _field_pos(data, subgraph, 0))
    count = int.from_bytes(data[tensors : tensors + 4], "little")
    tables = [_target(data, tensors + 4 + 4 * i) for i in range(count)]
    # The last tensor with one: a later tensor's checks no longer catch the reader's bad flag.
    quantization = [q for t in tables if (q := _field_pos(data, t, 4)) != t][-1]
    Interpreter(bytes(data), PROBE)  # opens as it is (not refused for another reason)
    data[quantization : quantization + 4] = (0x7FFFFFF0).to_bytes(4, "little")
    with pytest.raises(MicroarenaError, match="quantization table"):
        Interpreter(bytes(data), PROBE)
