"""Tensor lifetimes exactly as TensorFlow Lite Micro computes them.

TFLM walks subgraph 0 once, counting "allocation scopes": subgraph inputs are created at the
scope the subgraph starts in; operator i of a subgraph opens a new scope in which its outputs
are created; an IF / WHILE / CALL_ONCE operator walks each callee subgraph in a fresh scope
before its own inputs are last used; subgraph outputs live to the end of the subgraph's walk.
A tensor keeps its first creation, so a subgraph called twice keeps its tensors (and its
operators' scratch) live from the first call to the last. These rules were checked against
the pip tflite-micro interpreter (tests/planning/test_plan_tflm.py, tests/planning/test_scratch.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from host.planning.packing.problem import Buffer, align_up
from host.tflite.model import Model, ModelError, Tensor

RESOURCE = 13
MAX_CALL_DEPTH = 32
# Scopes a walk may open (operators visited, callees' included, plus one per call): a subgraph
# called from many places, a few levels deep, unfolds exponentially. The runtime's limit
# (MA_MAX_SCOPES in firmware/include/microarena.h); TFLM has none and walks on for minutes.
MAX_SCOPES = 262144


# How every report and message writes a lifetime: half-open over allocation scopes (TFLM's
# steps: scope k is operator k of the walk, callees' operators numbered in between; -1 means
# never used), the same convention as the --buffers CSV's [lower, upper).
SPAN_LEGEND = (
    "live [a, b): allocated from step a up to, not including, step b (a step is one "
    "operator of the walk, called subgraphs' operators included; -1: never used)"
)


def span_text(first: int, last: int) -> str:
    """An inclusive scope range first..last as the half-open [first, last + 1)."""
    return f"[{first}, {last + 1})"


@dataclass
class Lifetime:
    """A buffer TFLM plans in the arena head; first/last are inclusive allocation scopes."""

    tensor: Tensor
    first: int
    last: int
    size: int  # bytes rounded up to TFLM_ALIGNMENT


@dataclass
class OpScope:
    """The scopes an operator spans (its callees included): where its scratch buffers live.

    An operator of a subgraph walked more than once spans from its first visit to its last.
    """

    subgraph: int
    op: int
    first: int
    last: int


@dataclass(frozen=True)
class Semantics:
    """How a runtime marks scopes. This project's core (firmware/src/core/planner.c) marks
    them as TFLM does, but stops walking at its nesting limit (it refuses deeper models)."""

    max_depth: int | None  # callees deeper than this are not walked (None: recursion is an error)


TFLM = Semantics(None)  # measured on the pip interpreter
MICROARENA = Semantics(8)  # MA_MAX_NESTING


@dataclass
class Walk:
    lifetimes: list[Lifetime]
    op_scopes: list[OpScope]
    scopes: int  # number of scopes used (times run 0 .. scopes-1)
    # What opened each scope: (subgraph, operator), or (subgraph, -1) where a subgraph's walk
    # starts (scope 0: the model's inputs).
    owners: list[tuple[int, int]]


def needs_allocating(t: Tensor) -> bool:
    """True if TFLM places this tensor in the head (not weights, not variables, not empty)."""
    if t.is_const or t.is_variable or t.type == RESOURCE:
        return False
    return t.nbytes() != 0


class _Walker:
    def __init__(self, model: Model, semantics: Semantics) -> None:
        self.model = model
        self.semantics = semantics
        self.scope = 0
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.spans: dict[tuple[int, int], OpScope] = {}
        self.stack: list[int] = []
        self.owners: list[tuple[int, int]] = [(0, -1)]

    def created(self, gi: int) -> None:
        self.first.setdefault(gi, self.scope)  # a tensor keeps its first creation
        self.last[gi] = self.scope

    def used(self, gi: int) -> None:
        self.last[gi] = self.scope

    def visited(self, si: int, op: int, start: int) -> None:
        span = self.spans.get((si, op))
        if span is None:
            self.spans[(si, op)] = OpScope(si, op, start, self.scope)
        else:
            span.last = self.scope

    def _callees(self, op_callees: list[int]) -> list[int]:
        limit = self.semantics.max_depth
        if limit is None:
            return op_callees
        n = len(self.model.subgraphs)
        return [c for c in op_callees if 0 < c < n] if len(self.stack) <= limit else []

    def walk(self, si: int) -> None:
        if self.semantics.max_depth is None and (
            len(self.stack) >= MAX_CALL_DEPTH or si in self.stack
        ):
            chain = " -> ".join(str(s) for s in [*self.stack, si])
            raise ModelError(f"subgraph calls recurse ({chain}); TFLM cannot plan this model")
        self.stack.append(si)
        sg = self.model.subgraphs[si]
        base = sg.tensors[0].global_index if sg.tensors else 0
        for i in sg.inputs:
            self.created(base + i)
        written = set(sg.inputs)  # in this run of the subgraph: by its caller, or an operator
        for op in sg.operators:
            self.scope += 1
            self.owners.append((si, op.index))
            for i in op.outputs:
                if i in written:
                    # The lifetime would restart at the second writer, leaving the first
                    # one's unreserved (the runtime refuses such models too).
                    raise ModelError(
                        f"malformed model: tensor {i} of subgraph {si} is written twice (by "
                        "two operators, or by its caller and an operator)"
                    )
                written.add(i)
                self.created(base + i)
            start = self.scope
            for callee in self._callees(op.called_subgraphs):
                self.scope += 1
                self.owners.append((callee, -1))
                self.walk(callee)
            for i in op.inputs:
                if i >= 0:
                    self.used(base + i)
            for i in op.outputs:
                self.used(base + i)
            self.visited(si, op.index, start)
        for i in sg.outputs:
            self.created(base + i)  # TFLM marks outputs here, created if no operator did
        self.stack.pop()


def unfolded_scopes(model: Model, semantics: Semantics) -> int:
    """Scopes a walk from subgraph 0 opens, counted once per subgraph (linear in the model),
    capped just past MAX_SCOPES; ModelError for recursion TFLM cannot plan."""
    limit = semantics.max_depth
    memo: dict[tuple[int, int], int] = {}  # by subgraph and, where the depth is cut, depth
    stack: list[int] = []
    n = len(model.subgraphs)

    def count(si: int) -> int:
        key = (si, len(stack) if limit is not None else 0)
        if key in memo:
            return memo[key]
        if limit is None and (si in stack or len(stack) >= MAX_CALL_DEPTH):
            chain = " -> ".join(str(s) for s in [*stack, si])
            raise ModelError(f"subgraph calls recurse ({chain}); TFLM cannot plan this model")
        stack.append(si)
        total = 0
        deep = limit is not None and len(stack) > limit  # as _Walker._callees
        for op in model.subgraphs[si].operators:
            total += 1
            for callee in [] if deep else op.called_subgraphs:
                if limit is None or 0 < callee < n:
                    total += 1 + count(callee)
            total = min(total, MAX_SCOPES + 1)
        stack.pop()
        memo[key] = total
        return total

    return count(0)


def _bounded_walker(model: Model, semantics: Semantics) -> _Walker:
    scopes = unfolded_scopes(model, semantics)
    if scopes > MAX_SCOPES:
        raise ModelError(
            f"{model.source}: the subgraph call graph unfolds into more than {MAX_SCOPES} "
            "operator visits (subgraphs called from many places); TFLM and the runtime walk "
            "every call, so this model would take minutes to plan"
        )
    w = _Walker(model, semantics)
    w.walk(0)
    return w


def mark(
    model: Model, semantics: Semantics
) -> tuple[dict[int, int], dict[int, int], dict[tuple[int, int], OpScope], int]:
    """First and last scope of every tensor a walk reaches (by global index), the span of
    every operator (by subgraph, operator), under a runtime's semantics, and the last scope."""
    w = _bounded_walker(model, semantics)
    return w.first, w.last, w.spans, w.scope


