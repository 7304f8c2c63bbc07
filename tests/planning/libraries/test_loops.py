"""The loops' overlap rules (host/planning/libraries/loops.py) against a byte-level replay of
each kernel's loops (tests/support/overlap_sim.py).

For random shapes and options: the closed-form rule equals the smallest safe offset the
simulator finds; at the rule's offset no read sees an overwritten byte, and one byte tighter
one does (the rule is exact to the byte). The same for every operator of real models, as each
library describes its loops. The pair rules of this project's int8 fast paths (fast_s8.c,
fast_mve_s8.c): row pairs exact, pixel pairs and Helium's depthwise pairs a bound at which the
kernel's whole walk reads no overwritten byte; gathered windows (copied before the pair is
written) keep the in-order CONV_2D rule.
"""

from __future__ import annotations

import random

import pytest
from support import overlap_sim
from support.overlap_cases import SIZES, agree, window_case

from host.paths import SHARED_MODELS
from host.planning.libraries import loops, microarena
from host.planning.libraries.registry import library
from host.tflite.model import Model

CHUNK = microarena.PAIR_CHUNK


@pytest.mark.parametrize("seed", range(40))
def test_conv_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = window_case(rng, depthwise=False)
    ib, ob = rng.choice(SIZES)
    rule = loops.conv_rule(ins, outs, k, s, d, pad, ib, ob)
    agree(lambda: overlap_sim.conv_trace(ins, outs, k, s, d, pad), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_depthwise_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = window_case(rng, depthwise=True)
    ib, ob = rng.choice(SIZES)
    block = rng.choice([1, 1, 2, 3, 32])  # 32: this project's kernel
    rule = loops.depthwise_rule(ins, outs, k, s, d, pad, ib, ob, block)
    agree(lambda: overlap_sim.depthwise_trace(ins, outs, k, s, d, pad, block), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_pool_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, _, pad = window_case(rng, depthwise=True)
    outs = outs[:3] + (ins[3],)
    ib, ob = rng.choice(SIZES)
    rule = loops.depthwise_rule(ins, outs, k, s, (1, 1), pad, ib, ob)
    agree(lambda: overlap_sim.pool_trace(ins, outs, k, s, pad), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(30))
def test_fully_connected_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    b, depth, units = rng.randint(1, 4), rng.randint(1, 9), rng.randint(1, 9)
    ib, ob = rng.choice(SIZES)
    rule = loops.fully_connected_rule(b, depth, units, ib, ob)
    agree(lambda: overlap_sim.fully_connected_trace(b, depth, units), rule, 0, ib, ob)


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
        agree(lambda: overlap_sim.elementwise_trace(out, shapes), rule, slot, ib, ob)


@pytest.mark.parametrize("seed", range(30))
def test_transpose_and_pad_rules_match_simulation(seed: int) -> None:
    rng = random.Random(seed)
    shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4)))
    ib = ob = rng.choice([1, 2, 4])
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    rule = loops.gather_rule(loops.transpose_index(shape, perm), ib, ob)
    agree(lambda: overlap_sim.transpose_trace(shape, perm), rule, 0, ib, ob)
    pads = [(rng.randint(0, 2), rng.randint(0, 2)) for _ in shape]
    rule = loops.gather_rule(loops.pad_index(shape, pads), ib, ob)
    agree(lambda: overlap_sim.pad_trace(shape, pads), rule, 0, ib, ob)


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


def _conv(rng: random.Random, function: str) -> loops.Kernel:
    while True:
        ins, outs, k, s, d, pad = window_case(rng, depthwise=False)
        ins = (*ins[:3], rng.choice([1, 2, 4, 8, 16, 32]))
        outs = (*outs[:3], rng.choice([1, 2, 3, 4, 5, 16, 17, 18, 31, 33, 34]))
        if function == loops.FAST_ROWS:
            ins, k, s, d, pad = (*ins[:1], *outs[1:3], ins[3]), (1, 1), (1, 1), (1, 1), (0, 0)
        window = (k, s, d, pad)
        return loops.Kernel("conv", (ins,), outs, 1, 1, (0,), window, function=function,
                              chunk=CHUNK)  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_row_pairs_rule_is_exact(seed: int) -> None:
    rng = random.Random(seed)
    if seed % 2:
        k = _conv(rng, loops.FAST_ROWS)
    else:
        fc = (rng.randint(1, 7), rng.choice([1, 4, 8, 24, 40]), rng.choice([1, 3, 16, 17, 33]))
        k = loops.Kernel("fully_connected", ((fc[0], fc[1]),), (fc[0], fc[2]), 1, 1, (0,),
                           fc=fc, function=loops.FAST_ROWS, chunk=CHUNK)  # fmt: skip
    # The single rows' reads under slot -1: the pairs' reads alone decide.
    sim = overlap_sim.min_safe_delta(overlap_sim.fast_s8_trace(k, single_slot=-1), 0, 1, 1)
    assert loops.pairs_need(k) == sim
    _no_corrupted_read_at_the_rule(k)


