"""Whose offline plan a model already carries, recognised by what the model holds (never by
its file name): Arm's Vela (an `ethos-u` custom operator, whose scratch tensors and
input/output Vela placed itself), this planner (the `microarena_plan` metadata entry --embed
writes beside the plan), or another tool. host.plan replaces only its own plan unless told."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from host.planning.libraries.base import KernelsError
from host.planning.libraries.registry import library
from host.planning.model.lifetimes import needs_allocating
from host.planning.model.metadata import MARKER, decode
from host.tflite.model import CUSTOM, OFFLINE_PLAN_NAME, Model, ModelError

VELA_OPERATOR = "ethos-u"
VELA_VERSION = b"vela_version"  # metadata entry Vela writes


@dataclass
class PlanOrigin:
    owner: str  # "vela", "host.plan", "empty" (places no tensor) or "unknown"
    text: str  # whose, in words
    placed: int  # tensors the plan places (offset >= 0)
    runtime: str = ""  # host.plan's: whose kernels it planned for
    overlap: bool = False  # host.plan's: an --overlap plan
    kernels: str = ""  # host.plan's: the kernel library (--kernels) it planned for, if recorded
    cpu: str | None = None  # and the CPU

    def kernels_text(self) -> str:
        """The kernels it was planned for, in words ("TFLM reference kernels")."""
        if not self.kernels:
            return f"{self.runtime} kernels"
        try:
            return library(self.kernels, self.cpu).label
        except KernelsError:  # a marker naming kernels this version does not know
            return f"{self.kernels} kernels" + (f" ({self.cpu})" if self.cpu else "")

    @property
    def replaceable(self) -> bool:
        """True if host.plan may write over it unasked: its own plan, or one placing nothing."""
        return self.owner in ("host.plan", "empty")

    def to_json(self) -> dict[str, Any]:
        return {"owner": self.owner, "description": self.text, "tensors_placed": self.placed}


def origin(model: Model) -> PlanOrigin | None:
    """Whose OfflineMemoryAllocation the model carries (None if it carries none)."""
    entries = model.metadata_entries(OFFLINE_PLAN_NAME)
    if not entries:
        return None
    try:
        offsets = decode(entries[-1]).offsets
    except ModelError:
        return PlanOrigin("unknown", "a malformed offline plan", 0)
    planned = {t.global_index for t in model.tensors if needs_allocating(t)}
    placed = sum(1 for gi, off in enumerate(offsets) if off >= 0 and gi in planned)
    info = _ours(model.metadata(MARKER), entries[-1])
    if info is not None:
        overlap = bool(info.get("overlap"))
        kernels, cpu = str(info.get("kernels") or ""), info.get("cpu")
        o = PlanOrigin("host.plan", "", placed, str(info["runtime"]), overlap, kernels, cpu)
        o.text = f"an offline plan host.plan wrote for the {o.kernels_text()}" + (
            ", with overlaps" if overlap else ""
        )
        return o
    vela = _vela_operators(model)
    if vela:
        return PlanOrigin("vela", _vela_text(model, vela), placed)
    if placed == 0:
        return PlanOrigin("empty", "an offline plan that places no tensor (all -1)", 0)
    return PlanOrigin(
        "unknown",
        f"an offline plan placing {placed} tensors, from another tool (no Ethos-U operator, "
        "no host.plan marker)",
        placed,
    )


def _vela_operators(model: Model) -> list[tuple[int, int]]:
    return [
        (sg.index, op.index)
        for sg in model.subgraphs
        for op in sg.operators
        if op.opcode == CUSTOM and op.name == VELA_OPERATOR
    ]


def _vela_text(model: Model, ops: list[tuple[int, int]]) -> str:
    version = model.metadata(VELA_VERSION)
    who = f"Vela {version.decode('utf-8', 'replace')}" if version else "Vela"
    scratch = []
    for s, o in ops:
        sg = model.subgraphs[s]
        written = {i for op in sg.operators for i in op.outputs} | set(sg.inputs)
        scratch += [
            repr(sg.tensors[i].name)
            for i in sg.operators[o].inputs
            if i >= 0 and not sg.tensors[i].is_const and i not in written
        ]
    uses = f"{len(ops)} custom operator{'s' if len(ops) > 1 else ''} '{VELA_OPERATOR}'"
    held = f"; its scratch tensors {', '.join(scratch)}" if scratch else ""
    return (
        f"Arm {who}'s offline plan for an Ethos-U NPU ({uses}{held}): Vela lays out the "
        "Ethos-U tensors itself"
    )


def _ours(mark: bytes | None, plan: bytes) -> dict[str, Any] | None:
    """host.plan's marker, if it is there and is this plan's (its CRC matches)."""
    try:
        info = json.loads(mark or b"null")
    except ValueError:
        return None
    if not isinstance(info, dict) or info.get("crc32") != zlib.crc32(plan):
        return None
    return info if isinstance(info.get("runtime"), str) else None


def replan_hint(model: Model, path: str, runtime: str = "microarena") -> str | None:
    """For a plan `runtime` refuses: whose kernels it was made for and how to plan for this
    one instead (None if the plan is already host.plan's for it, or there is none)."""
    o = origin(model)
    if o is None or (o.owner == "host.plan" and o.runtime == runtime):
        return None
    if o.owner == "host.plan":
        how = f"python -m host.plan {path} --embed --kernels {runtime}"
        return (
            f"the plan was made by host.plan{' --overlap' if o.overlap else ''} for the "
            f"{o.kernels_text()}, whose loops differ from this runtime's: re-plan it with "
            f"`{how}{' --overlap' if o.overlap else ''}`"
        )
    return (
        f"the model carries {o.text}; `python -m host.plan {path} --embed --replace-plan "
        f"--kernels {runtime}` writes one for this runtime"
    )
