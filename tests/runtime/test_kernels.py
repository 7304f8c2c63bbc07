"""Kernels of the C runtime (firmware/src/kernels/) against the real TFLM interpreter.

Every operator of every shared model is fed TFLM's own input tensors (kPreserveAllTensors) and
its output must equal TFLM's (int8 bit-exact, float within 1e-5 relative); whole models are also
chained through the kernels alone, and through the runtime core with these kernels. The harness
is tests/support/kernel_harness.py.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.kernel_harness import (
    ERR_NAMES,
    Ctx,
    Graph,
    assert_same,
    empty_like,
    kernel_ops,
    make_node,
    make_tensor,
    reset_state,
    run_op_on_tflm_tensors,
    tflm_run,
)
from support.tflm_oracle import shared_model, shared_model_names

from host.planning.libraries.microarena import MICROARENA
from host.runtime.binding import MaTensor


@pytest.mark.parametrize("name", shared_model_names())
def test_every_operator_matches_tflm(lib: ctypes.CDLL, name: str) -> None:
    """Each supported operator of each shared model reproduces TFLM's output tensor."""
    path = shared_model(name)
    g = Graph(path.read_bytes())
    it, _ = tflm_run(path, None)
    checked = 0
    supported = kernel_ops(lib)
    # A loop body's tensors are not a consistent snapshot once the loop has exited (the
    # WHILE copies fresh inputs in before testing the condition): check only subgraph 0 then.
    has_loop = any(op["name"] == "WHILE" for sg in g.subgraphs for op in sg["ops"])
    for s, sg in enumerate(g.subgraphs[:1] if has_loop else g.subgraphs):
        for op in sg["ops"]:
            if op["name"] not in supported:
                continue
            ours, want, _ = run_op_on_tflm_tensors(lib, g, it, s, op)
            for k, (a, b) in enumerate(zip(ours, want, strict=True)):
                assert_same(
                    a, b.reshape(a.shape), f"{name} sg{s} {op['name']} #{op['index']} out{k}"
                )
            checked += 1
    ops = {op["name"] for sg in g.subgraphs for op in sg["ops"]}
    print(f"{name}: {checked} operators match TFLM")
    if checked == 0 and has_loop:
        pytest.skip(
            f"{name}: its kernel operators all sit in WHILE bodies, whose saved tensors are no "
            "consistent snapshot; the whole model is compared through the core instead "
            "(tests/runtime/test_runtime_models.py)"
        )
    assert checked, f"{name} has no operator these kernels implement ({sorted(ops)})"


# ----------------------------------------------------------------------------- whole models

_PERSISTENT = re.compile(r"'Persistent buffer data' used (\d+) bytes")


def tflm_persistent_buffers(path: Path) -> int:
    """Bytes TFLM's kernels (and its graph bookkeeping) take as persistent buffers."""
    from support.tflm_oracle import run_tflm

    m = _PERSISTENT.search(run_tflm(path.read_bytes()).report)
    assert m, "TFLM's allocation report has no persistent-buffer line"
    return int(m.group(1))


def run_whole_model(
    lib: ctypes.CDLL, g: Graph, inputs: list[np.ndarray]
) -> tuple[list, int, tuple[int, int]]:
    """Chains every operator of subgraph 0 through the kernels alone;
    (outputs, op data bytes, (scratch requests, scratch bytes))."""
    sg = g.subgraphs[0]
    keep: list[Any] = []
    arrays = {}
    tensors: dict[int, MaTensor] = {}
    for i, info in enumerate(sg["tensors"]):
        arr = info["const"] if info["const"] is not None else empty_like(info)
        if info["variable"]:
            arr = reset_state(info)
        arrays[i] = arr
        tensors[i] = make_tensor(info, arr, keep)
    for x, ti in zip(inputs, sg["inputs"], strict=True):
        arrays[ti][...] = x.reshape(arrays[ti].shape)
    ctx = Ctx(lib)
    nodes = []
    for op in sg["ops"]:
        ts = [tensors[i] if i >= 0 else None for i in op["inputs"]]
        node = make_node(op, ts + [tensors[i] for i in op["outputs"]], keep)
        st, msg = ctx.prepare(node)
        assert st == 0, f"{op['name']} #{op['index']} prepare: {ERR_NAMES[st]} {msg}"
        nodes.append((op, node))
    for op, node in nodes:
        st, msg = ctx.eval(node)
        assert st == 0, f"{op['name']} #{op['index']} eval: {ERR_NAMES[st]} {msg}"
    return [arrays[i].copy() for i in sg["outputs"]], ctx.tail_used(), ctx.scratch_stats()


