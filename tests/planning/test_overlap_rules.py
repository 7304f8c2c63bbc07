"""Every overlap rule (host.overlap) equals the byte-level simulation of its kernel's loops.

For random shapes and options: the closed-form rule equals the smallest safe offset the
simulator finds; at the rule's offset no read sees an overwritten byte, and one byte tighter
one does (the rule is exact to the byte).
"""

from __future__ import annotations

import random

import pytest
from support import overlap_sim

from host.paths import FIRMWARE, SHARED_MODELS
from host.planning.libraries import cmsis_nn, loops, microarena
from host.planning.libraries.registry import library
from host.tflite.model import Model

SIZES = [(1, 1), (1, 4), (4, 1), (4, 4), (1, 2), (2, 1)]  # (input bytes, output bytes)


def _agree(trace_fn, rule: int | None, slot: int, ib: int, ob: int) -> None:
    sim = overlap_sim.min_safe_delta(trace_fn(), slot, ib, ob)
    assert rule == sim
    if rule is None:
        return
    assert overlap_sim.corrupted_read(trace_fn(), slot, rule, ib, ob) is None
    assert overlap_sim.corrupted_read(trace_fn(), slot, rule - 1, ib, ob) is not None


def _window_case(rng: random.Random, depthwise: bool):
    b = rng.choice([1, 1, 2])
    kh, kw = rng.randint(1, 4), rng.randint(1, 4)
    sh, sw = rng.randint(1, 3), rng.randint(1, 3)
    dh, dw = (1, 1) if rng.random() < 0.6 else (rng.randint(1, 3), rng.randint(1, 3))
    ih, iw, ic = rng.randint(1, 7), rng.randint(1, 7), rng.randint(1, 4)
    same = rng.random() < 0.5
    oc = ic * rng.randint(1, 3) if depthwise else rng.randint(1, 5)

    def out(n: int, k: int, s: int, d: int) -> int:
        eff = (k - 1) * d + 1
        return -(-n // s) if same else max(1, (n - eff) // s + 1)

    oh, ow = out(ih, kh, sh, dh), out(iw, kw, sw, dw)
    pad = (
        loops._padding(0 if same else 1, ih, oh, kh, sh, dh),
        loops._padding(0 if same else 1, iw, ow, kw, sw, dw),
    )
    return (b, ih, iw, ic), (b, oh, ow, oc), (kh, kw), (sh, sw), (dh, dw), pad


@pytest.mark.parametrize("seed", range(40))
def test_conv_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = _window_case(rng, depthwise=False)
    ib, ob = rng.choice(SIZES)
    rule = loops.conv_rule(ins, outs, k, s, d, pad, ib, ob)
    _agree(lambda: overlap_sim.conv_trace(ins, outs, k, s, d, pad), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_depthwise_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = _window_case(rng, depthwise=True)
    ib, ob = rng.choice(SIZES)
    block = rng.choice([1, 1, 2, 3, 32])  # 32: this project's kernel
    rule = loops.depthwise_rule(ins, outs, k, s, d, pad, ib, ob, block)
    _agree(lambda: overlap_sim.depthwise_trace(ins, outs, k, s, d, pad, block), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_pool_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, _, pad = _window_case(rng, depthwise=True)
    outs = outs[:3] + (ins[3],)
    ib, ob = rng.choice(SIZES)
    rule = loops.depthwise_rule(ins, outs, k, s, (1, 1), pad, ib, ob)
    _agree(lambda: overlap_sim.pool_trace(ins, outs, k, s, pad), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(30))
def test_fully_connected_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    b, depth, units = rng.randint(1, 4), rng.randint(1, 9), rng.randint(1, 9)
    ib, ob = rng.choice(SIZES)
    rule = loops.fully_connected_rule(b, depth, units, ib, ob)
    _agree(lambda: overlap_sim.fully_connected_trace(b, depth, units), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_elementwise_rule_matches_simulation(seed: int) -> None:
    """Unary ops (any element sizes: QUANTIZE, DEQUANTIZE) and binary ops with broadcast."""
    rng = random.Random(seed)
    out = tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 4)))
    shapes = [
        tuple(d if rng.random() < 0.6 else 1 for d in out[rng.randint(0, len(out)) :])
        for _ in range(rng.randint(1, 2))
    ]
    ib, ob = rng.choice(SIZES)
    for slot, shape in enumerate(shapes):
        rule = loops.elementwise_rule(out, shape, ib, ob)
        _agree(lambda: overlap_sim.elementwise_trace(out, shapes), rule, slot, ib, ob)


@pytest.mark.parametrize("seed", range(30))
def test_transpose_and_pad_rules_match_simulation(seed: int) -> None:
    rng = random.Random(seed)
    shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4)))
    ib = ob = rng.choice([1, 2, 4])
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    rule = loops.gather_rule(loops.transpose_index(shape, perm), ib, ob)
    _agree(lambda: overlap_sim.transpose_trace(shape, perm), rule, 0, ib, ob)
    pads = [(rng.randint(0, 2), rng.randint(0, 2)) for _ in shape]
    rule = loops.gather_rule(loops.pad_index(shape, pads), ib, ob)
    _agree(lambda: overlap_sim.pad_trace(shape, pads), rule, 0, ib, ob)