def walk(model: Model) -> Walk:
    """Lifetimes of every tensor TFLM plans, and each operator's scope span."""
    w = _bounded_walker(model, TFLM)
    out = []
    for t in model.tensors:
        if not needs_allocating(t):
            continue
        # A tensor no walked operator touches keeps TFLM's "uninitialised" lifetime -1.
        first = w.first.get(t.global_index, -1)
        last = w.last.get(t.global_index, -1)
        out.append(Lifetime(t, first, last, align_up(t.nbytes())))
    return Walk(out, list(w.spans.values()), w.scope + 1, w.owners)


def tensor_buffers(w: Walk) -> list[Buffer]:
    """The planning problem TFLM's lifetimes define: one buffer per planned tensor.

    Times are shifted by one so TFLM's "never used" scope -1 stays non-negative.
    """
    return [
        Buffer(lt.tensor.global_index, lt.first + 1, lt.last + 2, lt.size) for lt in w.lifetimes
    ]


def variable_buffers(model: Model, w: Walk, offsets: list[int]) -> list[Buffer]:
    """Variable tensors the plan places: TFLM and the runtime plan them where it gives an
    offset. Their state outlives every invocation, so they live for the whole walk."""
    return [
        Buffer(t.global_index, 0, w.scopes + 1, align_up(t.nbytes()))
        for t in model.tensors
        if t.is_variable and offsets[t.global_index] >= 0 and t.nbytes() > 0
    ]
