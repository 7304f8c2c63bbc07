"""Model I/O: faithful round trips, aligned buffers, idempotent embedding, clear errors."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import run_tflm, shared_model, shared_model_names

from host.planning.cli import main as plan_main
from host.planning.model import metadata
from host.planning.packing import PlanError
from host.planning.plan import plan_model
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

ALL = shared_model_names()


def _buffer_positions(data: bytes) -> list[tuple[int, int]]:
    """(position, length) of every non-empty Buffer.data, read with the `tflite` package."""
    tflite = pytest.importorskip("tflite", reason="the pure-Python `tflite` reader is needed")
    m = tflite.Model.GetRootAsModel(data, 0)
    out = []
    for i in range(m.BuffersLength()):
        b = m.Buffers(i)
        if b.DataLength():
            vec = b._tab.Vector(b._tab.Offset(4))
            out.append((vec, b.DataLength()))
    return out


@pytest.mark.parametrize("name", ALL)
def test_round_trip_preserves_model(name: str) -> None:
    original = shared_model(name).read_bytes()
    m = Model(original, name)
    written = m.to_bytes()
    again = Model(written)
    assert again.to_bytes() == written, "encoding is not deterministic"
    assert [vars(t) for t in again.tensors] == [vars(t) for t in m.tensors]
    assert [[vars(o) for o in sg.operators] for sg in again.subgraphs] == [
        [vars(o) for o in sg.operators] for sg in m.subgraphs
    ]
    for i in range(len(m.buffers)):
        assert again.buffer_data(i) == m.buffer_data(i)
    for pos, _ in _buffer_positions(written):
        assert pos % 16 == 0, "buffer data lost its 16-byte alignment"


@pytest.mark.parametrize("name", ["tflm_person_detect_int8", "litert_while_multi_subgraphs"])
def test_round_trip_runs_identically_in_tflm(name: str) -> None:
    original = shared_model(name).read_bytes()
    written = Model(original).to_bytes()
    a, b = run_tflm(original), run_tflm(written)
    for x, y in zip(a.outputs, b.outputs, strict=True):
        assert np.array_equal(x, y)
    assert (a.head, a.tail) == (b.head, b.tail)


def test_embed_twice_is_byte_identical(tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(shared_model("tflm_micro_speech_int8").read_bytes())
    assert plan_main([str(model), "--embed", "-q", "--json"]) == 0
    first = model.read_bytes()
    assert plan_main([str(model), "--embed", "-q", "--json"]) == 0
    assert model.read_bytes() == first
    m = Model(first)
    names = [md.get(0) for md in m.root.get(6, [])]
    assert names.count(OFFLINE_PLAN_NAME) == 1


def test_existing_plans_are_replaced_not_added() -> None:
    m = Model(shared_model("tflm_hello_world_int8").read_bytes())
    n = len(m.tensors)
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode([-1] * n, 1))
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode([0] * n, 1))
    again = Model(m.to_bytes())
    names = [md.get(0) for md in again.root.get(6, [])]
    assert names.count(OFFLINE_PLAN_NAME) == 1
    assert metadata.read(again).offsets == [0] * n  # type: ignore[union-attr]


def test_output_elsewhere_leaves_input_untouched(tmp_path: Path) -> None:
    src = tmp_path / "in.tflite"
    src.write_bytes(shared_model("tflm_hello_world_float").read_bytes())
    before = src.read_bytes()
    out = tmp_path / "out.tflite"
    assert plan_main([str(src), "--embed", "-o", str(out), "-q"]) == 0
    assert src.read_bytes() == before
    assert metadata.read(Model.load(out)) is not None


def _corruptions(data: bytes) -> list[tuple[str, bytes]]:
    cases = [("empty", b""), ("text", b"hello, not a model at all\n" * 4)]
    for cut in (7, 12, len(data) // 3, len(data) // 2, len(data) - 64):
        cases.append((f"truncated at {cut}", data[:cut]))
    root = struct.unpack_from("<I", data)[0]
    bad = bytearray(data)
    struct.pack_into("<I", bad, 0, len(data) + 100)
    cases.append(("root offset out of range", bytes(bad)))
    bad = bytearray(data)
    struct.pack_into("<i", bad, root, -(1 << 30))
    cases.append(("vtable out of range", bytes(bad)))
    return cases


@pytest.mark.parametrize("case", range(9))
def test_corrupt_models_give_clear_errors(tmp_path: Path, capsys, case: int) -> None:
    data = shared_model("tflm_micro_speech_int8").read_bytes()
    what, bad = _corruptions(data)[case]
    path = tmp_path / "bad.tflite"
    path.write_bytes(bad)
    assert plan_main([str(path), "--embed", "-q"]) == 2, what
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err, what
    assert path.read_bytes() == bad, "a bad input file was changed"


def test_random_byte_flips_never_crash() -> None:
    data = shared_model("tflm_hello_world_int8").read_bytes()
    rng = np.random.default_rng(1)
    for _ in range(300):
        bad = bytearray(data)
        for pos in rng.integers(0, len(bad), 4):
            bad[pos] = int(rng.integers(0, 256))
        try:
            m = Model(bytes(bad))
            m.to_bytes()
            plan_model(m, planner="greedy")
        except (ModelError, PlanError):
            pass


def test_dynamic_and_string_tensors_are_named() -> None:
    m = Model(shared_model("tflm_hello_world_int8").read_bytes())
    t = m.tensors[0]
    t.shape = (1, -1)
    with pytest.raises(ModelError, match=repr(t.name)):
        t.nbytes()
    t.type = 5
    with pytest.raises(ModelError, match="STRING"):
        t.nbytes()
