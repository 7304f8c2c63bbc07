"""Hostile and broken models: the runtime returns an error with a message, never crashes.

The same corpus (truncations, random byte flips, targeted bad indices and offsets) runs
in-process on the normal host build and, in a child process, on the AddressSanitizer +
UBSan build (`make -C firmware asan`, loaded with LD_PRELOAD of libasan), where any
out-of-bounds read, overflow or undefined behaviour aborts the child and fails the test.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

try:  # the child process runs this file as a script, outside pytest
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

from host.paths import SHARED_MODELS
from host.runtime.binding import (
    MA_ERR_ARENA,
    MA_ERR_MODEL,
    MA_ERR_PLAN,
    Interpreter,
    MicroarenaError,
)

MODELS = SHARED_MODELS
CORPUS_MODELS = ("tflm_hello_world_int8", "litert_while_multi_subgraphs", "tflm_micro_speech_int8")
CHILD_MODELS = (*CORPUS_MODELS, "litert_resource_vars_fc")  # what the sanitized child reads
ARENA = 1 << 20


def _load(name: str) -> bytes:
    p = MODELS / f"{name}.tflite"
    if not p.exists():
        if pytest is not None and __name__ != "__main__":  # not in the child (no pytest there)
            pytest.skip(f"shared model {p} is absent (tests read ../shared/models)")
        raise SystemExit(f"missing {p}")
    return p.read_bytes()


def _patch_u32(data: bytes, pos: int, value: int) -> bytes:
    b = bytearray(data)
    struct.pack_into("<I", b, pos, value & 0xFFFFFFFF)
    return bytes(b)


class _Table:
    """Just enough flatbuffer navigation to find where a field of the model lives."""

    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.pos = data, pos
        self.vt = pos - struct.unpack_from("<i", data, pos)[0]

    def has(self, slot: int) -> bool:
        vt_len = struct.unpack_from("<H", self.data, self.vt)[0]
        return (
            4 + 2 * slot < vt_len
            and struct.unpack_from("<H", self.data, self.vt + 4 + 2 * slot)[0] != 0
        )

    def field(self, slot: int) -> int:
        """Position of a field's inline value (it must be present)."""
        assert self.has(slot), f"field {slot} absent"
        return self.pos + struct.unpack_from("<H", self.data, self.vt + 4 + 2 * slot)[0]

    def _deref(self, slot: int) -> int:
        p = self.field(slot)
        return p + struct.unpack_from("<I", self.data, p)[0]

    def vec_first(self, slot: int) -> int:
        """Position of element 0 of a vector field."""
        return self._deref(slot) + 4

    def vec_len(self, slot: int) -> int:
        return struct.unpack_from("<I", self.data, self._deref(slot))[0]

    def table(self, slot: int, i: int) -> _Table:
        """Element i of a vector of tables."""
        p = self.vec_first(slot) + 4 * i
        return _Table(self.data, p + struct.unpack_from("<I", self.data, p)[0])