WHOLE_MODELS = [
    "tflm_hello_world_int8", "tflm_hello_world_float", "tflm_micro_speech_int8",
    "tflm_person_detect_int8", "tflm_magic_wand_float", "tiny_kws_dscnn_int8",
    "tiny_vww_mobilenet_int8", "tiny_vww_mobilenet_float", "tiny_ic_resnet8_int8",
    "tiny_ic_resnet8_float", "tiny_ad_autoencoder_int8", "tiny_ad_autoencoder_float",
    "tiny_sww_int8", "tflm_pr_retinaface", "tflm_keyword_scrambled_int8",
    "tflm_mnist_lstm_float", "tflm_mnist_lstm_int8", "tflm_micro_speech_lstm",
    "tflm_dtln_noise_suppression",
]  # fmt: skip


@pytest.mark.parametrize("name", WHOLE_MODELS)
def test_whole_model_matches_tflm(lib: ctypes.CDLL, name: str) -> None:
    """Kernels chained alone give TFLM's outputs, with no more op data than TFLM keeps."""
    path = shared_model(name)
    g = Graph(path.read_bytes())
    it, inputs = tflm_run(path, None, seed=3)
    ours, op_data, scratch = run_whole_model(lib, g, inputs)
    for k, y in enumerate(ours):
        assert_same(y, np.asarray(it.get_output(k)).reshape(y.shape), f"{name} output {k}")
    tflm = tflm_persistent_buffers(path)
    print(f"{name}: kernel op data {op_data} B, TFLM persistent buffers {tflm} B")
    assert op_data <= tflm
    # The scratch the kernels really request is what the planner models (MICROARENA_KERNELS).
    from host.planning.scratch import scratch_requests
    from host.tflite.model import Model

    declared = scratch_requests(Model(path.read_bytes()), MICROARENA)
    assert scratch == (len(declared), sum(r.bytes for r in declared))


def test_hybrid_model_is_refused_clearly(lib: ctypes.CDLL) -> None:
    """Float activations with int8 weights: a clear UNSUPPORTED, as TFLM refuses it too."""
    g = Graph(shared_model("tiny_kws_dscnn_float").read_bytes())
    op = g.subgraphs[0]["ops"][0]
    keep: list[Any] = []
    ts = [make_tensor(g.subgraphs[0]["tensors"][i], None, keep) for i in op["inputs"]]
    ts += [make_tensor(g.subgraphs[0]["tensors"][i], None, keep) for i in op["outputs"]]
    for t, i in zip(ts, op["inputs"] + op["outputs"], strict=True):
        arr = g.subgraphs[0]["tensors"][i]["const"]
        arr = arr if arr is not None else empty_like(g.subgraphs[0]["tensors"][i])
        keep.append(arr)
        t.data, t.bytes = arr.ctypes.data, arr.nbytes
    st, msg = Ctx(lib).prepare(make_node(op, ts, keep))
    assert ERR_NAMES[st] == "UNSUPPORTED"
    assert msg.startswith(op["name"] + ": hybrid models")


# ----------------------------------------------------------------------------- through the core

CORE_MODELS = WHOLE_MODELS + [
    "litert_call_once_mul", "litert_while_multi_subgraphs", "litert_nested_while",
    "litert_resource_vars_fc", "tflm_audio_preprocessor_int8",
]  # fmt: skip


@pytest.fixture(scope="module")
def core() -> Any:
    from host.runtime import binding

    try:
        binding.load_library()
    except (RuntimeError, OSError) as e:
        pytest.skip(f"the runtime core does not build: {e}")
    return binding


@pytest.mark.parametrize("name", CORE_MODELS)
def test_core_with_these_kernels_matches_tflm(core: Any, name: str) -> None:
    """The full runtime (core + kernels) gives TFLM's outputs over three invocations (state
    carried in variable tensors), with an arena tail no larger than TFLM's."""
    from support.tflm_oracle import oracle, random_inputs, run_tflm

    data = shared_model(name).read_bytes()
    ref = oracle().Interpreter.from_bytes(data, arena_size=16 << 20)
    it = core.Interpreter(data)
    for round_ in range(3):
        for i, x in enumerate(random_inputs(ref, it.num_inputs(), seed=4 + round_)):
            it.set_input(i, x)
            ref.set_input(x, i)
        it.invoke()
        ref.invoke()
        for k in range(it.num_outputs()):
            want = np.asarray(ref.get_output(k))
            got = np.asarray(it.get_output(k)).reshape(want.shape)
            assert_same(got, want, f"{name} invocation {round_} output {k}")
    tflm_tail = run_tflm(data).tail
    stats = it.stats()
    print(f"{name}: tail {stats.tail} B (TFLM {tflm_tail} B), head {stats.head} B")
    assert stats.tail <= tflm_tail


@pytest.mark.parametrize("name", shared_model_names(exclude=CORE_MODELS))
def test_core_refuses_unsupported_models_clearly(core: Any, name: str) -> None:
    """Models with operators no kernel implements fail at open, naming the operator."""
    data = shared_model(name).read_bytes()
    with pytest.raises(core.MicroarenaError) as e:
        core.Interpreter(data)
    assert "UNSUPPORTED" in str(e.value) or e.value.status == 2, str(e.value)
    print(f"{name}: {e.value}")
