"""Random call graphs of IF operators (fan-out, sharing, depth) that TFLM and the runtime run.

Every subgraph takes (c, a) and returns b, all float (1, 8) but the bool condition c. Subgraph
i chains a few operators over its input: RELU, ADD_N of the running value with an earlier
tensor (so tensors stay live across calls), and IF(c, c, t) calling two deeper subgraphs,
often the same one (fan-out) and often one another operator also calls (sharing). The deepest
subgraph doubles its input, so every call changes the value. Every subgraph is reached (the
pip TFLM crashes on scratch requested in a subgraph nothing calls).
"""

from __future__ import annotations

import random

from support.subgraph_models import (
    ADD_N,
    BOOL,
    FLOAT32,
    IF,
    IF_OPTIONS,
    NO_OPTIONS,
    RELU,
    assemble,
    branches,
    shared_graphs,
)

from host.tflite.modelgen import scalar_options

SHAPE = (1, 8)


def fanout_model(levels: list[int]) -> bytes:
    """Subgraph i (i < len(levels)) chains levels[i] IFs, each calling subgraph i + 1 as
    both branches: the walk unfolds into about prod(2 * levels[i]) operator visits."""
    graphs = shared_graphs(len(levels) + 1)
    io = []
    for i, g in enumerate(graphs):
        c = g.tensor("c", (1,), BOOL, [0.0], [0])
        t = g.tensor("a", SHAPE, FLOAT32, [0.0], [0])
        ins = [c, t]
        for k in range(levels[i] if i < len(levels) else 0):
            out = g.tensor(f"t{k}", SHAPE, FLOAT32, [0.0], [0])
            g.op(IF, [c, c, t], [out], IF_OPTIONS, branches(i + 1, i + 1))
            t = out
        if i == len(levels):
            out = g.tensor("b", SHAPE, FLOAT32, [0.0], [0])
            g.op(ADD_N, [t, t], [out], NO_OPTIONS, scalar_options({}, 1))
            t = out
        io.append((g, ins, [t]))
    return assemble(io)


def random_call_graph(rng: random.Random, subgraphs: int = 5, ops: int = 5) -> bytes:
    """A random model of `subgraphs` subgraphs, each of `ops` operators (the deepest one)."""
    graphs = shared_graphs(subgraphs)
    io = []
    for i, g in enumerate(graphs):
        c = g.tensor("c", (1,), BOOL, [0.0], [0])
        a = g.tensor("a", SHAPE, FLOAT32, [0.0], [0])
        live, t = [a], a
        deepest = i == subgraphs - 1
        chain = rng.randint(0, ops - 1)  # this IF calls subgraph i + 1: every one is reached
        for k in range(1 if deepest else ops):
            out = g.tensor(f"t{k}", SHAPE, FLOAT32, [0.0], [0])
            kind = "double" if deepest else rng.choice(["if", "if", "relu", "add"])
            kind = "if" if k == chain and not deepest else kind
            if kind == "if":
                then = i + 1 if k == chain else rng.randint(i + 1, subgraphs - 1)
                other = then if rng.random() < 0.5 else rng.randint(i + 1, subgraphs - 1)
                g.op(IF, [c, c, t], [out], IF_OPTIONS, branches(then, other))
            elif kind == "relu":
                g.op(RELU, [t], [out], NO_OPTIONS, scalar_options({}, 1))
            elif kind == "add":
                g.op(ADD_N, [t, rng.choice(live)], [out], NO_OPTIONS, scalar_options({}, 1))
            else:
                g.op(ADD_N, [t, t], [out], NO_OPTIONS, scalar_options({}, 1))
            live.append(out)
            t = out
        io.append((g, [c, a], [t]))
    return assemble(io)
