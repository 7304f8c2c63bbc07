"""The kernel libraries the planner knows, by name: the one place their names are listed."""

from __future__ import annotations

from host.planning.kernels.library import KernelLibrary, KernelsError
from host.planning.kernels.microarena import MICROARENA
from host.planning.kernels.reference import REFERENCE

LIBRARIES: dict[str, KernelLibrary] = {lib.name: lib for lib in (REFERENCE, MICROARENA)}
# --runtime's names (whose interpreter runs the model) for the kernels each runs by default.
RUNTIMES = {"tflm": REFERENCE, "microarena": MICROARENA}


def library(kernels: KernelLibrary | str) -> KernelLibrary:
    """A library by its name (or a --runtime name); a library is returned as it is."""
    if isinstance(kernels, KernelLibrary):
        return kernels
    found = LIBRARIES.get(kernels) or RUNTIMES.get(kernels)
    if found is None:
        raise KernelsError(
            f"unknown kernels {kernels!r}; choose from {', '.join(LIBRARIES)} "
            f"(or a runtime: {', '.join(RUNTIMES)})"
        )
    return found
