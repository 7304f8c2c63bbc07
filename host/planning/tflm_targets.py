"""The arena to configure for a model on one target: head, tail by category, minimum arena.

Targets:
- tflm-x86_64: the pip `tflite-micro` interpreter (64-bit pointers; checked to the byte by
  tests/planning/test_tflm_tail.py on every runnable shared model and the converter-made models);
- tflm-cortex-m: TFLM on a 32-bit Cortex-M with the reference kernels (4-byte pointers,
  arm-none-eabi-gcc's 1-byte enums, no compression), derived from the same replay;
- microarena-cortex-m / microarena-host: this project's runtime (host/runtime/arena.py), whose
  figures differ between host and board by the pointer size of its per-tensor and per-operator
  records, and from TFLM's by keeping one data pointer per tensor instead of TFLM's structs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from host.device.wire import Category
from host.planning import tflm_structs
from host.planning.tflm_refusal import tflm_refusal
from host.planning.tflm_tail import CATEGORIES, UNCATEGORIZED, predict
from host.tflite.model import Model

TARGETS = ("tflm-cortex-m", "tflm-x86_64", "microarena-cortex-m", "microarena-host")
DEFAULT_TARGET = "tflm-cortex-m"
TFLM_ABIS = {"tflm-x86_64": tflm_structs.X86_64_PIP, "tflm-cortex-m": tflm_structs.CORTEX_M}
MICROARENA_ABIS = {"microarena-cortex-m": "cortex-m", "microarena-host": "host"}
UNITS = dict(CATEGORIES)  # category name -> the word its report line counts in


@dataclass
class TargetArena:
    target: str
    head: int
    tail: int
    min_arena: int  # the arena size to configure
    categories: list[Category] = field(default_factory=list)
    other: dict[str, int] = field(default_factory=dict)  # the rest of the tail, bytes by kind
    kernels: list[dict] = field(default_factory=list)  # per operator: options, Init, Prepare
    exact: dict[str, bool] = field(default_factory=dict)  # per figure: head, tail, min_arena
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "head": self.head,
            "tail": self.tail,
            "min_arena": self.min_arena,
            "categories": [vars(c) for c in self.categories],
            "other": self.other,
            "kernels": self.kernels,
            "exact": self.exact,
            "notes": self.notes,
        }


def target_arena(model: Model, target: str) -> TargetArena:
    """Head, tail and minimum arena of the model (with any embedded plan) on the target."""
    if target in TFLM_ABIS:
        return _tflm(model, target)
    if target in MICROARENA_ABIS:
        return _microarena(model, target)
    raise ValueError(f"unknown target {target!r}; choose from {', '.join(TARGETS)}")


def _tflm(model: Model, target: str) -> TargetArena:
    abi = TFLM_ABIS[target]
    p = predict(model, abi)
    refused = tflm_refusal(model)
    known = not p.unknown and refused is None
    head_exact = known and not (abi.pointer != 8 and _has(model, "ADD_N"))
    notes = [
        "TFLM reference kernels; optimised kernel libraries (CMSIS-NN, ...) allocate "
        "differently, so measure the tail once with RecordingMicroInterpreter there",
        f"minimum arena: one byte less runs out during {p.limited_by}",
        "for a 16-byte aligned arena (alignas(16)); an unaligned one needs up to 15 bytes more",
    ]
    if refused:
        notes.append(f"TFLM refuses this model ({refused.names()}): the figures are not exact")
    if p.unknown:
        missing = ", ".join(p.unknown)
        notes.append(f"kernels not modelled (their allocations are missing): {missing}")
    if not head_exact and known:
        notes.append("ADD_N's scratch holds pointers: its size is the x86-64 one here")
    if target == "tflm-x86_64":
        notes.append("the pip tflite-micro interpreter (its arena is malloc'ed: 16-byte aligned)")
        other = predict(model, tflm_structs.CORTEX_M)
        where = "on a 32-bit Cortex-M (4-byte pointers, 1-byte enums, no compression)"
    else:
        other = predict(model, tflm_structs.X86_64_PIP)
        where = "in the pip interpreter on x86-64 (8-byte pointers, compression build)"
    notes.append(
        f"{where} the same model needs tail {other.tail}, arena {other.min_arena}: TFLM's "
        "persistent structs hold pointers"
    )
    return TargetArena(
        target=target,
        head=p.head,
        tail=p.tail,
        min_arena=p.min_arena,
        categories=[
            Category(name, r.used, r.requested, r.count, unit)
            for name, unit in CATEGORIES
            if (r := p.categories.get(name)) and (r.used or r.requested)
        ],
        other={k: p.categories[k].used for k in UNCATEGORIZED if k in p.categories},
        kernels=p.kernels,
        exact={"head": head_exact, "tail": known, "min_arena": head_exact and p.exact},
        notes=notes,
    )


def _microarena(model: Model, target: str) -> TargetArena:
    from host.runtime import arena

    abi = MICROARENA_ABIS[target]
    p = arena.predict(model.to_bytes(), abi)
    categories = p["categories"]
    assert isinstance(categories, dict)
    other = "host" if abi == "cortex-m" else "cortex-m"
    q = arena.predict(model.to_bytes(), other)
    return TargetArena(
        target=target,
        head=int(p["head"]),  # type: ignore[call-overload]
        tail=int(p["tail"]),  # type: ignore[call-overload]
        min_arena=int(p["required"]),  # type: ignore[call-overload]
        categories=[Category(n, *v, UNITS[n]) for n, v in categories.items()],
        exact={"head": True, "tail": True, "min_arena": True},
        notes=[
            f"this project's runtime, {abi} ABI ({arena.ABIS[abi].ptr}-byte pointers); on "
            f"{other} ({arena.ABIS[other].ptr}-byte pointers) the same model needs tail "
            f"{q['tail']}, arena {q['required']}: its per-tensor and per-operator records hold "
            "pointers"
        ],
    )


def _has(model: Model, op_name: str) -> bool:
    return any(op.name == op_name for sg in model.subgraphs for op in sg.operators)
