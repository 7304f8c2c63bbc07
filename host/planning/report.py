"""Human-readable and JSON reports of a model plan."""

from __future__ import annotations

from typing import Any

from host.planning.model.lifetimes import SPAN_LEGEND, span_text
from host.planning.plan import PlanResult
from host.planning.targets.result import TargetArena
from host.terminal import printable


def _scope(first: int, last: int) -> str:
    return span_text(first, last)


def plan_text(r: PlanResult, target: TargetArena | None = None) -> str:
    rows = [f"{'tensor':>6}  {'sg':>2}  {'name':<40} {'bytes':>9} {'live':>9} {'offset':>9}"]
    for t in sorted(r.tensors, key=lambda t: (t.offset, t.global_index)):
        name = printable(t.name)  # a model's names are untrusted
        name = name if len(name) <= 40 else "..." + name[-37:]
        rows.append(
            f"{t.global_index:>6}  {t.subgraph:>2}  {name:<40} {t.size:>9} "
            f"{_scope(t.first, t.last):>9} {t.offset:>9}"
        )
    for s in r.scratch:
        label = f"scratch of op {s.op} {s.op_name}"
        rows.append(
            f"{'-':>6}  {s.subgraph:>2}  {label:<40} {s.size:>9} "
            f"{_scope(s.first, s.last):>9} {s.offset:>9}"
        )
    lines = ["\n".join(rows), SPAN_LEGEND, ""]
    ratio = r.head / r.lower_bound if r.lower_bound else 1.0
    pct = 100.0 * r.saving / r.tflm_head if r.tflm_head else 0.0
    lines += [
        f"model            {r.model}",
        f"planner          {r.planner} ({r.seconds:.2f} s), scratch of the {r.lib.label}",
        f"arena head       {r.head} bytes ({_head_status(r)})",
        f"lower bound      {r.lower_bound} bytes (max live bytes; head is {ratio:.3f}x)",
        f"TFLM greedy      {r.tflm_head} bytes without a plan; saving {r.saving} bytes "
        f"({pct:.1f}%)",
    ]
    if r.overlap_bound is not None:
        lines += _overlap_lines(r)
    if not r.offline:
        lines.append("no plan beats TFLM's own: the model is left to TFLM's online planner")
    if target:
        lines += target_lines(target)
    if r.tflm_refusal:
        lines.append(f"TFLM refuses this model: {r.tflm_refusal.text()}")
    lines += [f"warning: {w}" for w in r.warnings]
    return "\n".join(lines)


def _head_status(r: PlanResult) -> str:
    """Whether the head is one the runtime will report: not if it refuses the model."""
    if r.head_reported:
        return f"exact: what {_runtime_name(r.lib.runtime)} reports with this plan"
    if r.lib.runtime == "tflm":
        return "as planned; TFLM reports none: it refuses this model, see below"
    if (r.microarena_refusal or "").startswith("not checked"):
        return "as planned; not exact: whether the microarena runtime opens it was not checked"
    return "as planned; the microarena runtime reports none: it cannot run this model, see below"


def _runtime_name(runtime: str) -> str:
    """Whose report the head is: the runtime the scratch was planned for."""
    return "TFLM" if runtime == "tflm" else "the microarena runtime"


def _exact(flag: bool) -> str:
    return "exact" if flag else "NOT exact"


def target_lines(t: TargetArena) -> list[str]:
    """The arena to configure on the target, its head and its tail by category."""
    lines = [
        f"target           {t.target}",
        f"arena to set     {t.min_arena} bytes ({_exact(t.exact['min_arena'])}): the smallest "
        "arena that works on this target",
        f"  head           {t.head:>9} bytes ({_exact(t.exact['head'])})",
        f"  tail           {t.tail:>9} bytes ({_exact(t.exact['tail'])}), of which:",
    ]
    for c in t.categories:
        lines.append(
            f"    {c.name:<42} {c.used:>7} bytes ({c.requested} requested, {c.count} {c.unit})"
        )
    other = t.tail - sum(c.used for c in t.categories)
    lines.append(f"    {'other (in no category)':<42} {other:>7} bytes")
    lines += [f"      {kind:<40} {n:>7} bytes" for kind, n in t.other.items()]
    if t.min_arena_tail is not None and t.min_arena_tail != t.tail:
        lines.append(
            f"  note: the tail is for an arena whose size is a multiple of 16; in an arena of "
            f"exactly {t.min_arena} bytes TFLM reports {t.min_arena_tail} (the arena's end "
            "moves the tail's alignment padding)"
        )
    lines += [f"  note: {n}" for n in t.notes]
    return lines


def _overlap_lines(r: PlanResult) -> list[str]:
    bound = r.overlap_bound or 0
    below = r.lower_bound - r.head
    lines = [
        f"overlap bound    {bound} bytes (max live bytes less what the allowed overlaps save); "
        f"head is {below} bytes below the no-overlap bound",
        f"overlaps         {len(r.shared)} operators write their output over their input; "
        f"proven for the {r.lib.label} only (other kernels loop differently: do not run "
        "this plan with them; the planned model records these kernels)",
    ]
    for s in r.shared:
        lines.append(
            f"  op {s.op:>3} {s.op_name:<18} input {s.input} over output {s.output}: "
            f"{s.bytes} bytes shared (offset difference {s.delta}, rule >= {s.min_delta})"
        )
    return lines


def plan_json(
    r: PlanResult, embedded_in: str | None, target: TargetArena | None = None
) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if r.overlap_bound is not None:
        extra = {
            "overlap_bound": r.overlap_bound,
            "kernel_set": r.lib.label,  # the kernels the overlaps are proven for
            "overlaps": [vars(s) for s in r.shared],
        }
    return {
        "model": r.model,
        "planner": r.planner,
        "runtime": r.lib.runtime,
        "kernels": r.lib.name,
        "cpu": r.lib.cpu,
        "head": target.head if target else r.head,
        "tail": target.tail if target else None,
        "min_arena": target.min_arena if target else None,
        "target": target.to_json() if target else None,
        "planned_head": r.head,
        "planned_head_exact": r.head_reported,
        "tflm_greedy_head": r.tflm_head,
        "lower_bound": r.lower_bound,
        "saving": r.saving,
        "offline_plan": r.offline,
        "embedded_in": embedded_in,
        "seconds": round(r.seconds, 4),
        "tensors": [vars(t) for t in r.tensors],
        "scratch": [vars(s) for s in r.scratch],
        "warnings": r.warnings,
        "tflm_runtime": {"runs": True}
        if r.tflm_refusal is None
        else {"runs": False, **r.tflm_refusal.to_json()},
        **extra,
    }
