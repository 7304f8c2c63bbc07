"""What a build does with a model's offline plan: one rule for every build path (the
PlatformIO builder's custom_plan, and any library build script that plans at build time).

A plan already embedded in the model is kept (it may be an --overlap or --bands plan, or one
made for other kernels, that a plain re-plan would silently replace with a larger one), unless
the build asks for `replace`. A model without a plan gets one only when the build asks for it.
"""

from __future__ import annotations

from pathlib import Path

from host.planning.origin import origin
from host.tflite.model import Model

# custom_plan values: none (build the model as it is), best/greedy (plan a model that carries
# no plan with that planner), replace (plan with `best` even over an embedded plan).
CHOICES = ("none", "best", "greedy", "replace")


def build_plan_step(model: str | Path, choice: str) -> tuple[str | None, str]:
    """(the --planner to run host.plan --embed with, or None to build the model as it is;
    one line saying which plan the build uses and for whose kernels)."""
    if choice not in CHOICES:
        raise ValueError(f"custom_plan must be one of {', '.join(CHOICES)}, not '{choice}'")
    name = Path(model).name
    o = origin(Model.load(str(model)))
    if choice == "replace":
        was = f", replacing {o.text}" if o else ""
        return "best", f"{name}: planning for this runtime's kernels{was}"
    if o is not None:
        return None, f"{name}: keeping {o.text} (custom_plan = replace re-plans it)"
    if choice == "none":
        return None, f"{name}: no offline plan (the runtime plans at start-up)"
    return choice, f"{name}: planning for this runtime's kernels ({choice})"
