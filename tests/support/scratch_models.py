"""Small models for the scratch and allocation tests against the real TFLM: one builtin
operator built with the project's model writer, and a model whose tensors an offline plan pins
one above the other (so TFLM's head minus the tensors is what its kernels requested)."""

from __future__ import annotations

from host.planning.model import metadata
from host.planning.model.lifetimes import walk
from host.tflite.model import Model
from host.tflite.modelgen import Graph, assemble, scalar_options


def stacked(model: Model, base: int, reverse: bool = False) -> bytes:
    """The model with every planned tensor pinned at its own offset, stacked upwards from base."""
    lts = walk(model).lifetimes
    offsets, at = {}, base
    for lt in reversed(lts) if reverse else lts:
        offsets[lt.tensor.global_index] = at
        at += lt.size
    copy = Model(model.to_bytes(), model.source)
    metadata.embed(copy, offsets)
    return copy.to_bytes()


def builtin_op_model(
    code: int,
    in_shapes: list[tuple[int, ...]],
    out_shape: tuple[int, ...] | list[tuple[int, ...]],
    dtype: int,
    opt_type: int = 0,
    opt_slots: dict | None = None,
    const_inputs: dict[int, bytes | tuple[bytes, int]] | None = None,
    out_dtype: int | None = None,
) -> bytes:
    """A one-operator model built with the project's model writer.

    Constant inputs are int32 (axes, shapes, paddings) unless given as (bytes, type); a list
    of output shapes gives several outputs.
    """
    g = Graph()
    scale = [0.05]
    consts = const_inputs or {}
    ins = []
    for i, shape in enumerate(in_shapes):
        data = consts.get(i)
        t_type = dtype if data is None else 2
        if isinstance(data, tuple):
            data, t_type = data
        ins.append(g.tensor(f"in{i}", shape, t_type, scale, [0], data))
    shapes = out_shape if isinstance(out_shape, list) else [out_shape]
    odt = dtype if out_dtype is None else out_dtype
    outs = [g.tensor(f"out{i}", sh, odt, scale, [0]) for i, sh in enumerate(shapes)]
    g.op(code, ins, outs, opt_type, scalar_options(opt_slots or {}, 8))
    return assemble(g, [i for i in range(len(in_shapes)) if i not in consts], outs)
