"""The kernel libraries the planner knows, by name, and the CPUs: the one place they are listed,
and where the command lines turn a name into a library (below them, a KernelLibrary travels)."""

from __future__ import annotations

from host.planning.libraries.base import KernelLibrary, KernelsError
from host.planning.libraries.cmsis_nn import DEFAULT_CPU, PATHS, CmsisNN
from host.planning.libraries.microarena import MICROARENA
from host.planning.libraries.reference import REFERENCE

KERNELS = ("reference", "cmsis-nn", "microarena")  # --kernels
CPUS = tuple(PATHS)  # --cpu
# --runtime's names (whose interpreter runs the model) for the kernels each runs by default.
RUNTIMES = {"tflm": REFERENCE, "microarena": MICROARENA}


def library(kernels: str, cpu: str | None = None) -> KernelLibrary:
    """A library by its --kernels name (or a --runtime name) for the CPU. Only CMSIS-NN's
    figures depend on the CPU."""
    if kernels == "cmsis-nn":
        return CmsisNN(cpu or DEFAULT_CPU)
    found = {"reference": REFERENCE, "microarena": MICROARENA}.get(kernels) or RUNTIMES.get(kernels)
    if found is None:
        raise KernelsError(
            f"unknown kernels {kernels!r}; choose from {', '.join(KERNELS)} "
            f"(or a runtime: {', '.join(RUNTIMES)})"
        )
    return found
