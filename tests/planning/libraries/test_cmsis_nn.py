"""CMSIS-NN's memory model (host/planning/libraries/cmsis_nn.py): the overlap rules of the DSP
path's depthwise convolutions and average pool against a replay of the function CMSIS-NN calls,
the operators it gives rules for on each CPU, and what it leaves unmodelled. Its allocations
and scratch are checked against TFLM + CMSIS-NN measured on QEMU boards by
tests/planning/test_cmsis_nn_predictor.py and the test_*cmsis_nn*_data.py files.
"""

from __future__ import annotations

import random

import pytest
from support import overlap_sim
from support.overlap_cases import agree, window_case
from support.scratch_models import builtin_op_model
from test_reference import SINGLE_OPS

from host.paths import SHARED_MODELS
from host.planning.libraries import cmsis_nn, loops
from host.planning.libraries.cmsis_nn import CmsisNN
from host.planning.libraries.reference import REFERENCE
from host.planning.libraries.registry import library
from host.planning.targets.target import target_arena
from host.tflite.model import Model


def _cmsis_case(rng: random.Random, function: str):
    """Shapes for which arm_depthwise_conv_wrapper_s8 (DSP path) calls `function`: padding,
    strides 1-3, odd channel counts, multipliers, dilation and batches where it allows them."""
    while True:
        ins, outs, k, s, d, pad = window_case(rng, depthwise=True)
        b, ih, iw, ic = ins
        ic = rng.randint(1, 9)
        mult = {"depthwise_conv_s8_mult_4": rng.choice([4, 8])}.get(function, 1)
        if function == "depthwise_conv_s8_generic":
            mult = rng.choice([1, 2, 3])
            b = rng.choice([1, 2]) if d != (1, 1) or mult == 1 else 2
        else:
            b, d = 1, (1, 1)
        if function == "arm_depthwise_conv_3x3_s8":
            k = (3, 3)
        same = rng.random() < 0.5
        oh, ow = (
            -(-n // st) if same else (n - (kk - 1) * dd - 1) // st + 1
            for n, kk, st, dd in zip((ih, iw), k, s, d, strict=True)
        )
        if oh < 1 or ow < 1:
            continue
        pad = tuple(
            loops._padding(0 if same else 1, n, o, kk, st, dd)
            for n, o, kk, st, dd in zip((ih, iw), (oh, ow), k, s, d, strict=True)
        )
        kern = loops.Kernel(
            "depthwise", ((b, ih, iw, ic),), (b, oh, ow, ic * mult), 1, 1, (0,),
            window=(k, s, d, pad),
        )  # fmt: skip
        chosen = cmsis_nn.DSP_OVERLAP["DEPTHWISE_CONV_2D"](kern)
        if chosen.function == function:
            return chosen


@pytest.mark.parametrize(
    "function",
    [
        "arm_depthwise_conv_3x3_s8",
        "arm_depthwise_conv_s8_opt",
        "depthwise_conv_s8_mult_4",
        "depthwise_conv_s8_generic",
    ],
)
@pytest.mark.parametrize("seed", range(25))
def test_cmsis_nn_dsp_depthwise_rule_matches_simulation(function: str, seed: int) -> None:
    """The DSP path's depthwise rule equals the simulation of the function CMSIS-NN calls."""
    k = _cmsis_case(random.Random(seed), function)
    agree(lambda: overlap_sim.trace(k), loops.rule(k, 0), 0, 1, 1)


@pytest.mark.parametrize("seed", range(30))
def test_cmsis_nn_dsp_average_pool_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, _, pad = window_case(rng, depthwise=True)
    ins = ins[:3] + (rng.randint(1, 9),)
    kern = loops.Kernel(
        "pool", (ins,), outs[:3] + (ins[3],), 1, 1, (0,), window=(k, s, (1, 1), pad)
    )
    kern = cmsis_nn.DSP_OVERLAP["AVERAGE_POOL_2D"](kern)
    assert kern.function == "arm_avgpool_s8"
    agree(lambda: overlap_sim.trace(kern), loops.rule(kern, 0), 0, 1, 1)


def test_cmsis_nn_overlaps_only_proven_loops() -> None:
    """Only the DSP path's depthwise and average pool overlap: 1x1 and im2col convolutions,
    max pool, and every operator on the no-DSP and MVE paths allow nothing."""
    path = SHARED_MODELS / "tflm_person_detect_int8.tflite"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (tests read ../shared/models)")
    m = Model.load(path)
    sg = m.subgraphs[0]
    for cpu in ("cortex-m0", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"):
        lib = library("cmsis-nn", cpu)
        ruled = {op.name for op in sg.operators if lib.overlap_kernel(m, sg, op) is not None}
        dsp = cmsis_nn.PATHS[cpu] == cmsis_nn.DSP
        assert ruled == ({"DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D"} if dsp else set()), cpu


def test_unmodelled_scratch_is_never_called_exact() -> None:
    """CMSIS-NN's int4 kernels' scratch is not modelled: the target's figures say so, where
    the reference kernels' (modelled) stay exact."""
    model = Model(builtin_op_model(*SINGLE_OPS["CONV_2D int4 filter"]))
    cmsis = target_arena(model, "tflm-cortex-m", CmsisNN("cortex-m4"))
    assert cmsis.exact == {"head": False, "tail": False, "min_arena": False}
    assert any("scratch of subgraph 0 op 0 CONV_2D not modelled" in n for n in cmsis.notes)
    reference = target_arena(model, "tflm-cortex-m", REFERENCE)
    assert reference.exact["head"] and reference.exact["tail"]
