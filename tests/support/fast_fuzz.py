"""Randomized differential cases for the int8 fast paths: random but valid one-operator models
(conformance.Case) over the shapes the portable, DSP and Helium loops branch on, each compared
byte for byte with the real TFLM.

`random_case(seed)` makes one case from its seed alone: CONV_2D (kernels 1..5, strides 1..3,
dilation, SAME/VALID, 1..70 channels, groups, batches, per-channel or per-tensor weights, zero
points at the int8 ends, multipliers above 1, activations), DEPTHWISE_CONV_2D (multipliers
1..8, tall and one-column maps), FULLY_CONNECTED (batches, keep_num_dims, weight zero points),
ADD/SUB/MUL with broadcasts, AVERAGE/MAX_POOL_2D, LOGISTIC/TANH, QUANTIZE, SVDF and
UNIDIRECTIONAL_SEQUENCE_LSTM (test_conformance_recurrent.py's builders). `compare` runs cases
on the host's ASan+UBSan build and on TFLM; `planned` embeds host.plan's --overlap plans (the
smallest, --fastest, --fastest --cpu cortex-m55) in a case's model.

The campaign, by hand (results in the summary it prints; tests/runtime/test_fast_fuzz_seeds.py
keeps a few seeds in CI):

    nice -n 10 python tests/support/fast_fuzz.py host --seeds 0:2000 [--overlap]
    nice -n 10 python tests/support/fast_fuzz.py qemu --board mps3-an547 --seeds 0:300 [--overlap]
    nice -n 10 python tests/support/fast_fuzz.py qemu --board mps2-an386 --large --batch 20
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

if __name__ == "__main__":  # run as a script: the test helpers import as they do under pytest
    ROOT = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "runtime")]

from support.conformance import (
    I8,
    I16,
    I32,
    Case,
    Result,
    T,
    add_operator,
    case_inputs,
    q8,
    q16,
    run_cases,
    run_tflm,
    single_op_model,
)

SAME, VALID = 0, 1
ACTS = [0, 0, 1, 2, 3]  # none (twice as likely), RELU, RELU_N1_TO_1, RELU6
Rng = np.random.Generator


def _zp(rng: Rng) -> int:
    """A zero point, at the int8 ends a third of the time."""
    return int(rng.choice([-128, 127])) if rng.random() < 0.33 else int(rng.integers(-128, 128))


def _out_size(n: int, k: int, s: int, d: int, pad: int) -> int:
    return (n + s - 1) // s if pad == SAME else (n - (k - 1) * d - 1) // s + 1


def _multiplier(rng: Rng, depth: int, spread: float = 1.0) -> float:
    """An output multiplier that keeps a sum of `depth` int8 products mostly inside int8,
    spread over a decade or two; above 1 (a left shift) one time in ten."""
    if rng.random() < 0.1:
        return float(rng.uniform(1.0, 6.0))
    return 40.0 / (math.sqrt(depth) * 90.0 * 70.0) * 10 ** float(rng.uniform(-spread, spread))


def _weights(rng: Rng, shape: tuple[int, ...], channels: int, qdim: int, zp: int = 0) -> T:
    per_channel = channels > 1 and rng.random() < 0.6
    base = 10 ** float(rng.uniform(-3, -1.5))
    scales = [base * float(rng.uniform(0.5, 2.0)) for _ in range(channels if per_channel else 1)]
    top = int(rng.choice([127, 127, int(rng.integers(1, 128))]))  # small weights now and then
    data = rng.integers(-top, top + 1, shape)
    return T(shape, I8, scales, [zp] * len(scales), data=data, qdim=qdim)


def _bias(rng: Rng, n: int) -> list[T]:
    if rng.random() < 0.2:
        return []
    top = int(rng.choice([0, 300, 20_000, 1_000_000]))
    return [T((n,), I32, data=rng.integers(-top, top + 1, n))]


def _window(rng: Rng) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], int]:
    """Kernel, strides and dilations (height, width) and a padding."""
    k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    if rng.random() < 0.6:
        k = (k[0], k[0])
    s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if rng.random() < 0.7:
        s = (s[0], s[0])
    d = (1, 1) if rng.random() < 0.75 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if s != (1, 1):  # TFLM's reference kernels take dilation and stride together; keep it rare
        d = (1, 1) if rng.random() < 0.7 else d
    return k, s, d, int(rng.integers(0, 2))


def _map(rng: Rng, k: int, d: int, pad: int, small: bool) -> int:
    least = (k - 1) * d + 1 if pad == VALID else 1
    return least + int(rng.integers(0, 6 if small else 10))


def conv(
    rng: Rng, name: str, depthwise: bool = False, small: bool = False, x: T | None = None
) -> Case:
    """CONV_2D or DEPTHWISE_CONV_2D, on input `x` if given (a chain's activation)."""
    k, s, d, pad = _window(rng)
    batch = int(rng.choice([1, 1, 1, 2, 3]))
    h, w = _map(rng, k[0], d[0], pad, small), _map(rng, k[1], d[1], pad, small)
    if rng.random() < 0.15:  # a tall map, one column wide (or one row)
        h, w = max(h, 12), _map(rng, k[1], d[1], pad, True) if pad == VALID else 1
        if rng.random() < 0.5 and pad == SAME:
            h, w = w, h
    top = 24 if small else 70
    cin = int(rng.integers(1, top + 1))
    if x is not None:
        batch, h, w, cin = x.shape
        if h < (k[0] - 1) * d[0] + 1 or w < (k[1] - 1) * d[1] + 1:
            pad = SAME
    act = int(rng.choice(ACTS))
    if depthwise:
        mult = int(rng.choice([1, 1, 1, 2, 3, 4, 8, int(rng.integers(1, 9))]))
        cout = cin * mult
        shape, qdim, fin, op, options = (1, *k, cout), 3, 1, "DEPTHWISE_CONV_2D", "DepthwiseConv2D"
        slots = {3: ("i", mult), 4: ("b", act), 5: ("i", d[1]), 6: ("i", d[0])}
        depth = k[0] * k[1]
    else:
        groups = 1
        if rng.random() < 0.2:
            groups = int(rng.choice([g for g in range(1, cin + 1) if cin % g == 0]))
        cout = groups * int(rng.integers(1, max(2, top // groups + 1)))
        fin = cin // groups
        shape, qdim, op, options = (cout, *k, fin), 0, "CONV_2D", "Conv2D"
        slots = {3: ("b", act), 4: ("i", d[1]), 5: ("i", d[0])}
        depth = k[0] * k[1] * fin
    slots.update({0: ("B", pad), 1: ("i", s[1]), 2: ("i", s[0])})
    oh, ow = _out_size(h, k[0], s[0], d[0], pad), _out_size(w, k[1], s[1], d[1], pad)
    x = x or q8((batch, h, w, cin), 10 ** float(rng.uniform(-2.5, -0.5)), _zp(rng))
    wt = _weights(rng, shape, cout, qdim)
    out_scale = x.scale[0] * float(np.mean(wt.scale)) / _multiplier(rng, depth)
    ins = [x, wt, *_bias(rng, cout)]
    out = q8((batch, oh, ow, cout), out_scale, _zp(rng))
    return Case(name, op, ins, [out], f"{options}Options", slots)


def fully_connected(rng: Rng, name: str, small: bool = False) -> Case:
    depth = int(rng.integers(1, 80 if small else 260))
    units = int(rng.integers(1, 40 if small else 80))
    keep = rng.random() < 0.3
    lead = (int(rng.integers(1, 5)),) if rng.random() < 0.6 else tuple(rng.integers(1, 4, 2))
    lead = tuple(int(n) for n in lead)
    filter_zp = 0 if rng.random() < 0.9 else int(rng.integers(-20, 21))
    in_scale = 10 ** float(rng.uniform(-2.5, -0.5))
    wt = _weights(rng, (units, depth), units, 0, filter_zp)
    if len(wt.scale) > 1 and filter_zp:  # TFLM takes weight zero points per tensor only
        wt = T(wt.shape, I8, wt.scale[:1], [filter_zp], data=wt.data)
    out_scale = in_scale * float(np.mean(wt.scale)) / _multiplier(rng, depth)
    out_shape = (*lead, units) if keep else (int(np.prod(lead)), units)
    act = int(rng.choice(ACTS))
    ins = [q8((*lead, depth), in_scale, _zp(rng)), wt, *_bias(rng, units)]
    return Case(name, "FULLY_CONNECTED", ins, [q8(out_shape, out_scale, _zp(rng))],
                "FullyConnectedOptions", {0: ("b", act), 2: ("b", int(keep))})  # fmt: skip


def _broadcast_pair(rng: Rng, small: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    rank = int(rng.integers(1, 5))
    top = 8 if small else 12
    out = [int(rng.integers(1, top + 1)) for _ in range(rank)]
    shapes = []
    for _ in range(2):
        shape = [n if rng.random() < 0.6 else 1 for n in out]
        if rng.random() < 0.4:
            shape = list(out)
        drop = int(rng.integers(0, rank)) if rng.random() < 0.3 else 0
        shapes.append(tuple(shape[drop:]) or (1,))
    return shapes[0], shapes[1]


def binary(rng: Rng, name: str, op: str, small: bool = False) -> Case:
    a, b = _broadcast_pair(rng, small)
    out = np.broadcast_shapes(a, b)
    sa, sb = 10 ** float(rng.uniform(-3, -0.5)), 10 ** float(rng.uniform(-3, -0.5))
    if rng.random() < 0.2:
        sb = sa  # equal scales: a rescale of exactly 1/2
    if op == "MUL":
        so = sa * sb / _multiplier(rng, 1)
    else:
        so = max(sa, sb) * 10 ** float(rng.uniform(-0.5, 0.8))
    act = int(rng.choice(ACTS))
    options = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[op]
    ins = [q8(a, sa, _zp(rng)), q8(b, sb, _zp(rng))]
    return Case(name, op, ins, [q8(out, so, _zp(rng))], options, {0: ("b", act)} if act else {})


def pool(rng: Rng, name: str, op: str, small: bool = False, x: T | None = None) -> Case:
    k, s, _, pad = _window(rng)
    batch = int(rng.choice([1, 1, 2]))
    h, w = _map(rng, k[0], 1, pad, small), _map(rng, k[1], 1, pad, small)
    c = int(rng.integers(1, 25 if small else 71))
    scale, zp = 10 ** float(rng.uniform(-2.5, -0.5)), _zp(rng)
    if x is not None:
        (batch, h, w, c), scale, zp = x.shape, x.scale[0], x.zp[0]
        pad = SAME if h < k[0] or w < k[1] else pad
    if rng.random() < 0.1:  # a global pool
        k, s, pad = (h, w), (1, 1), VALID
    act = int(rng.choice(ACTS))
    out = (batch, _out_size(h, k[0], s[0], 1, pad), _out_size(w, k[1], s[1], 1, pad), c)
    slots = {0: ("B", pad), 1: ("i", s[1]), 2: ("i", s[0]), 3: ("i", k[1]), 4: ("i", k[0]),
             5: ("b", act)}  # fmt: skip
    return Case(name, op, [x or q8((batch, h, w, c), scale, zp)], [q8(out, scale, zp)],
                "Pool2DOptions", slots)  # fmt: skip


def _flat_shape(rng: Rng, small: bool) -> tuple[int, ...]:
    rank = int(rng.integers(1, 5))
    top = 6 if small else 9
    return tuple(int(rng.integers(1, top + 1)) for _ in range(rank))


def unary(rng: Rng, name: str, op: str, small: bool = False) -> Case:
    shape = _flat_shape(rng, small)
    if op == "QUANTIZE":
        if rng.random() < 0.5:
            src = q8(shape, 10 ** float(rng.uniform(-2.5, -0.5)), _zp(rng))
        else:
            src = q16(shape, 10 ** float(rng.uniform(-5, -2.5)))
        ratio = 10 ** float(rng.uniform(-1.3, 1.3)) * (1 if src.dtype == I8 else 100)
        if rng.random() < 0.1:
            ratio = float(rng.choice([1.0, 0.5, 2.0]))
        return Case(name, op, [src], [q8(shape, src.scale[0] * ratio, _zp(rng))])
    out = q8(shape, 1 / 256, -128) if op == "LOGISTIC" else q8(shape, 1 / 128, 0)
    return Case(name, op, [q8(shape, 10 ** float(rng.uniform(-3, -0.3)), _zp(rng))], [out])


def _reseeded(module_name: str, rng: Rng) -> ModuleType:
    """A conformance module whose builders draw their constants from `rng`."""
    import importlib

    module = importlib.import_module(module_name)
    module.RNG = rng
    return module


def svdf(rng: Rng, name: str, small: bool = False) -> Case:
    rec = _reseeded("test_conformance_recurrent", rng)
    rank = int(rng.integers(1, 3))
    state = I8 if rng.random() < 0.6 else I16
    zps = (_zp(rng), _zp(rng), _zp(rng))
    if state == I16:
        zps = (zps[0], 0, zps[2])
    units, n_input = int(rng.integers(1, 9)), int(rng.integers(1, 30 if small else 100))
    case = rec.svdf(
        "", int(rng.integers(1, 4)), n_input, rank * units, int(rng.integers(1, 11)), rank,
        zps, state, int(rng.choice([0, 1])),
    )  # fmt: skip
    case.name = name
    return case


def lstm(rng: Rng, name: str, small: bool = False) -> Case:
    rec = _reseeded("test_conformance_recurrent", rng)
    case = rec.lstm(
        "", int(rng.integers(1, 5)), int(rng.integers(1, 4)),
        int(rng.integers(1, 24 if small else 48)), int(rng.integers(1, 16 if small else 33)),
        time_major=bool(rng.random() < 0.5), zps=(_zp(rng), _zp(rng)),
        weight_zp=0 if rng.random() < 0.85 else int(rng.integers(-5, 6)),
        clip=0.0 if rng.random() < 0.6 else float(rng.uniform(0.01, 3)),
        cell_scale=2.0 ** -int(rng.integers(10, 16)), h_scale=10 ** float(rng.uniform(-2.5, -1)),
    )  # fmt: skip
    case.name = name
    return case


Builder = Callable[[Rng, str, bool], Case]
KINDS: dict[str, Builder] = {
    "CONV_2D": lambda r, n, s: conv(r, n, False, s),
    "DEPTHWISE_CONV_2D": lambda r, n, s: conv(r, n, True, s),
    "FULLY_CONNECTED": fully_connected,
    "ADD": lambda r, n, s: binary(r, n, "ADD", s),
    "SUB": lambda r, n, s: binary(r, n, "SUB", s),
    "MUL": lambda r, n, s: binary(r, n, "MUL", s),
    "AVERAGE_POOL_2D": lambda r, n, s: pool(r, n, "AVERAGE_POOL_2D", s),
    "MAX_POOL_2D": lambda r, n, s: pool(r, n, "MAX_POOL_2D", s),
    "LOGISTIC": lambda r, n, s: unary(r, n, "LOGISTIC", s),
    "TANH": lambda r, n, s: unary(r, n, "TANH", s),
    "QUANTIZE": lambda r, n, s: unary(r, n, "QUANTIZE", s),
    "SVDF": svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": lstm,
}
# Draw weights: the operators with the most loop shapes come up most.
WEIGHTS = {"CONV_2D": 6, "DEPTHWISE_CONV_2D": 5, "FULLY_CONNECTED": 3}
OVERLAP_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL",
               "AVERAGE_POOL_2D", "MAX_POOL_2D", "LOGISTIC", "TANH", "QUANTIZE"}  # fmt: skip


def random_case(seed: int, small: bool = False, kinds: Sequence[str] = ()) -> Case:
    """The case of `seed` (its constants and its inputs drawn from the seed alone); `small`
    keeps tensors small enough for many cases in one board image. One seed in eight is a
    chain of operators (chain_case)."""
    if not kinds and seed % 8 == 7:
        return chain_case(seed)
    rng = np.random.default_rng([seed, 2026])
    names = list(kinds or KINDS)
    p = np.array([WEIGHTS.get(n, 1) for n in names], float)
    op = names[int(rng.choice(len(names), p=p / p.sum()))]
    case = KINDS[op](rng, f"fuzz {seed} {op}", small)
    case.seed = seed
    return case


# ----------------------------------------------------------------------------- chains

CHAIN_OPS = ["CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "LOGISTIC"]


def _next_op(rng: Rng, name: str, op: str, x: T, earlier: list[T]) -> Case | None:
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        return conv(rng, name, op == "DEPTHWISE_CONV_2D", True, x)
    if op.endswith("POOL_2D"):
        return pool(rng, name, op, True, x)
    if op == "LOGISTIC":  # (the runtime refuses input scales of 2^4 and more, with a reason)
        return None if x.scale[0] >= 8 else Case(name, op, [x], [q8(x.shape, 1 / 256, -128)])
    same = [t for t in earlier if t.shape == x.shape and t is not x]
    if not same:
        return None
    so = max(x.scale[0], same[0].scale[0]) * 10 ** float(rng.uniform(-0.3, 0.6))
    return Case(name, "ADD", [x, same[-1]], [q8(x.shape, so, _zp(rng))], "AddOptions")


def chain_case(seed: int) -> Case:
    """A small multi-operator int8 model (2 to 4 operators from a convolution: depthwise,
    convolutions, pools, residual ADDs, LOGISTIC)."""
    rng = np.random.default_rng([seed, 2027])
    ops = [conv(rng, "", False, True)]
    acts = [ops[0].inputs[0], ops[0].outputs[0]]
    for _ in range(int(rng.integers(1, 4))):
        op = _next_op(rng, "", str(rng.choice(CHAIN_OPS)), acts[-1], acts)
        if op is not None:
            ops.append(op)
            acts.append(op.outputs[0])
    return chain_of(ops, f"chain {seed} " + " > ".join(op.op for op in ops), seed)


def chain_of(ops: list[Case], name: str, seed: int) -> Case:
    """Operators whose activations (T objects) connect them, from the first one's input, as
    one Case whose outputs are every operator's output (each intermediate tensor compared)."""
    from host.tflite import modelgen

    g = modelgen.Graph()
    ids: dict[int, int] = {}
    outputs = []
    for k, op in enumerate(ops):
        row = []
        for i, t in enumerate(op.inputs + op.outputs):
            if id(t) not in ids:
                data = None if t.data is None else t.data.tobytes()
                ids[id(t)] = g.tensor(f"t{k}_{i}", t.shape, t.dtype, t.scale, t.zp, data, t.qdim)
            row.append(ids[id(t)])
        add_operator(g, op, row)
        outputs.append(op.outputs[0])
    model = modelgen.assemble(g, [ids[id(ops[0].inputs[0])]], [ids[id(t)] for t in outputs])
    return Case(name, ops[0].op, ops[0].inputs[:1], outputs, seed=seed, edit=lambda _: model)


def describe(case: Case) -> str:
    """Enough of a case to rebuild it by hand: shapes, quantization, options."""
    parts = [case.name]
    for t in case.inputs + case.outputs:
        if t is None:
            parts.append("-")
            continue
        q = (
            f" s={t.scale[0]:.3g}{'/ch' if len(t.scale) > 1 else ''} zp={t.zp[0]}"
            if t.scale
            else ""
        )
        parts.append(f"{t.shape} t{t.dtype}{q}{' const' if t.data is not None else ''}")
    parts.append(f"opts {case.slots}")
    return "; ".join(parts)


# ----------------------------------------------------------------------------- host


@dataclass
class Verdict:
    case: Case
    kind: str  # "ok", "mismatch", "refused" (TFLM runs it, we do not), "skip" (TFLM refuses,
    # or its output is constant: nothing to compare)
    detail: str = ""
    printed: bool = False  # in the progress report already


def verdict(case: Case, r: Result) -> Verdict:
    if r.tflm is None:
        return Verdict(case, "skip", f"TFLM: {r.tflm_error}")
    if r.status is not None or r.ours is None:
        return Verdict(case, "refused", f"{r.status} {r.message}")
    if all(np.unique(w).size <= 1 for w in r.tflm):
        return Verdict(case, "skip", "TFLM's output is constant")
    for j, (got, want) in enumerate(zip(r.ours, r.tflm, strict=True)):
        if got.shape != want.shape or got.dtype != want.dtype:
            return Verdict(case, "mismatch", f"output {j}: {got.shape} vs TFLM {want.shape}")
        diff = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if diff.size:
            i = int(diff[0])
            first = f"{got.reshape(-1)[i]} vs TFLM {want.reshape(-1)[i]}"
            return Verdict(case, "mismatch", f"output {j}: {diff.size}/{want.size} differ, "
                           f"first at {i}: {first}")  # fmt: skip
    return Verdict(case, "ok")


def compare(cases: Sequence[Case], workdir: Path) -> list[Verdict]:
    """Every case on the sanitized host build and on TFLM; a batch whose child crashes is
    split until the crashing case stands alone (its verdict: "crash")."""
    try:
        results = run_cases(cases, workdir)
    except AssertionError as e:
        if len(cases) == 1:
            return [Verdict(cases[0], "crash", str(e)[-1500:])]
        half = len(cases) // 2
        return compare(cases[:half], workdir) + compare(cases[half:], workdir)
    for case in cases:
        original = UNPLANNED.get(case.name)
        if original is not None:  # TFLM on the model without the plan (see `planned`)
            r = results[case.name]
            r.tflm, r.tflm_error = run_tflm(
                single_op_model(original), case_inputs(original), len(original.outputs)
            )
    return [verdict(c, results[c.name]) for c in cases]


# ----------------------------------------------------------------------------- overlap plans

PLANS = ("smallest", "fastest", "fastest-m55")


# Planned case name -> the case without its plan. TFLM honours an embedded offline plan too,
# and its reference loops do not keep this runtime's overlap rules (a depthwise multiplier of
# 2 already reads overwritten input): the oracle runs the model without the plan.
UNPLANNED: dict[str, Case] = {}


def planned(case: Case, which: str, time_limit: float = 0.5) -> Case | None:
    """The case with host.plan --overlap --kernels microarena's plan embedded (`which` of
    PLANS), or None where the plan overlaps no input with the output; `compare` checks it
    against TFLM's output of the case without the plan."""
    from host.planning.libraries.microarena import MICROARENA, fastest_library
    from host.planning.model import metadata
    from host.planning.plan import plan_model
    from host.tflite.model import Model

    lib = {"smallest": MICROARENA, "fastest": fastest_library(None),
           "fastest-m55": fastest_library("cortex-m55")}[which]  # fmt: skip
    data = single_op_model(case)
    model = Model(data)
    result = plan_model(model, "best", time_limit, lib, overlap=True)
    if not result.shared:
        return None
    metadata.embed(model, result.tensor_offsets(), "microarena+overlap", lib.name, lib.cpu)
    plan = model.to_bytes()
    out = Case(f"{case.name} [{which}]", case.op, case.inputs, case.outputs, case.options,
               case.slots, case.nslots, case.vectors, seed=case.seed, invokes=case.invokes,
               edit=lambda _, plan=plan: plan)  # fmt: skip
    UNPLANNED[out.name] = case
    return out


# ----------------------------------------------------------------------------- the campaign


def _seeds(text: str) -> range:
    lo, _, hi = text.partition(":")
    return range(int(lo), int(hi)) if hi else range(int(lo), int(lo) + 1)


def host_campaign(seeds: range, overlap: bool, batch: int) -> list[Verdict]:
    verdicts: list[Verdict] = []
    with tempfile.TemporaryDirectory(prefix="fast_fuzz_") as tmp:
        for start in range(seeds.start, seeds.stop, batch):
            cases = [random_case(s) for s in range(start, min(start + batch, seeds.stop))]
            if overlap:
                cases = [p for c in cases if c.op in OVERLAP_OPS for w in PLANS
                         if (p := planned(c, w)) is not None]  # fmt: skip
            folder = Path(tmp) / str(start)
            folder.mkdir()
            got = compare(cases, folder)
            verdicts += got
            _progress(verdicts, f"seeds {seeds.start}..{min(start + batch, seeds.stop) - 1}")
    return verdicts


def qemu_campaign(
    board: str, seeds: range, overlap: bool, batch: int, large: bool = False
) -> list[Verdict]:
    """Cases in images of `batch` models each (every image built once), each model run on the
    board's deterministic input; the CRC-32 of every output must be TFLM's. `large`: the host
    campaign's sizes (up to 70 channels: the 32-channel blocks), in fewer cases per image."""
    from support.tflm_oracle import run_tflm as tflm_run

    verdicts: list[Verdict] = []
    which = ("smallest", "fastest-m55" if board == "mps3-an547" else "fastest")
    for start in range(seeds.start, seeds.stop, batch):
        stop = min(start + batch, seeds.stop)
        cases = [random_case(s, small=not large) for s in range(start, stop)]
        if overlap:
            cases = [p for c in cases if c.op in OVERLAP_OPS for w in which
                     if (p := planned(c, w)) is not None]  # fmt: skip
        runnable = []
        for case in cases:  # only what TFLM runs to a varied output goes into the image
            model = single_op_model(case)
            try:
                want = tflm_run(single_op_model(UNPLANNED.get(case.name, case)), deterministic=True)
                want = want.outputs
            except RuntimeError as e:
                verdicts.append(Verdict(case, "skip", f"TFLM: {e}"))
                continue
            if all(np.unique(w).size <= 1 for w in want):
                verdicts.append(Verdict(case, "skip", "TFLM's output is constant"))
                continue
            runnable.append((case, model, want))
        verdicts += qemu_image(board, runnable)
        _progress(verdicts, f"{board} seeds {seeds.start}..{stop - 1}")
    return verdicts


def qemu_image(
    board: str,
    runnable: list[tuple[Case, bytes, list[np.ndarray]]],
    check_elf: Callable[[Path], None] | None = None,
) -> list[Verdict]:
    """The cases in one image, or in two halves where they do not fit in one; check_elf, if
    given, sees each image before it runs."""
    from host.device.boards import BuildError, build_image

    with tempfile.TemporaryDirectory(prefix="fast_fuzz_qemu_") as tmp:
        paths = []
        for i, (_, model, _) in enumerate(runnable):
            paths.append(Path(tmp) / f"f{i:03d}.tflite")
            paths[-1].write_bytes(model)
        try:
            elf = build_image(board, paths, build_root=Path(tmp) / "build")
        except BuildError as e:
            if len(runnable) == 1:
                return [Verdict(runnable[0][0], "refused", str(e)[-600:])]
            half = len(runnable) // 2
            return qemu_image(board, runnable[:half], check_elf) + qemu_image(
                board, runnable[half:], check_elf
            )
        if check_elf is not None:
            check_elf(elf)
        return [
            _qemu_one(board, elf, f"f{i:03d}", c, want) for i, (c, _, want) in enumerate(runnable)
        ]


def _qemu_one(board: str, elf: Path, stem: str, case: Case, want: list[np.ndarray]) -> Verdict:
    import re

    from host.device import emulate

    result = emulate.run(board, elf, timeout=120, args=stem)
    lines = re.findall(r"^output (\d+) type=\d+ bytes=(\d+) crc32=([0-9a-f]{8})",
                       result.uart_text, re.M)  # fmt: skip
    if not result.ok or len(lines) < len(want):
        return Verdict(case, "refused", result.uart_text[-600:])
    for k, w in enumerate(want):
        data = w.tobytes()
        if (int(lines[k][1]), int(lines[k][2], 16)) != (len(data), zlib.crc32(data)):
            return Verdict(case, "mismatch", f"output {k}: CRC differs from TFLM's")
    return Verdict(case, "ok")


def _progress(verdicts: list[Verdict], where: str) -> None:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.kind] = counts.get(v.kind, 0) + 1
    print(f"{where}: {counts}", flush=True)
    for v in verdicts:
        if v.kind in ("mismatch", "crash", "refused") and not v.printed:
            print(f"  {v.kind.upper()}: {describe(v.case)}\n    {v.detail[:800]}", flush=True)
            v.printed = True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", choices=("host", "qemu"))
    ap.add_argument("--seeds", default="0:200", help="a range lo:hi (hi excluded) or one seed")
    ap.add_argument("--board", default="mps3-an547", help="QEMU board (qemu target)")
    ap.add_argument("--overlap", action="store_true", help="run host.plan --overlap plans")
    ap.add_argument("--batch", type=int, default=100, help="cases per child process or image")
    ap.add_argument("--large", action="store_true", help="qemu: the host's sizes, not small ones")
    args = ap.parse_args(argv)
    seeds = _seeds(args.seeds)
    if args.target == "host":
        verdicts = host_campaign(seeds, args.overlap, args.batch)
    else:
        verdicts = qemu_campaign(args.board, seeds, args.overlap, args.batch, args.large)
    bad = [v for v in verdicts if v.kind in ("mismatch", "crash")]
    print(f"done: {len(verdicts)} cases, {len(bad)} mismatches or crashes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