def targeted(data: bytes) -> Iterator[tuple[str, bytes, int]]:
    """(what, model, expected status) with one field made invalid."""
    m = _Table(data, struct.unpack_from("<I", data, 0)[0])
    sg = m.table(2, 0)  # Model.subgraphs[0]
    op = sg.table(3, 0)  # SubGraph.operators[0]
    t = sg.table(0, 0)  # SubGraph.tensors[0]
    n_tensors = sg.vec_len(0)

    yield "operator input index", _patch_u32(data, op.vec_first(1), n_tensors), MA_ERR_MODEL
    yield "operator output index", _patch_u32(data, op.vec_first(2), 0x7FFFFFFF), MA_ERR_MODEL
    yield "subgraph input index", _patch_u32(data, sg.vec_first(1), n_tensors + 5), MA_ERR_MODEL
    yield "tensor buffer index", _patch_u32(data, t.field(2), m.vec_len(4)), MA_ERR_MODEL
    # opcode_index 0 is the default, left out of the table: take an operator that stores it.
    ops = [sg.table(3, i) for i in range(sg.vec_len(3))]
    with_code = [o for o in ops if o.has(0)]
    if with_code:
        bad_code = _patch_u32(data, with_code[0].field(0), m.vec_len(1))
        yield "opcode index", bad_code, MA_ERR_MODEL
    yield "root offset", _patch_u32(data, 0, len(data) + 64), MA_ERR_MODEL
    yield "schema version", _patch_u32(data, m.field(0), 2), MA_ERR_MODEL
    # Vector lengths that run past the end of the buffer.
    yield "tensor count", _patch_u32(data, sg.vec_first(0) - 4, 1 << 28), MA_ERR_MODEL
    yield "shape length", _patch_u32(data, t.vec_first(0) - 4, 1 << 30), MA_ERR_MODEL
    yield "negative dim", _patch_u32(data, t.vec_first(0), -7), MA_ERR_MODEL
    # Accepted by the reader (2 GiB - 1 of int8) but no kernel or plan takes it.
    yield "huge dim", _patch_u32(data, t.vec_first(0), 0x7FFFFFFF), MA_ERR_MODEL


def truncations(data: bytes, count: int = 60) -> Iterator[bytes]:
    for cut in np.unique(np.linspace(0, len(data) - 1, count).astype(int)):
        yield data[: int(cut)]


def flips(data: bytes, count: int, seed: int) -> Iterator[bytes]:
    rng = np.random.default_rng(seed)
    for _ in range(count):
        b = bytearray(data)
        for pos in rng.integers(0, len(b), rng.integers(1, 4)):
            b[int(pos)] = int(rng.integers(0, 256))
        yield bytes(b)


def try_model(data: bytes) -> int:
    """Load (and if it loads, run on zeros) a model; the status, 0 when all went fine."""
    try:
        it = Interpreter(data, ARENA)
        for i in range(it.num_inputs()):
            d = it.input_details(i)
            it.set_input(i, np.zeros(d.shape, d.dtype))
        it.invoke()
    except MicroarenaError as e:
        assert e.message, "every error carries a message"
        return e.status
    return 0


def corpus(flip_count: int) -> Iterator[bytes]:
    for name in CORPUS_MODELS:
        data = _load(name)
        yield from truncations(data)
        yield from flips(data, flip_count, seed=len(name))
        for _, bad, _ in targeted(data):
            yield bad


# ----------------------------------------------------------------------------- tests


def test_truncated_models_fail_cleanly() -> None:
    for name in CORPUS_MODELS:
        data = _load(name)
        for cut in truncations(data):
            assert try_model(cut) == MA_ERR_MODEL, f"{name} cut at {len(cut)}"


def test_targeted_corruptions_are_reported() -> None:
    for name in CORPUS_MODELS:
        for what, bad, status in targeted(_load(name)):
            with pytest.raises(MicroarenaError) as e:
                Interpreter(bad, ARENA)
            assert e.value.status == status, f"{name}: {what}: {e.value}"
            if what != "huge dim":
                assert "malformed model" in e.value.message or "version" in e.value.message


def test_random_byte_flips_never_crash() -> None:
    statuses = [try_model(bad) for name in CORPUS_MODELS for bad in flips(_load(name), 150, 1)]
    assert any(s != 0 for s in statuses), "byte flips must be detected at least sometimes"


def test_bad_arguments() -> None:
    data = _load("tflm_hello_world_int8")
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data[:4], ARENA)
    assert e.value.status == MA_ERR_MODEL
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data, 64)
    assert "arena too small" in e.value.message


def small_arenas(data: bytes) -> Iterator[int]:
    """Arena sizes from 0 to just below the required one, in 8-byte steps."""
    required = Interpreter(data).stats().required
    yield from range(0, required, 8)


