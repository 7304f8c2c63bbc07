"""Human-readable and JSON reports of a model plan."""

from __future__ import annotations

from typing import Any

from host.planning.plan import PlanResult


def _scope(first: int, last: int) -> str:
    return f"{first}..{last}"


def plan_text(r: PlanResult) -> str:
    rows = [f"{'tensor':>6}  {'sg':>2}  {'name':<40} {'bytes':>9} {'live':>9} {'offset':>9}"]
    for t in sorted(r.tensors, key=lambda t: (t.offset, t.global_index)):
        name = t.name if len(t.name) <= 40 else "..." + t.name[-37:]
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
    lines = ["\n".join(rows), ""]
    ratio = r.head / r.lower_bound if r.lower_bound else 1.0
    pct = 100.0 * r.saving / r.tflm_head if r.tflm_head else 0.0
    lines += [
        f"model            {r.model}",
        f"planner          {r.planner} ({r.seconds:.2f} s), scratch of {r.runtime} kernels",
        f"arena head       {r.head} bytes (exact: what TFLM reports with this plan)",
        f"lower bound      {r.lower_bound} bytes (max live bytes; head is {ratio:.3f}x)",
        f"TFLM greedy      {r.tflm_head} bytes without a plan; saving {r.saving} bytes "
        f"({pct:.1f}%)",
    ]
    lines.append(
        f"TFLM arena       about {r.head + r.tflm_tail_estimate} bytes = head {r.head} + tail "
        f"{r.tflm_tail_estimate} (the tail is an ESTIMATE; measure it once on the target)"
    )
    if r.overlap_bound is not None:
        lines += _overlap_lines(r)
    if not r.offline:
        lines.append("no plan beats TFLM's own: the model is left to TFLM's online planner")
    if r.arena:
        a = r.arena
        lines.append(
            f"microarena arena {a.get('required')} bytes to configure on Cortex-M (exact: head "
            f"{a.get('head')}, tail {a.get('tail')}, set-up peak {a.get('temporary')})"
        )
    lines += [f"warning: {w}" for w in r.warnings]
    return "\n".join(lines)


def _overlap_lines(r: PlanResult) -> list[str]:
    bound = r.overlap_bound or 0
    below = r.lower_bound - r.head
    lines = [
        f"overlap bound    {bound} bytes (max live bytes less what the allowed overlaps save); "
        f"head is {below} bytes below the no-overlap bound",
        f"overlaps         {len(r.shared)} operators write their output over their input; "
        f"proven for the {r.kernel_set} only (optimised libraries such as CMSIS-NN loop "
        "differently: do not run this plan with them)",
    ]
    for s in r.shared:
        lines.append(
            f"  op {s.op:>3} {s.op_name:<18} input {s.input} over output {s.output}: "
            f"{s.bytes} bytes shared (offset difference {s.delta}, rule >= {s.min_delta})"
        )
    return lines


def plan_json(r: PlanResult, embedded_in: str | None) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if r.overlap_bound is not None:
        extra = {
            "overlap_bound": r.overlap_bound,
            "kernel_set": r.kernel_set,
            "overlaps": [vars(s) for s in r.shared],
        }
    return {
        "model": r.model,
        "planner": r.planner,
        "runtime": r.runtime,
        "head": r.head,
        "tflm_greedy_head": r.tflm_head,
        "lower_bound": r.lower_bound,
        "saving": r.saving,
        "tflm_tail_estimate": r.tflm_tail_estimate,
        "offline_plan": r.offline,
        "embedded_in": embedded_in,
        "seconds": round(r.seconds, 4),
        "tensors": [vars(t) for t in r.tensors],
        "scratch": [vars(s) for s in r.scratch],
        "microarena_arena": r.arena or None,
        "warnings": r.warnings,
        **extra,
    }