@pytest.mark.parametrize("seed", range(40))
def test_pixel_pairs_rule_bounds_the_kernels_walk(seed: int) -> None:
    k = _conv(random.Random(seed), loops.FAST_WINDOWS)
    sim = overlap_sim.min_safe_delta(overlap_sim.fast_s8_trace(k, single_slot=-1), 0, 1, 1)
    need = loops.pairs_need(k)
    assert sim is None or (need is not None and need >= sim)
    _no_corrupted_read_at_the_rule(k)
    base = loops.Kernel("conv", k.in_shapes, k.out_shape, 1, 1, (0,), k.window)
    gathered = overlap_sim.min_safe_delta(overlap_sim.gathered_trace(base), 0, 1, 1)
    rule = loops.rule(base, 0)
    assert gathered is None or (rule is not None and gathered <= rule)


def _no_corrupted_read_at_the_rule(k: loops.Kernel) -> None:
    rule = loops.rule(k, 0)
    if rule is not None:
        assert overlap_sim.corrupted_read(overlap_sim.fast_s8_trace(k), 0, rule, 1, 1) is None


@pytest.mark.parametrize("seed", range(30))
def test_helium_rules_against_their_replay(seed: int) -> None:
    """fast_mve_s8.c: the rows read in place (exact) and the depthwise pairs side by side and
    one above the other (a bound; with the in-order depthwise rule no corrupted read)."""
    rng = random.Random(seed)
    rows, cin, cout = rng.randint(0, 13), rng.randint(1, 20), rng.randint(1, 20)
    lanes, block = microarena.MVE_DW_LANES, microarena.DW_BLOCK
    need = loops.mve_rows_need(rows, cin, cout, microarena.MVE_ROWS, microarena.MVE_CHANNELS)
    trace = overlap_sim.mve_rows_trace(
        rows, cin, cout, microarena.MVE_ROWS, microarena.MVE_CHANNELS
    )
    assert need == overlap_sim.min_safe_delta(trace, 0, 1, 1)
    ins, outs, k, s, d, pad = window_case(rng, depthwise=True)
    ic = rng.choice([1, 2, 4, 8, 16])
    mult = rng.choice([m for m in (1, 2, 4, 8, 16) if ic * m % lanes == 0])
    ins, outs = (*ins[:3], ic), (*outs[:3], ic * mult)
    window = (k, s, d, pad)
    in_order = loops.depthwise_rule(ins, outs, *window, 1, 1, block)
    for columns in (False, True):
        need = loops.mve_depthwise_pairs_need(ins, outs, *window, lanes, columns)
        pairs = overlap_sim.mve_depthwise_trace(ins, outs, window, lanes, block, columns, -1)
        sim = overlap_sim.min_safe_delta(pairs, 0, 1, 1)
        assert sim is None or (need is not None and need >= sim)
        full = loops._at_least(in_order, need)
        walk = overlap_sim.mve_depthwise_trace(ins, outs, window, lanes, block, columns)
        assert full is None or overlap_sim.corrupted_read(walk, 0, full, 1, 1) is None


@pytest.mark.parametrize("seed", range(30))
def test_dsp_depthwise_pixels_keep_the_in_order_rule(seed: int) -> None:
    """fast_depthwise_s8.c's dw3x3_pixel_dsp reads a pixel's window four channels at a time,
    then writes them. With multiplier 1 the depthwise rule of the kernel's wider blocks holds
    it wherever the input does not start below the output (mak_dw_blocks_fit), so the DSP
    cores keep it on the overlaps the planner makes: it needs no rule of its own."""
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = window_case(rng, depthwise=True)
    c = rng.choice([4, 8, 12, 16, 36, 64])
    ins, outs = (*ins[:3], c), (*outs[:3], c)
    rule = loops.depthwise_rule(ins, outs, k, s, d, pad, 1, 1, microarena.DW_BLOCK)
    fours = list(overlap_sim.depthwise_trace(ins, outs, k, s, d, pad, block=4))
    need = overlap_sim.min_safe_delta(fours, 0, 1, 1)
    at = max(0, rule if rule is not None else 0)
    assert need is None or need <= at
    assert overlap_sim.corrupted_read(fours, 0, at, 1, 1) is None