def test_every_smaller_arena_fails_cleanly() -> None:
    for name in ("tflm_hello_world_int8", "litert_resource_vars_fc"):
        data = _load(name)
        for size in small_arenas(data):
            with pytest.raises(MicroarenaError) as e:
                Interpreter(data, size)
            assert e.value.status == MA_ERR_ARENA, e.value
            assert re.search(r"needs at least \d+ bytes", e.value.message)


def test_offline_plan_with_wrong_tensor_count() -> None:
    from host.tflite.model import Model

    model = Model(_load("tflm_hello_world_int8"))
    model.set_metadata(b"OfflineMemoryAllocation", struct.pack("<4i", 0, 1, 1, 0))
    with pytest.raises(MicroarenaError) as e:
        Interpreter(model.to_bytes(), ARENA)
    assert e.value.status == MA_ERR_PLAN and "offsets but the model has" in e.value.message


FUZZ_DATA = Path(__file__).resolve().parents[1] / "data"


def test_tensor_written_by_two_operators_is_refused() -> None:
    """A tensor written by two operators once had the later writer's lifetime only, so the
    planner left its earlier lifetime unreserved: libFuzzer's mutated GRU (committed) placed
    SPLIT's output 43 over SPLIT's input by 8 bytes. Such a model is refused at load."""
    crash = (FUZZ_DATA / "fuzz" / "gru_split_output_written_twice.tflite").read_bytes()
    with pytest.raises(MicroarenaError) as e:
        Interpreter(crash, ARENA)
    assert e.value.status == MA_ERR_MODEL
    assert "tensor 43 of subgraph 0 is written twice" in e.value.message

    # The same in a small model: the MLP's operator 1 (input 4, output 5) also writes 4.
    data = (FUZZ_DATA / "keras" / "mlp_float.tflite").read_bytes()
    sg = _Table(data, struct.unpack_from("<I", data, 0)[0]).table(2, 0)
    op = sg.table(3, 1)
    assert struct.unpack_from("<2I", data, op.vec_first(1) - 4) == (1, 4)
    with pytest.raises(MicroarenaError) as e:
        Interpreter(_patch_u32(data, op.vec_first(2), 4), ARENA)
    assert e.value.status == MA_ERR_MODEL
    assert "tensor 4 of subgraph 0 is written twice" in e.value.message


def test_endless_while_is_stopped() -> None:
    it = Interpreter(_load("litert_nested_while"), ARENA)
    for i in range(it.num_inputs()):
        d = it.input_details(i)
        it.set_input(i, np.zeros(d.shape, d.dtype))  # zeros never end this loop (see MANIFEST)
    with pytest.raises(MicroarenaError) as e:
        it.invoke()
    assert "iterations without ending" in e.value.message


def test_corpus_under_address_and_undefined_sanitizers() -> None:
    from support.sanitize import sanitized_env

    missing = [n for n in CHILD_MODELS if not (MODELS / f"{n}.tflite").exists()]
    if missing:
        pytest.skip(f"shared models absent from {MODELS} (tests read ../shared/models): {missing}")
    env = sanitized_env()
    proc = subprocess.run(
        [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert "corpus ok" in proc.stdout


def _child() -> int:
    """Runs the whole corpus plus every shared model (under the sanitizers)."""
    n = 0
    for bad in corpus(flip_count=150):
        try_model(bad)
        n += 1
    for size in small_arenas(_load("litert_resource_vars_fc")):
        try:
            Interpreter(_load("litert_resource_vars_fc"), size)
        except MicroarenaError:
            n += 1
    for p in sorted(MODELS.glob("*.tflite")):
        if p.stem != "litert_nested_while":  # zeros loop until the iteration limit
            try_model(p.read_bytes())
            n += 1
    print(f"corpus ok: {n} models")
    return 0


if __name__ == "__main__" and "--child" in sys.argv:
    sys.exit(_child())
