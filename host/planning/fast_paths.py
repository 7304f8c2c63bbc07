"""Smallest arena or fastest: this project's int8 fast paths against the overlap rules.

The microarena runtime's int8 CONV_2D and FULLY_CONNECTED fast paths (fast_s8.c) compute two
output pixels (rows) at once, out of the order the minimal overlap rules assume; they run only
where the input sits far enough above the output (overlap.c's pair rules, mirrored by
host.planning.libraries.loops.pairs_need), and elsewhere take the in-order loops: same results, more
instructions. `--overlap --kernels microarena` plans both ways and reports both heads; with
`--fastest` (or when it costs no byte) the plan keeps every fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from host.planning.libraries import loops
from host.planning.libraries.base import KernelLibrary
from host.planning.libraries.microarena import MICROARENA, fastest_library
from host.planning.model.macs import all_macs, op_macs
from host.planning.plan import PlanResult
from host.tflite.model import Model


@dataclass(frozen=True)
class SlowOperator:
    """An operator whose input a plan puts too close above its output for its pairs."""

    subgraph: int
    op: int
    op_name: str
    delta: int  # input offset - output offset in the plan
    need: int  # what its pairs need
    macs: int  # its multiply-accumulates: what its slower loops are slower on

    def text(self) -> str:
        where = (
            f"op {self.op}" if self.subgraph == 0 else f"op {self.op} of subgraph {self.subgraph}"
        )
        return (
            f"{where} {self.op_name}: input {self.delta} bytes above its output, "
            f"its pairs need {self.need} ({self.macs} MACs)"
        )


@dataclass(frozen=True)
class FastPaths:
    """The heads of the smallest plan and of the plan keeping every fast path."""

    smallest_head: int
    fastest_head: int
    slow: tuple[SlowOperator, ...]  # operators the smallest plan slows down
    chosen_fastest: bool  # the plan kept keeps every fast path
    model_macs: int  # every subgraph's, for the slowed operators' share

    @property
    def slow_share(self) -> float:
        """The slowed operators' share of the model's multiply-accumulates: a proxy for the
        instructions the smallest plan costs (their in-order loops take more per MAC)."""
        return sum(s.macs for s in self.slow) / self.model_macs if self.model_macs else 0.0

    @property
    def same(self) -> bool:
        return not self.slow or self.fastest_head <= self.smallest_head

    def lines(self) -> list[str]:
        label = "fast paths       "
        if self.same:
            head = min(self.smallest_head, self.fastest_head)
            return [
                f"{label}every int8 fast path kept at the smallest head ({head} bytes either way)"
            ]
        pad = " " * len(label)
        chosen = "the smallest" if not self.chosen_fastest else "every fast path kept"
        return [
            f"{label}smallest plan: head {self.smallest_head} bytes, where {len(self.slow)} "
            f"operator(s) holding {100 * self.slow_share:.1f}% of the model's multiply-"
            "accumulates take their in-order int8 loops (slower, same results):",
            *(f"{pad}  {s.text()}" for s in self.slow),
            f"{pad}every fast path kept (--fastest): head {self.fastest_head} bytes "
            f"({self.fastest_head - self.smallest_head:+d})",
            f"{pad}this plan: {chosen}",
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "smallest_head": self.smallest_head,
            "fastest_head": self.fastest_head,
            "same": self.same,
            "chosen": "fastest" if self.chosen_fastest else "smallest",
            "model_macs": self.model_macs,
            "slow_share": self.slow_share,
            "slow_in_smallest": [
                {
                    "subgraph": s.subgraph,
                    "op": s.op,
                    "op_name": s.op_name,
                    "delta": s.delta,
                    "need": s.need,
                    "macs": s.macs,
                }  # fmt: skip
                for s in self.slow
            ],
        }


def slow_operators(model: Model, r: PlanResult, cpu: str | None = None) -> list[SlowOperator]:
    """The operators of plan `r` whose fast path's pairs its overlaps forbid on the CPU."""
    out = []
    for s in r.shared:
        sg = model.subgraphs[s.subgraph]
        k = fastest_library(cpu).overlap_kernel(model, sg, sg.operators[s.op])
        need = loops.pairs_need(k) if k is not None and k.function else None
        if need is not None and s.delta < need:
            macs = op_macs(model, sg, sg.operators[s.op])
            out.append(SlowOperator(s.subgraph, s.op, s.op_name, s.delta, need, macs))
    return out


def choose(
    model: Model,
    planned: PlanResult,
    plan_with: Callable[[KernelLibrary], PlanResult],
    fastest: bool,
    cpu: str | None = None,
) -> tuple[PlanResult, FastPaths]:
    """`planned` (made with the minimal rules, or with --fastest's for `cpu`) and the plan with
    the other rules: the one to keep (the smaller; at an equal head, or with `fastest`, the one
    keeping every fast path) and both figures."""
    other = plan_with(MICROARENA if fastest else fastest_library(cpu))
    small, fast = (other, planned) if fastest else (planned, other)
    keep_fast = fastest or fast.head <= small.head
    slow = tuple(slow_operators(model, small, cpu))
    paths = FastPaths(small.head, fast.head, slow, keep_fast, all_macs(model))
    return (fast if keep_fast else small), paths
