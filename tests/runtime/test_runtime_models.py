"""The microarena C runtime (host build, via ctypes) against the real TFLM interpreter.

For every shared model the runtime supports: identical int8 outputs (float within 1e-5
relative) on the same seeded random inputs, the same arena head as TFLM (with TFLM's own
online plan and with an OfflineMemoryAllocation plan written into the model), a total arena
no larger than TFLM's, and an arena of exactly the reported required size works while one
byte less fails cleanly. Models whose operators the kernels lack are skipped with the
runtime's own "unsupported operator" message.
"""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest
from support.tflm_oracle import MODELS, oracle, random_inputs, run_tflm, shared_model

from host.planning.libraries.reference import REFERENCE
from host.planning.model import metadata
from host.planning.scratch import scratch_requests, unknown_scratch_ops
from host.runtime import arena
from host.runtime.binding import (
    MA_ERR_ARENA,
    MA_ERR_PLAN,
    MA_ERR_UNSUPPORTED,
    Interpreter,
    MicroarenaError,
    Request,
    kernel_requests,
)
from host.tflite.model import Model


def _manifest() -> list[str]:
    path = MODELS / "MANIFEST.tsv"
    if not path.exists():
        return ["manifest-absent"]
    with path.open(newline="") as f:
        return [row["name"] for row in csv.DictReader(f, delimiter="\t")]


NAMES = _manifest()
_cache: dict[str, Interpreter] = {}


def _open(name: str) -> Interpreter:
    """The model on this runtime with an exactly sized arena, or skip if unsupported."""
    if name == "manifest-absent":
        pytest.skip(f"{MODELS}/MANIFEST.tsv is absent (tests read ../shared/models)")
    data = shared_model(name).read_bytes()
    if name not in _cache:
        try:
            _cache[name] = Interpreter(data)
        except MicroarenaError as e:
            if e.status == MA_ERR_UNSUPPORTED:
                pytest.skip(f"runtime says: {e.message}")
            raise
    return _cache[name]


def _run_ours(it: Interpreter, seed: int = 0) -> list[np.ndarray]:
    for i, x in enumerate(random_inputs(it, it.num_inputs(), seed)):
        it.set_input(i, x)
    it.invoke()
    return [it.get_output(i) for i in range(it.num_outputs())]


def _assert_same_outputs(ours: list[np.ndarray], ref: list[np.ndarray]) -> None:
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        b = np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, f"output {i}"
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"output {i}")


def _head_with_tflm_scratch(data: bytes, tflm: bool = False) -> int:
    """This runtime's head (exact model, host.runtime.arena) with our kernels' scratch
    requests, or with TFLM's kernels' ones (host.planning.scratch) in their place."""
    requests = kernel_requests(data)
    if tflm:
        model = Model(data)
        if unknown_scratch_ops(model, REFERENCE):
            pytest.skip(f"TFLM scratch unknown for {unknown_scratch_ops(model, REFERENCE)}")
        requests = [r for r in requests if r.kind != 1] + [
            Request(1, r.bytes, r.subgraph, r.op) for r in scratch_requests(model, REFERENCE)
        ]
    return int(arena.predict(data, abi="host", requests=requests)["head"])


@pytest.mark.parametrize("name", NAMES)
def test_outputs_and_head_match_tflm(name: str) -> None:
    it = _open(name)
    data = shared_model(name).read_bytes()
    ref = run_tflm(data, seed=0)
    _assert_same_outputs(_run_ours(it, seed=0), ref.outputs)
    s = it.stats()
    assert s.head == _head_with_tflm_scratch(data), "same plan inputs must give TFLM's head"
    if s.head != ref.head:
        # Only kernel scratch differs (TFLM's kernels request some, ours need less).
        assert _head_with_tflm_scratch(data, tflm=True) == ref.head
    assert s.total <= ref.total, f"total {s.total} exceeds TFLM's {ref.total}"
    assert s.total == s.head + s.tail
    # The report carries TFLM's exact line format.
    lines = it.report()
    assert lines[0] == f"[RecordingMicroAllocator] Arena allocation total {s.total} bytes"
    assert lines[1] == f"[RecordingMicroAllocator] Arena allocation head {s.head} bytes"
    assert lines[2] == f"[RecordingMicroAllocator] Arena allocation tail {s.tail} bytes"
    category = re.compile(
        r"\[RecordingMicroAllocator\] '[^']+' used \d+ bytes with alignment overhead "
        r"\(requested \d+ bytes for \d+ [A-Za-z ]+\)"
    )
    assert all(category.fullmatch(line) for line in lines[3:] if "Recording" in line)


