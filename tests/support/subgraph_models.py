"""Models with more than one subgraph, built in code (the shared corpus's are optional)."""

from __future__ import annotations

import struct

from host.tflite.flatbuf import encode, new_table, set_child
from host.tflite.modelgen import Graph, scalar_options
from host.tflite.schema import SCHEMA

FLOAT32, BOOL = 0, 6


def twice_called_subgraph_model() -> tuple[bytes, dict[str, int]]:
    """Subgraph 1 (b = ADD_N(a, a, a), which requests scratch) called by two IF operators of
    subgraph 0: y = IF(c, x); y2 = RELU(y); z = IF(c, y2). Returns the model and the global
    tensor indices by name."""
    g0, g1 = Graph(), Graph()
    g1.buffers, g1.opcodes = g0.buffers, g0.opcodes  # one model: shared tables
    c = g0.tensor("c", (1,), BOOL, [0.0], [0])
    x, y, y2, z = (g0.tensor(n, (1, 8), FLOAT32, [0.0], [0]) for n in ("x", "y", "y2", "z"))
    branches = scalar_options({0: ("i", 1), 1: ("i", 1)}, 2)  # then = else = subgraph 1
    g0.op(118, [c, x], [y], 92, branches)
    g0.op(19, [y], [y2], 82, scalar_options({}, 1))
    g0.op(118, [c, y2], [z], 92, branches)
    a, b = (g1.tensor(n, (1, 8), FLOAT32, [0.0], [0]) for n in ("a", "b"))
    g1.op(106, [a, a, a], [b], 82, scalar_options({}, 1))
    subgraphs = []
    for g, ins, outs in ((g0, [c, x], [z]), (g1, [a], [b])):
        sg = new_table("SubGraph", {}, 6)
        set_child(sg, 0, g.tensors)
        set_child(sg, 1, struct.pack(f"<{len(ins)}i", *ins))
        set_child(sg, 2, struct.pack(f"<{len(outs)}i", *outs))
        set_child(sg, 3, g.operators)
        subgraphs.append(sg)
    codes = [
        new_table("OperatorCode", {0: ("b", min(k, 127)), 2: ("i", 1), 3: ("i", k)}, 4)
        for k in g0.opcodes
    ]
    root = new_table("Model", {0: ("I", 3)}, 8)
    set_child(root, 1, codes)
    set_child(root, 2, subgraphs)
    set_child(root, 4, g0.buffers)
    names = {"c": c, "x": x, "y": y, "y2": y2, "z": z, "a": 5 + a, "b": 5 + b}
    return encode(root, SCHEMA), names
