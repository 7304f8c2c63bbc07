"""Whether TFLM will load a model: every operator needs a registered kernel, and some models
are refused in Prepare (refused_ops). host.plan says so rather than call a head
"exact" that TFLM never reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from host.planning.model.operands import (
    FLOAT32,
    INT4,
    INT8,
    input_tensor,
)
from host.planning.tflm.prepare import prepare_refusals
from host.planning.tflm.registered import OPERATORS, VERSION
from host.terminal import printable
from host.tflite.model import CUSTOM, Model, ModelError

PIP_TFLM = f"the pip tflite-micro {VERSION}"
# Custom operators that say what made the model (the operator's kernel is not TFLM's own).
KNOWN_CUSTOM = {
    "ethos-u": "an Arm Ethos-U NPU operator written by Vela: it runs only on a TFLM build with "
    "the Ethos-U kernel and driver, on a device with that NPU",
}


@dataclass
class Unregistered:
    """An operator (builtin or custom) the kernels register nothing for."""

    name: str
    custom: bool
    at: list[tuple[int, int]]  # (subgraph, operator) of each use

    def label(self) -> str:
        name = printable(self.name)  # a model's names are untrusted
        return f"custom operator '{name}'" if self.custom else name

    def text(self) -> str:
        by_subgraph: dict[int, list[int]] = {}
        for s, o in self.at:
            by_subgraph.setdefault(s, []).append(o)
        where = "; ".join(
            f"subgraph {s} operator{'s' if len(ops) > 1 else ''} {', '.join(map(str, ops))}"
            for s, ops in by_subgraph.items()
        )
        why = f"; {KNOWN_CUSTOM[self.name]}" if self.custom and self.name in KNOWN_CUSTOM else ""
        return f"{self.label()} ({where}{why})"


@dataclass
class TflmRefusal:
    """Why TFLM refuses a model: operators without a kernel, or ones its Prepare refuses."""

    kernels: str  # whose registrations were consulted
    unregistered: list[Unregistered] = field(default_factory=list)
    in_prepare: list[str] = field(default_factory=list)

    def text(self) -> str:
        parts = []
        if self.unregistered:
            names = "; ".join(u.text() for u in self.unregistered)
            parts.append(f"{self.kernels} registers no kernel for {names}")
        if self.in_prepare:
            parts.append(f"its Prepare refuses {', '.join(self.in_prepare)}")
        return "; ".join(parts)

    def names(self) -> str:
        """The refused operators in a few words."""
        return ", ".join([u.label() for u in self.unregistered] + self.in_prepare)

    def to_json(self) -> dict[str, Any]:
        return {
            "kernels": self.kernels,
            "unregistered": [
                {"name": u.name, "custom": u.custom, "operators": [list(a) for a in u.at]}
                for u in self.unregistered
            ],
            "refused_in_prepare": self.in_prepare,
            "message": self.text(),
        }


def registrations(library: str) -> tuple[frozenset[str], str]:
    """The operators a TFLM build with this kernel library (its --kernels name) registers, and
    whose list that is. CMSIS-NN replaces some of a TFLM build's kernels, not its operator set,
    so every library has the pip TFLM's list."""
    if library == "cmsis-nn":
        return OPERATORS, (
            f"a TFLM build with the CMSIS-NN kernels (whose operators are {PIP_TFLM}'s)"
        )
    return OPERATORS, PIP_TFLM


def tflm_refusal(
    model: Model, registered: frozenset[str] = OPERATORS, kernels: str = PIP_TFLM
) -> TflmRefusal | None:
    """Why TFLM with these registered kernels refuses the model, or None if it loads it (as far
    as registrations and the Prepare refusals modelled here tell)."""
    missing: dict[str, Unregistered] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name not in registered:
                u = missing.setdefault(op.name, Unregistered(op.name, op.opcode == CUSTOM, []))
                u.at.append((sg.index, op.index))
    prepare = refused_ops(model)
    if not missing and not prepare:
        return None
    return TflmRefusal(kernels, list(missing.values()), prepare)


HYBRID_CHECKED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")


def refused_ops(model: Model) -> list[str]:
    """Operators TFLM refuses in Prepare: float activations with int8 weights ("Hybrid models
    are not supported on TFLite Micro"), any operator with an output that has a dimension
    <= 0 ("Dynamic tensors are not supported"; shape [0], its legacy scalar, passes), any
    with an intermediate tensor that holds data (refused before Prepare, "Does not support
    intermediate tensor with non-zero size"; the runtime refuses it too), and any that breaks
    a condition of host.planning.tflm.prepare's table."""
    out = []
    for sg in model.subgraphs:
        for op in sg.operators:
            where = f"subgraph {sg.index} op {op.index} {op.name}"
            empty = [t for t in op.outputs if t >= 0 and _dynamic(sg.tensors[t].shape)]
            if empty:
                out.append(f"{where} (output tensor {empty[0]} has a dimension <= 0)")
            held = [t for t in op.intermediates if t >= 0 and _holds_data(sg.tensors[t])]
            if held:
                out.append(f"{where} (intermediate tensor {held[0]} holds data)")
            if op.name not in HYBRID_CHECKED:
                continue
            data = input_tensor(sg, op, 2 if op.name == "TRANSPOSE_CONV" else 0)
            weights = input_tensor(sg, op, 1)
            if data and weights and data.type == FLOAT32 and weights.type in (INT8, INT4):
                out.append(f"{where} (hybrid)")
    return out + prepare_refusals(model)


def _holds_data(t) -> bool:
    try:
        return t.nbytes() != 0
    except ModelError:  # no fixed size (a string) or a dynamic shape: not zero either
        return True


def _dynamic(shape: tuple[int, ...]) -> bool:
    return tuple(shape) != (0,) and any(d <= 0 for d in shape)
