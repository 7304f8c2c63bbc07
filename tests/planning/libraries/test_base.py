"""What a kernel library is to the planner (host/planning/libraries/base.py): the interface's
defaults (overlap loops from the library's style, unmodelled operators, label), and every
registered library answering each of its questions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from host.planning.libraries import loops
from host.planning.libraries.base import KernelLibrary, OpAllocations
from host.planning.libraries.registry import CPUS, KERNELS, library
from host.planning.tflm.structs import CORTEX_M
from host.tflite.model import Model, Operator, Subgraph
from host.tflite.modelgen import build_demo_model

MODEL = Model(build_demo_model())
SG = MODEL.subgraphs[0]


class _Blocked(KernelLibrary):
    title = "blocked kernels"
    overlap_style = replace(loops.REFERENCE_STYLE, depthwise_block=8)


class _NoDepthwise(KernelLibrary):
    def allocations(self, model: Model, sg: Subgraph, op: Operator, abi) -> OpAllocations | None:
        return None if op.name == "DEPTHWISE_CONV_2D" else OpAllocations(None)


def test_overlap_loops_follow_the_librarys_style() -> None:
    """The default overlap_kernel describes an operator's loops with the library's style: a
    depthwise block changes the depthwise kernels only."""
    base, blocked = KernelLibrary(), _Blocked()
    for op in SG.operators:
        k = base.overlap_kernel(MODEL, SG, op)
        assert k == loops.describe(MODEL, SG, op, loops.REFERENCE_STYLE)
        b = blocked.overlap_kernel(MODEL, SG, op)
        if op.name == "DEPTHWISE_CONV_2D":
            assert k and b and (k.block, b.block) == (1, 8)
        else:
            assert b == k


def test_unknown_ops_names_each_unmodelled_operator_once() -> None:
    assert _NoDepthwise().unknown_ops(MODEL, CORTEX_M) == ["DEPTHWISE_CONV_2D"]
    every = sorted({op.name for op in SG.operators})
    assert KernelLibrary().unknown_ops(MODEL, CORTEX_M) == every  # nothing modelled


def test_label_names_the_cpu_where_there_is_one() -> None:
    assert _Blocked("cortex-m7").label == "blocked kernels (cortex-m7)"
    assert _Blocked().label == "blocked kernels"


def test_the_interface_has_no_default_answer() -> None:
    op = SG.operators[0]
    with pytest.raises(NotImplementedError):
        KernelLibrary().scratch(MODEL, SG, op)
    with pytest.raises(NotImplementedError):
        KernelLibrary().borrowed(op)
    with pytest.raises(NotImplementedError):
        KernelLibrary().borrows_exactly(op.name)


@pytest.mark.parametrize("name", KERNELS)
def test_every_library_answers_its_questions(name: str) -> None:
    """Each registered library (CMSIS-NN on each CPU) states the scratch and overlap loops of
    every operator of the demo CNN; one TFLM runs also its allocations and borrowed tensors
    (this project's runtime models its own allocator, host/runtime/arena.py)."""
    for lib in [library(name, cpu) for cpu in CPUS] if name == "cmsis-nn" else [library(name)]:
        for op in SG.operators:
            scratch = lib.scratch(MODEL, SG, op)
            assert scratch is not None and all(b > 0 for b in scratch), (lib.label, op.name)
            lib.overlap_kernel(MODEL, SG, op)
            if lib.runtime == "tflm":
                assert set(lib.borrowed(op)) <= set(op.inputs) | set(op.outputs)
                assert isinstance(lib.borrows_exactly(op.name), bool)
        assert lib.unknown_ops(MODEL, CORTEX_M) == (
            [] if lib.runtime == "tflm" else sorted({op.name for op in SG.operators})
        )
