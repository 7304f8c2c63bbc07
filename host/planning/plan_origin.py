"""Whose offline plan a model already carries, recognised by what the model holds (never by
its file name): Arm's Vela (an `ethos-u` custom operator, whose scratch tensors and
input/output Vela placed itself), this planner (the `microarena_plan` metadata entry --embed
writes beside the plan), or another tool. host.plan replaces only its own plan unless told."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from host.planning.lifetimes import needs_allocating
from host.tflite.model import CUSTOM, OFFLINE_PLAN_NAME, Model, ModelError

MARKER = b"microarena_plan"  # metadata entry: what host.plan planned for (JSON)
VELA_OPERATOR = "ethos-u"
VELA_VERSION = b"vela_version"  # metadata entry Vela writes


def marker(plan: bytes, runtime: str, overlap: bool) -> bytes:
    """The metadata host.plan --embed writes beside its plan: what it planned for, and the
    plan's CRC, so that a plan another tool writes over it later is not taken for ours."""
    info = {"by": "host.plan", "runtime": runtime, "overlap": overlap, "crc32": zlib.crc32(plan)}
    return json.dumps(info).encode()


@dataclass
class PlanOrigin:
    owner: str  # "vela", "host.plan", "empty" (places no tensor) or "unknown"
    text: str  # whose, in words
    placed: int  # tensors the plan places (offset >= 0)

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
    from host.planning.offline_plan import decode  # imports this module's neighbours

    try:
        offsets = decode(entries[-1]).offsets
    except ModelError:
        return PlanOrigin("unknown", "a malformed offline plan", 0)
    planned = {t.global_index for t in model.tensors if needs_allocating(t)}
    placed = sum(1 for gi, off in enumerate(offsets) if off >= 0 and gi in planned)
    ours = _ours(model.metadata(MARKER), entries[-1])
    if ours is not None:
        return PlanOrigin("host.plan", ours, placed)
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


def _ours(mark: bytes | None, plan: bytes) -> str | None:
    """host.plan's description of the plan, if the marker is there and is this plan's."""
    try:
        info = json.loads(mark or b"null")
        if not isinstance(info, dict) or info.get("crc32") != zlib.crc32(plan):
            return None
        overlap = ", with overlaps" if info.get("overlap") else ""
        return f"an offline plan host.plan wrote for the {info['runtime']} kernels{overlap}"
    except (ValueError, KeyError):
        return None
