"""Models with more than one subgraph, built in code (the shared corpus's are optional)."""

from __future__ import annotations

import struct

from host.tflite import flatbuf
from host.tflite.flatbuf import encode, new_table, set_child
from host.tflite.modelgen import Graph, scalar_options
from host.tflite.schema import SCHEMA

FLOAT32, BOOL = 0, 6


IF, RELU, ADD_N = 118, 19, 106
IF_OPTIONS, NO_OPTIONS = 92, 82


def assemble(graphs: list[tuple[Graph, list[int], list[int]]]) -> bytes:
    """A model of several subgraphs (Graph, inputs, outputs), subgraph 0 first. The graphs
    must share graphs[0]'s buffers and opcodes (`shared_graphs`)."""
    subgraphs = []
    for g, ins, outs in graphs:
        sg = new_table("SubGraph", {}, 6)
        set_child(sg, 0, g.tensors)
        set_child(sg, 1, struct.pack(f"<{len(ins)}i", *ins))
        set_child(sg, 2, struct.pack(f"<{len(outs)}i", *outs))
        set_child(sg, 3, g.operators)
        subgraphs.append(sg)
    codes = [
        new_table("OperatorCode", {0: ("b", min(k, 127)), 2: ("i", 1), 3: ("i", k)}, 4)
        for k in graphs[0][0].opcodes
    ]
    root = new_table("Model", {0: ("I", 3)}, 8)
    set_child(root, 1, codes)
    set_child(root, 2, subgraphs)
    set_child(root, 4, graphs[0][0].buffers)
    return encode(root, SCHEMA)


def shared_graphs(n: int) -> list[Graph]:
    """n graphs of one model: one buffer table and one opcode list."""
    graphs = [Graph() for _ in range(n)]
    for g in graphs[1:]:
        g.buffers, g.opcodes = graphs[0].buffers, graphs[0].opcodes
    return graphs


def branches(then: int, otherwise: int):
    return scalar_options({0: ("i", then), 1: ("i", otherwise)}, 2)


def twice_called_subgraph_model() -> tuple[bytes, dict[str, int]]:
    """Subgraph 1 (b = ADD_N(a, a, a), which requests scratch) called by two IF operators of
    subgraph 0: y = IF(c, x); y2 = RELU(y); z = IF(c, y2). Returns the model and the global
    tensor indices by name."""
    g0, g1 = shared_graphs(2)
    c = g0.tensor("c", (1,), BOOL, [0.0], [0])
    x, y, y2, z = (g0.tensor(n, (1, 8), FLOAT32, [0.0], [0]) for n in ("x", "y", "y2", "z"))
    g0.op(IF, [c, x], [y], IF_OPTIONS, branches(1, 1))
    g0.op(RELU, [y], [y2], NO_OPTIONS, scalar_options({}, 1))
    g0.op(IF, [c, y2], [z], IF_OPTIONS, branches(1, 1))
    a, b = (g1.tensor(n, (1, 8), FLOAT32, [0.0], [0]) for n in ("a", "b"))
    g1.op(ADD_N, [a, a, a], [b], NO_OPTIONS, scalar_options({}, 1))
    names = {"c": c, "x": x, "y": y, "y2": y2, "z": z, "a": 5 + a, "b": 5 + b}
    return assemble([(g0, [c, x], [z]), (g1, [a], [b])]), names


def shared_branch_model() -> bytes:
    """Issue 18's silent wrong result: subgraph 1 (b = ADD_N(a, a)) called by two IFs, with
    p = RELU(x) live across the first call only: p = RELU(x); y = IF(c, x); q = ADD_N(p, y);
    z = IF(c, q). A planner keeping only the second call's lifetimes puts a over p."""
    g0, g1 = shared_graphs(2)
    c = g0.tensor("c", (1,), BOOL, [0.0], [0])
    x, p, y, q, z = (g0.tensor(n, (1, 8), FLOAT32, [0.0], [0]) for n in "xpyqz")
    g0.op(RELU, [x], [p], NO_OPTIONS, scalar_options({}, 1))
    g0.op(IF, [c, x], [y], IF_OPTIONS, branches(1, 1))
    g0.op(ADD_N, [p, y], [q], NO_OPTIONS, scalar_options({}, 1))
    g0.op(IF, [c, q], [z], IF_OPTIONS, branches(1, 1))
    a, b = (g1.tensor(n, (1, 8), FLOAT32, [0.0], [0]) for n in "ab")
    g1.op(ADD_N, [a, a], [b], NO_OPTIONS, scalar_options({}, 1))
    return assemble([(g0, [c, x], [z]), (g1, [a], [b])])


ADD, ADD_OPTIONS = 0, 11


def variable_state_model() -> tuple[bytes, dict[str, int]]:
    """A state kept in a variable tensor across invocations: v = ADD(v, x); y = ADD(v, x);
    z = RELU(y). v's last use is operator 1, so z may follow it in time (but never in bytes)."""
    (g,) = shared_graphs(1)
    x = g.tensor("x", (1, 4), FLOAT32, [0.0], [0])
    v = g.tensor("v", (1, 4), FLOAT32, [0.0], [0], is_variable=True)
    y, z = (g.tensor(n, (1, 4), FLOAT32, [0.0], [0]) for n in "yz")
    g.op(ADD, [v, x], [v], ADD_OPTIONS, scalar_options({}, 1))
    g.op(ADD, [v, x], [y], ADD_OPTIONS, scalar_options({}, 1))
    g.op(RELU, [y], [z], NO_OPTIONS, scalar_options({}, 1))
    return assemble([(g, [x], [z])]), {"x": x, "v": v, "y": y, "z": z}


class _SharingWriter(flatbuf._Writer):
    """Writes a table object once however often it is referenced (flatbuffers allow this;
    the project's writer never does it)."""

    def __init__(self, schema) -> None:
        super().__init__(schema)
        self.seen: dict[int, int] = {}

    def table(self, t) -> int:
        if id(t) not in self.seen:
            self.seen[id(t)] = super().table(t)
        return self.seen[id(t)]


def shared_tables_model(subgraphs: int, tensors: int) -> bytes:
    """`subgraphs` references to one subgraph whose tensor list references one tensor table
    `tensors` times: a small file that unfolds to subgraphs * tensors tensors."""
    (g,) = shared_graphs(1)
    x = g.tensor("x", (1, 4), FLOAT32, [0.0], [0])
    y = g.tensor("y", (1, 4), FLOAT32, [0.0], [0])
    g.op(RELU, [x], [y], NO_OPTIONS, scalar_options({}, 1))
    root = flatbuf.decode(assemble([(g, [x], [y])]), SCHEMA)
    sg = root.children[2][0]
    sg.children[0] = [sg.children[0][0]] * tensors
    root.children[2] = [sg] * subgraphs
    w = _SharingWriter(SCHEMA)
    w.out += bytes(4) + SCHEMA.identifier
    w.patch(0, w.table(root))
    return bytes(w.out)