def test_elementwise_same_size_is_in_place() -> None:
    assert loops.elementwise_rule((3, 5), (3, 5), 1, 1) == 0
    assert loops.elementwise_rule((3, 5), (3, 5), 4, 4) == 0


@pytest.mark.parametrize(
    "name", ["tflm_person_detect_int8", "tiny_kws_dscnn_int8", "tiny_sww_int8"]
)
@pytest.mark.parametrize("runtime", ["tflm", "microarena", "cmsis-nn"])
def test_rules_of_shared_model_operators_match_simulation(name: str, runtime: str) -> None:
    """The rule of every operator of real models equals the simulation of its loops."""
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (tests read ../shared/models)")
    m = Model.load(path)
    checked = 0
    for sg in m.subgraphs:
        for op in sg.operators:
            k = library(runtime).overlap_kernel(m, sg, op)
            if k is None:
                continue
            for slot in k.slots:
                sim = overlap_sim.min_safe_delta(
                    overlap_sim.trace(k), slot, k.in_bytes, k.out_bytes
                )
                assert loops.rule(k, slot) == sim, (op.index, op.name, slot)
                checked += 1
    assert checked >= 4


def test_microarena_depthwise_block_is_the_kernels() -> None:
    """The planner's rules use the depthwise block size of firmware/src/kernels/."""
    import re

    header = FIRMWARE / "src/kernels/kernel_util.h"
    block = re.search(r"MAK_DW_BLOCK = (\d+)", header.read_text())
    assert block and int(block.group(1)) == microarena.DW_BLOCK


def _cmsis_case(rng: random.Random, function: str):
    """Shapes for which arm_depthwise_conv_wrapper_s8 (DSP path) calls `function`: padding,
    strides 1-3, odd channel counts, multipliers, dilation and batches where it allows them."""
    while True:
        ins, outs, k, s, d, pad = _window_case(rng, depthwise=True)
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
    _agree(lambda: overlap_sim.trace(k), loops.rule(k, 0), 0, 1, 1)


@pytest.mark.parametrize("seed", range(30))
def test_cmsis_nn_dsp_average_pool_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, _, pad = _window_case(rng, depthwise=True)
    ins = ins[:3] + (rng.randint(1, 9),)
    kern = loops.Kernel(
        "pool", (ins,), outs[:3] + (ins[3],), 1, 1, (0,), window=(k, s, (1, 1), pad)
    )
    kern = cmsis_nn.DSP_OVERLAP["AVERAGE_POOL_2D"](kern)
    assert kern.function == "arm_avgpool_s8"
    _agree(lambda: overlap_sim.trace(kern), loops.rule(kern, 0), 0, 1, 1)


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
