"""The kernel libraries by name (host/planning/libraries/registry.py): the one place a
--kernels, --runtime or --cpu name turns into a library."""

from __future__ import annotations

import pytest

from host.device.boards import all_boards
from host.planning.libraries.base import KernelsError
from host.planning.libraries.cmsis_nn import DEFAULT_CPU, CmsisNN
from host.planning.libraries.registry import CPUS, KERNELS, RUNTIMES, library


def test_unknown_runtime() -> None:
    """A name turns into a library in one place (the registry), which refuses unknown ones."""
    with pytest.raises(KernelsError, match="unknown kernels 'tvm'"):
        library("tvm")


def test_every_name_gives_its_library() -> None:
    for name in KERNELS:
        assert library(name).name == name
    for runtime, lib in RUNTIMES.items():
        assert library(runtime) is lib and lib.runtime == runtime


def test_only_cmsis_nn_depends_on_the_cpu() -> None:
    assert library("cmsis-nn").cpu == DEFAULT_CPU
    for cpu in CPUS:
        lib = library("cmsis-nn", cpu)
        assert isinstance(lib, CmsisNN) and lib.cpu == cpu
        assert library("reference", cpu) is library("reference")
    with pytest.raises(KernelsError, match="unknown CPU 'cortex-a53'; choose from cortex-m0"):
        library("cmsis-nn", "cortex-a53")


def test_every_boards_cpu_is_known() -> None:
    """--cpu accepts the CPU of every board in boards/ (a plan can be made for each)."""
    assert {b.cpu for b in all_boards().values()} <= set(CPUS)
