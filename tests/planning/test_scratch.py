"""Kernel scratch requests (host/planning/scratch.py) against the real TFLM.

For every shared model TFLM runs, TFLM's planning is simulated (tensor lifetimes, plus one
buffer per predicted scratch request over its operator's scopes, all through the exact TFLM
greedy) and the simulated head must equal the head the real interpreter reports: for the model
as it is, and with offline plans that pin the tensors so the scratch has to go elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.scratch_models import stacked
from support.subgraph_models import twice_called_subgraph_model
from support.tflm_oracle import run_tflm, runnable_models, shared_model

from host.planning.libraries.reference import REFERENCE
from host.planning.model import metadata
from host.planning.model.lifetimes import walk
from host.planning.model.operands import custom_options, flexbuffer_map
from host.planning.packing.greedy import plan_greedy
from host.planning.packing.problem import arena_size
from host.planning.scratch import (
    ScratchRequest,
    predict_tflm_head,
    scratch_buffers,
    scratch_requests,
    tflm_buffers,
    unknown_scratch_ops,
)
from host.tflite.model import Model

RUNNABLE = runnable_models()
needs_models = pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv absent")


def _scratch_only_arena(model: Model) -> int:
    """Bytes TFLM's greedy needs for the scratch buffers alone."""
    bufs = scratch_buffers(model, walk(model), scratch_requests(model, REFERENCE))
    return arena_size(bufs, plan_greedy(bufs))


@needs_models
@pytest.mark.parametrize("name", RUNNABLE or ["none"])
def test_simulated_head_equals_tflm(name: str) -> None:
    data = shared_model(name).read_bytes()
    model = Model(data, name)
    assert unknown_scratch_ops(model, REFERENCE) == [], (
        "every operator of the shared models is modelled"
    )
    assert predict_tflm_head(model, REFERENCE) == run_tflm(data).head
    tensors_total = sum(lt.size for lt in walk(model).lifetimes)
    scratch = _scratch_only_arena(model)
    # Pinned tensors: from 0 (scratch must go above the live ones), in reverse order, and
    # from exactly the scratch's own footprint (it then just fits below) and 16 bytes less.
    for base, reverse in ((0, False), (0, True), (scratch, False), (max(scratch - 16, 0), False)):
        planned = stacked(model, base, reverse)
        real = run_tflm(planned).head
        assert predict_tflm_head(Model(planned), REFERENCE) == real, (
            f"stacked from {base}, rev={reverse}"
        )
        if base == scratch:
            assert real == base + tensors_total, "the scratch fits exactly below the tensors"


@needs_models
def test_request_order_and_owners() -> None:
    """Requests come per operator in execution order, all from the operators that own them."""
    model = Model(shared_model("tflm_dtln_noise_suppression").read_bytes())
    reqs = scratch_requests(model, REFERENCE)
    ops = model.subgraphs[0].operators
    assert reqs == sorted(reqs, key=lambda r: (r.subgraph, r.op))
    assert {ops[r.op].name for r in reqs} == {"UNIDIRECTIONAL_SEQUENCE_LSTM"}
    lstms = [op.index for op in ops if op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM"]
    assert [r.op for r in reqs] == [i for i in lstms for _ in range(4)]


@needs_models
def test_rfft_options_read_from_flexbuffer() -> None:
    """SignalRfft's fft_length from its flexbuffer options fits its complex output length."""
    model = Model(shared_model("tflm_audio_preprocessor_int8").read_bytes())
    sg = model.subgraphs[0]
    rffts = [op for op in sg.operators if op.name == "SignalRfft"]
    assert rffts
    for op in rffts:
        opts = flexbuffer_map(custom_options(model, 0, op.index))
        out = sg.tensors[op.outputs[0]]
        assert opts["fft_length"] + 2 == out.shape[-1]  # fft_length / 2 + 1 complex values


def test_flexbuffer_garbage_is_an_error_not_a_crash() -> None:
    for junk in (b"", b"\x00", b"\xff\xff\xff", bytes(range(40)), b"\x01\x24\x01"):
        with pytest.raises(ValueError):
            flexbuffer_map(junk)


def test_requests_are_plain_values() -> None:
    r = ScratchRequest(0, 3, 1024)
    assert (r.subgraph, r.op, r.bytes) == (0, 3, 1024)
    with pytest.raises(AttributeError):
        r.bytes = 5  # type: ignore[misc]


@needs_models
def test_tflm_buffers_orders_tensors_then_scratch() -> None:
    model = Model(shared_model("tflm_mnist_lstm_int8").read_bytes())
    bufs = tflm_buffers(model, REFERENCE)
    n = len(model.tensors)
    scratch = [b for b in bufs if b.id >= n]
    assert bufs[-len(scratch) :] == scratch and len(scratch) == 4
    assert all(b.size % 16 == 0 and b.offset is None for b in scratch)


# --------------------------------------------------------------------------- command line


@needs_models
def test_cli_json_matches_api(capsys: pytest.CaptureFixture[str]) -> None:
    from host.planning.scratch_cli import main

    path = shared_model("tflm_dtln_noise_suppression")
    assert main([str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    model = Model.load(path)
    assert [(r["subgraph"], r["op"], r["bytes"]) for r in doc["requests"]] == [
        (r.subgraph, r.op, r.bytes) for r in scratch_requests(model, REFERENCE)
    ]
    assert doc["predicted_tflm_head"] == run_tflm(path.read_bytes()).head
    assert doc["unknown_ops"] == []


@needs_models
def test_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    from host.planning.scratch_cli import main

    assert main([str(shared_model("tflm_audio_preprocessor_int8"))]) == 0
    out = capsys.readouterr().out
    assert "SignalRfft" in out and "predicted TFLM arena head" in out


def test_cli_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from host.planning.scratch_cli import main
    from host.tflite.modelgen import build_demo_model

    cut = tmp_path / "cut.tflite"
    cut.write_bytes(build_demo_model()[:200])
    for argv in ([str(cut)], [str(tmp_path / "absent.tflite")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err


def test_scratch_of_a_subgraph_called_twice() -> None:
    """TFLM gives the scratch of an operator reached twice the lifetime of its LAST visit.

    y lives only between the two calls. Pinned at the top of the stack, it is above the
    scratch's only possible place iff the scratch lives during the first call too.
    """
    data, t = twice_called_subgraph_model()
    model = Model(data, "if-twice")
    assert [(r.subgraph, r.op) for r in scratch_requests(model, REFERENCE)] == [(1, 0)]
    order = ["a", "b", "c", "x", "y2", "z", "y"]  # y on top
    lts = {lt.tensor.global_index: lt for lt in walk(model).lifetimes}
    offsets, at = {}, 0
    for name in order:
        offsets[t[name]] = at
        at += lts[t[name]].size
    planned = Model(data)
    metadata.embed(planned, offsets)
    real = run_tflm(planned.to_bytes()).head
    scratch = sum(
        b.size for b in scratch_buffers(model, walk(model), scratch_requests(model, REFERENCE))
    )
    assert real == at + scratch, "the scratch overlaps y: it lives from the first call on"
    assert predict_tflm_head(Model(planned.to_bytes()), REFERENCE) == real
    assert predict_tflm_head(model, REFERENCE) == run_tflm(data).head
