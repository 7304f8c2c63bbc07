"""What a kernel library is to the planner: the questions it answers, per operator.

A kernel library is one implementation of the operators (TFLM's reference kernels, CMSIS-NN,
this project's kernels). What it does to the arena is, per operator and CPU:
- its persistent allocations (TFLM: the kernel's OpData from Init, its Prepare buffers);
- its scratch requests (RequestScratchBufferInArena in Prepare), from the operator's shapes;
- its overlap rules: where its loops let the output be written over an input.
Each library module (reference.py, microarena.py, ...) answers these; the rest of the planner
only asks the chosen library.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from host.planning.libraries import loops
from host.planning.tflm.structs import Abi
from host.tflite.model import Model, Operator, Subgraph


class KernelsError(ValueError):
    """Unknown kernel library or CPU; the message says which exist."""


@dataclass
class OpAllocations:
    """One operator's arena allocations during TFLM's set-up (sizes as requested)."""

    params: tuple[int, int] | None  # builtin options struct (sizeof, alignof)
    init: list[int] = field(default_factory=list)  # persistent, 16-aligned
    prepare: list[int] = field(default_factory=list)  # persistent, 16-aligned
    temps: list[int] = field(default_factory=list)  # tensors borrowed in Prepare (indices)


class KernelLibrary:
    """The interface; each library module defines one subclass and its instances."""

    name = ""  # the --kernels name
    title = ""  # for reports: "TFLM reference kernels"
    runtime = "tflm"  # whose interpreter runs these kernels: "tflm" or "microarena"
    overlap_style = loops.REFERENCE_STYLE

    def __init__(self, cpu: str | None = None) -> None:
        self.cpu = cpu

    def scratch(self, model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
        """Bytes of each scratch request the operator's Prepare makes, in request order; None
        when the operator's scratch is not modelled for its types."""
        raise NotImplementedError

    def allocations(
        self, model: Model, sg: Subgraph, op: Operator, abi: Abi
    ) -> OpAllocations | None:
        """The operator's persistent allocations under TFLM; None if not modelled."""
        return None

    def unknown_ops(self, model: Model, abi: Abi) -> list[str]:
        """Operator names whose persistent allocations are not modelled."""
        return sorted(
            {
                op.name
                for sg in model.subgraphs
                for op in sg.operators
                if self.allocations(model, sg, op, abi) is None
            }
        )

    def borrowed(self, op: Operator) -> list[int]:
        """Tensor indices the kernel's Prepare borrows as TfLiteTensors (an upper bound unless
        `borrows_exactly`): they decide the minimum arena when Prepare is the tightest step."""
        raise NotImplementedError

    def borrows_exactly(self, name: str) -> bool:
        """Whether `borrowed` is exact for this operator (not only an upper bound)."""
        raise NotImplementedError

    def overlap_kernel(self, model: Model, sg: Subgraph, op: Operator) -> loops.Kernel | None:
        """The operator's loops, when an overlap rule is proven for them (else None)."""
        return loops.describe(model, sg, op, self.overlap_style)

    @property
    def label(self) -> str:
        """The library and CPU, for reports."""
        return f"{self.title} ({self.cpu})" if self.cpu else self.title
