"""Which tensors a model's plan may let share bytes: an operator's output over an input it
reads for the last time, where the kernel library's loops prove it safe (libraries/loops.py
derives the rules; this module applies them to a model's lifetimes)."""

from __future__ import annotations

from dataclasses import dataclass

from host.planning.libraries import loops
from host.planning.libraries.base import KernelLibrary
from host.planning.model.lifetimes import Walk
from host.tflite.model import Model, Operator, Subgraph


def op_rules(
    model: Model, sg: Subgraph, op: Operator, lib: KernelLibrary
) -> list[loops.Rule] | None:
    """The overlap rules of an operator's activation inputs; None if it has no proven rule."""
    k = lib.overlap_kernel(model, sg, op)
    if k is None or not 0 < loops.indices(k) <= loops.MAX_RULE_INDICES:
        return None  # no proven rule; or empty or huge shapes (a damaged model): no overlap
    return [loops.Rule(s, loops.rule(k, s)) for s in k.slots]


@dataclass(frozen=True)
class Pair:
    """Tensor `input` (global index) may share bytes with `output` at offsets with
    input - output >= min_delta: both are used only together, by operator `op`."""

    input: int
    output: int
    min_delta: int
    subgraph: int
    op: int
    op_name: str


def overlap_pairs(model: Model, w: Walk, lib: KernelLibrary) -> list[Pair]:
    """Every (input, output) pair the rules allow to overlap in this model.

    An input qualifies only if this operator is its last use and the output is created by it,
    so no other operator ever sees the overwritten bytes, and if it is no output of its
    subgraph (a graph output read by the last operator ends there too, but the caller reads
    it after the invocation); neither may be an input or output of a called subgraph.
    min_delta is never below -(input size): beyond that the two do not overlap at all.
    """
    life = {lt.tensor.global_index: lt for lt in w.lifetimes}
    scope = {(s.subgraph, s.op): s for s in w.op_scopes}
    pairs = []
    for sg in model.subgraphs:
        for op in sg.operators:
            span = scope.get((sg.index, op.index))
            if span is None or span.first != span.last:
                continue  # not walked, or calls subgraphs
            rules = op_rules(model, sg, op, lib)
            # Control-flow operators copy a called subgraph's inputs and outputs (possibly one
            # onto the other): those tensors never overlap.
            boundary = set(sg.inputs + sg.outputs) if sg.index else set()
            kept = boundary | set(sg.outputs)  # inputs read after this operator's writes
            if not rules:
                continue
            out = life.get(sg.tensors[op.outputs[0]].global_index)
            if out is None or out.first != span.first or op.outputs[0] in boundary:
                continue
            by_tensor: dict[int, int] = {}
            for r in rules:
                t = life.get(sg.tensors[op.inputs[r.slot]].global_index)
                if t is None or t.last != span.first or t is out or op.inputs[r.slot] in kept:
                    continue
                d = -t.size if r.min_delta is None else max(r.min_delta, -t.size)
                gi = t.tensor.global_index
                by_tensor[gi] = max(by_tensor.get(gi, d), d)
            ruled = {r.slot for r in rules}
            for slot, ti in enumerate(op.inputs):  # also read where no rule covers it
                if ti >= 0 and slot not in ruled:
                    by_tensor.pop(sg.tensors[ti].global_index, None)
            for gi, d in by_tensor.items():
                pairs.append(Pair(gi, out.tensor.global_index, d, sg.index, op.index, op.name))
    return pairs