@pytest.mark.parametrize("name", NAMES)
def test_exact_required_arena_works_and_one_byte_less_fails(name: str) -> None:
    it = _open(name)
    data = shared_model(name).read_bytes()
    required = it.stats().required
    exact = Interpreter(data, required)
    roomy = Interpreter(data, required + 4096)  # fresh too: resource variables keep state
    _assert_same_outputs(_run_ours(exact, seed=1), _run_ours(roomy, seed=1))
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data, required - 1)
    assert e.value.status == MA_ERR_ARENA
    assert f"needs at least {required} bytes" in e.value.message
    # A caller buffer that does not start 16-aligned loses up to 15 bytes, said clearly.
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data, required, arena_misalign=1)
    assert e.value.status == MA_ERR_ARENA


def _planned_tensors(it: Interpreter) -> dict[int, tuple[int, int]]:
    """Global index -> (offset, bytes) of every tensor this runtime placed in the head."""
    tensors = it.tensors()  # subgraph 0's tensors first, then subgraph 1's...
    head = it.stats().head
    return {
        g: (t.offset, t.nbytes)
        for g, t in enumerate(tensors)
        if 0 <= t.offset < head and not t.is_variable and not t.is_const
    }


@pytest.mark.parametrize("name", NAMES)
def test_offline_plan_gives_tflm_head_and_outputs(name: str) -> None:
    it = _open(name)
    placed = _planned_tensors(it)
    if not placed:
        pytest.skip("no tensor is planned in the head")
    model = Model(shared_model(name).read_bytes())
    # Our own online plan shifted up by 16 bytes: a valid plan different from TFLM's.
    metadata.embed(model, {g: off + 16 for g, (off, _) in placed.items()})
    data = model.to_bytes()
    ours = Interpreter(data)
    ref = run_tflm(data, seed=2)
    _assert_same_outputs(_run_ours(ours, seed=2), ref.outputs)
    assert ours.stats().head == _head_with_tflm_scratch(data)
    if ours.stats().head != ref.head:
        assert _head_with_tflm_scratch(data, tflm=True) == ref.head
    for g, (off, _) in placed.items():
        assert _planned_tensors(ours)[g][0] == off + 16


def test_offline_plan_is_validated() -> None:
    name = "tflm_micro_speech_int8"
    it = _open(name)
    placed = sorted(_planned_tensors(it).items())
    assert len(placed) >= 2
    g0 = placed[0][0]
    base = shared_model(name).read_bytes()

    def with_plan(offsets: dict[int, int]) -> bytes:
        model = Model(base)
        metadata.embed(model, offsets)
        return model.to_bytes()

    with pytest.raises(MicroarenaError) as e:
        Interpreter(with_plan({g0: 8}))
    assert e.value.status == MA_ERR_PLAN and "not 16-byte aligned" in e.value.message
    # Every tensor at offset 0: tensors live at the same time overlap; the message names them.
    with pytest.raises(MicroarenaError) as e:
        Interpreter(with_plan({g: 0 for g, _ in placed}))
    assert e.value.status == MA_ERR_PLAN and "overlap" in e.value.message
    assert re.search(r"tensor \d+ of subgraph 0 \[0, \d+\) and tensor \d+", e.value.message)


def test_two_interpreters_side_by_side() -> None:
    a = Interpreter(shared_model("tflm_hello_world_float").read_bytes())
    b = Interpreter(shared_model("tflm_micro_speech_int8").read_bytes())
    alone_a = _run_ours(Interpreter(shared_model("tflm_hello_world_float").read_bytes()), 3)
    alone_b = _run_ours(Interpreter(shared_model("tflm_micro_speech_int8").read_bytes()), 3)
    for _ in range(2):
        _assert_same_outputs(_run_ours(a, 3), alone_a)
        _assert_same_outputs(_run_ours(b, 3), alone_b)


def test_offline_planned_variables_go_to_the_head() -> None:
    """A variable tensor with an offline offset lives in the head at that offset (without
    one it lives in the tail); state still carries across invocations as in TFLM."""
    name = "tflm_keyword_scrambled_int8"
    it = _open(name)
    tensors = it.tensors()
    variables = [g for g, t in enumerate(tensors) if t.is_variable]
    assert variables, "the SVDF model has state tensors"
    base = it.stats()
    offsets = {g: off for g, (off, _) in _planned_tensors(it).items()}
    end = base.head
    for g in variables:
        offsets[g] = end
        end += -(-tensors[g].nbytes // 16) * 16
    model = Model(shared_model(name).read_bytes())
    metadata.embed(model, offsets)
    data = model.to_bytes()
    ours = Interpreter(data)
    assert ours.stats().head == end
    assert ours.stats().tail < base.tail
    for g in variables:
        assert ours.tensors()[g].offset == offsets[g]
    ref = oracle().Interpreter.from_bytes(data, arena_size=1 << 22)
    inputs = random_inputs(ours, ours.num_inputs(), seed=4)
    for _ in range(3):  # state carries over between invocations
        for i, x in enumerate(inputs):
            ours.set_input(i, x)
            ref.set_input(x, i)
        ours.invoke()
        ref.invoke()
        _assert_same_outputs(
            [ours.get_output(i) for i in range(ours.num_outputs())],
            [ref.get_output(i) for i in range(ours.num_outputs())],
        )
