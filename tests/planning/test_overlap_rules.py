"""Every overlap rule (host.overlap) equals the byte-level simulation of its kernel's loops.

For random shapes and options: the closed-form rule equals the smallest safe offset the
simulator finds; at the rule's offset no read sees an overwritten byte, and one byte tighter
one does (the rule is exact to the byte).
"""

from __future__ import annotations

import random

import pytest

from host.paths import FIRMWARE, SHARED_MODELS
from host.planning import overlap, overlap_sim
from host.planning.kernels import microarena
from host.planning.kernels.libraries import library
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
        overlap._padding(0 if same else 1, ih, oh, kh, sh, dh),
        overlap._padding(0 if same else 1, iw, ow, kw, sw, dw),
    )
    return (b, ih, iw, ic), (b, oh, ow, oc), (kh, kw), (sh, sw), (dh, dw), pad


@pytest.mark.parametrize("seed", range(40))
def test_conv_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = _window_case(rng, depthwise=False)
    ib, ob = rng.choice(SIZES)
    rule = overlap.conv_rule(ins, outs, k, s, d, pad, ib, ob)
    _agree(lambda: overlap_sim.conv_trace(ins, outs, k, s, d, pad), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_depthwise_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = _window_case(rng, depthwise=True)
    ib, ob = rng.choice(SIZES)
    block = rng.choice([1, 1, 2, 3, 32])  # 32: this project's kernel
    rule = overlap.depthwise_rule(ins, outs, k, s, d, pad, ib, ob, block)
    _agree(lambda: overlap_sim.depthwise_trace(ins, outs, k, s, d, pad, block), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(40))
def test_pool_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    ins, outs, k, s, _, pad = _window_case(rng, depthwise=True)
    outs = outs[:3] + (ins[3],)
    ib, ob = rng.choice(SIZES)
    rule = overlap.depthwise_rule(ins, outs, k, s, (1, 1), pad, ib, ob)
    _agree(lambda: overlap_sim.pool_trace(ins, outs, k, s, pad), rule, 0, ib, ob)


@pytest.mark.parametrize("seed", range(30))
def test_fully_connected_rule_matches_simulation(seed: int) -> None:
    rng = random.Random(seed)
    b, depth, units = rng.randint(1, 4), rng.randint(1, 9), rng.randint(1, 9)
    ib, ob = rng.choice(SIZES)
    rule = overlap.fully_connected_rule(b, depth, units, ib, ob)
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
        rule = overlap.elementwise_rule(out, shape, ib, ob)
        _agree(lambda: overlap_sim.elementwise_trace(out, shapes), rule, slot, ib, ob)


@pytest.mark.parametrize("seed", range(30))
def test_transpose_and_pad_rules_match_simulation(seed: int) -> None:
    rng = random.Random(seed)
    shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4)))
    ib = ob = rng.choice([1, 2, 4])
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    rule = overlap.gather_rule(overlap.transpose_index(shape, perm), ib, ob)
    _agree(lambda: overlap_sim.transpose_trace(shape, perm), rule, 0, ib, ob)
    pads = [(rng.randint(0, 2), rng.randint(0, 2)) for _ in shape]
    rule = overlap.gather_rule(overlap.pad_index(shape, pads), ib, ob)
    _agree(lambda: overlap_sim.pad_trace(shape, pads), rule, 0, ib, ob)


def test_elementwise_same_size_is_in_place() -> None:
    assert overlap.elementwise_rule((3, 5), (3, 5), 1, 1) == 0
    assert overlap.elementwise_rule((3, 5), (3, 5), 4, 4) == 0


@pytest.mark.parametrize(
    "name", ["tflm_person_detect_int8", "tiny_kws_dscnn_int8", "tiny_sww_int8"]
)
@pytest.mark.parametrize("runtime", ["tflm", "microarena"])
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
                assert overlap.rule(k, slot) == sim, (op.index, op.name, slot)
                checked += 1
    assert checked >= 5


def test_microarena_depthwise_block_is_the_kernels() -> None:
    """The planner's rules use the depthwise block size of firmware/src/kernels/."""
    import re

    header = FIRMWARE / "src/kernels/kernel_util.h"
    block = re.search(r"MAK_DW_BLOCK = (\d+)", header.read_text())
    assert block and int(block.group(1)) == microarena.DW_BLOCK
