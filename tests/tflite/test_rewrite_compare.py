"""A rewrite keeps every field's meaning (issue 18, finding 6): a table field sharing another
field's bytes, and the field-by-field comparison --embed runs before it writes."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from support.subgraph_models import shared_tables_model, variable_state_model

from host.planning import origin
from host.planning.cli import main
from host.planning.model import metadata
from host.tflite import schema as S
from host.tflite.compare import check_rewrite, rewrite_differences
from host.tflite.flatbuf import EXPANSION, set_child
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError


def _table(data: bytes, pos: int) -> tuple[int, int]:
    """(table position, its vtable's position)."""
    return pos, pos - struct.unpack_from("<i", data, pos)[0]


def _slot(data: bytes, pos: int, slot: int) -> int:
    vt = _table(data, pos)[1]
    return struct.unpack_from("<H", data, vt + 4 + 2 * slot)[0]


def _deref(data: bytes, at: int) -> int:
    return at + struct.unpack_from("<I", data, at)[0]


def name_aliasing_buffer() -> bytes:
    """Tensor 0's name offset shares the bytes of its buffer index (0): the name reads as an
    empty string there. TFLM reads such a vtable; a writer must not let one field's new offset
    overwrite the other."""
    data = bytearray(variable_state_model()[0])
    root = _deref(data, 0)
    sg0 = _deref(data, _deref(data, root + _slot(data, root, S.MODEL_SUBGRAPHS)) + 4)
    t0 = _deref(data, _deref(data, sg0 + _slot(data, sg0, S.SUBGRAPH_TENSORS)) + 4)
    vt = _table(data, t0)[1]
    struct.pack_into("<H", data, vt + 4 + 2 * S.TENSOR_NAME, _slot(data, t0, S.TENSOR_BUFFER))
    return bytes(data)


def test_a_field_sharing_another_fields_bytes_keeps_its_value() -> None:
    data = name_aliasing_buffer()
    before = [(t.name, t.buffer) for t in Model(data).tensors]
    assert before[0] == ("", 0)
    model = Model(data)
    metadata.embed(model, {0: 0})
    written = model.to_bytes()  # the name's new offset once landed in the buffer index (28)
    assert [(t.name, t.buffer) for t in Model(written).tensors] == before
    assert rewrite_differences(data, written) == []


def test_embed_of_such_a_model_keeps_its_meaning(tmp_path: Path) -> None:
    p = tmp_path / "alias.tflite"
    p.write_bytes(name_aliasing_buffer())
    assert main([str(p), "--embed", "-q"]) == 0
    names = (OFFLINE_PLAN_NAME, origin.MARKER)
    assert rewrite_differences(name_aliasing_buffer(), p.read_bytes(), names) == []
    assert Model(p.read_bytes()).tensors[0].buffer == 0


def test_a_rewrite_that_changes_a_field_is_refused_before_writing() -> None:
    """The comparison sees every field: a tensor's buffer index, a shape, an operator's
    inputs, the operator codes; check_rewrite refuses, naming the field."""
    data = variable_state_model()[0]

    def tensor(root, i):
        return root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_TENSORS)[i]

    def op(root, i):
        return root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_OPERATORS)[i]

    edits = {
        "Model.2[0].0[1].2": lambda r: _set_scalar(tensor(r, 1), S.TENSOR_BUFFER, 5),
        "Model.2[0].0[2].0": lambda r: set_child(tensor(r, 2), S.TENSOR_SHAPE, bytes(8)),
        "Model.2[0].3[1].1": lambda r: set_child(op(r, 1), S.OP_INPUTS, bytes(8)),
        "Model.1": lambda r: set_child(r, S.MODEL_OPCODES, []),
    }
    for where, edit in edits.items():
        model = Model(data)
        metadata.embed(model, {})
        edit(model.root)
        with pytest.raises(ModelError, match="nothing written") as e:
            check_rewrite(model)
        assert where + ":" in str(e.value)
    model = Model(data)
    metadata.embed(model, {0: 0})
    assert check_rewrite(model) == model.to_bytes()


def _set_scalar(table, slot: int, value: int) -> None:
    struct.pack_into("<I", table.inline, table.field_offsets[slot], value)


def test_a_table_shared_many_times_is_refused_not_unfolded() -> None:
    """A subgraph listed 1000 times whose tensor list names one tensor 1000 times: 8 KB that
    would decode to a million tensors. Refused with a message, in bounded time and memory."""
    data = shared_tables_model(1000, 1000)
    assert len(data) < 10_000
    with pytest.raises(ModelError, match=f"more than {EXPANSION} times its size"):
        Model(data)
