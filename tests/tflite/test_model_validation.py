"""host's model reader refuses what the runtime refuses, with the same reasons (issue 18,
finding 11): a tensor's buffer index out of range, constant data of the wrong size, constant
data on a variable; and unknown tensor types are named as unknown."""

from __future__ import annotations

import struct

import pytest
from support.subgraph_models import variable_state_model

from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite import schema as S
from host.tflite.flatbuf import new_table, set_child
from host.tflite.model import Model, ModelError


def _edited(edit) -> bytes:
    model = Model(variable_state_model()[0])
    edit(model.root)
    return model.to_bytes()


def _tensor(root, i: int):
    return root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_TENSORS)[i]


def _set_buffer(root, tensor: int, data: bytes | None, index: int | None = None) -> None:
    buffers = root.get(S.MODEL_BUFFERS)
    if index is None:
        buf = new_table("Buffer", {}, 1)
        set_child(buf, S.BUFFER_DATA, data)
        buffers.append(buf)
        index = len(buffers) - 1
    t = _tensor(root, tensor)
    struct.pack_into("<I", t.inline, t.field_offsets[S.TENSOR_BUFFER], index)


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda r: _set_buffer(r, 2, None, 99), "uses buffer 99, but there are 1"),
        (lambda r: _set_buffer(r, 0, bytes(12)), "holds 12 bytes of constant data"),
        (lambda r: _set_buffer(r, 1, bytes(16)), "is a variable with constant data"),
    ],
)
def test_refused_by_the_planner_as_by_the_runtime(edit, reason: str) -> None:
    data = _edited(edit)
    with pytest.raises(ModelError, match=reason):
        Model(data)
    with pytest.raises(MicroarenaError):
        Interpreter(data)


def test_a_negative_type_is_unknown() -> None:
    def negative(root) -> None:
        t = _tensor(root, 2)
        struct.pack_into("<b", t.inline, t.field_offsets[S.TENSOR_TYPE], -1)

    tensor = Model(_edited(negative)).tensors[2]
    assert tensor.type_name == "unknown (-1)"
    with pytest.raises(ModelError, match=r"has type unknown \(-1\)"):
        tensor.nbytes()
    with pytest.raises(MicroarenaError, match="unsupported type -1"):
        Interpreter(_edited(negative))
