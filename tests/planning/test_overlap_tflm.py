"""Every overlap rule on the real TFLM: single-operator models, input placed over the output.

Each model's input is planned at the rule's offset above its output (16-byte aligned) and run
on many random inputs: the output must equal TFLM's own non-overlapping run. One 16-byte step
tighter, the byte-level simulator (host.planning.overlap_sim) decides: where it finds a read of
an overwritten byte, some input must give a different output (the rule is tight, not just
safe); where it finds none (the unsafe offsets can have gaps), all outputs must still agree.
The output is the model output, so every byte of it is compared.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
import pytest
from support.tflm_oracle import run_tflm

from host.planning import offline_plan, overlap_sim
from host.planning.lifetimes import align_up
from host.planning.overlap import describe, op_rules
from host.tflite.flatbuf import new_table, set_child
from host.tflite.model import Model
from host.tflite.modelgen import Graph, _bias, _quantize_weights, assemble, scalar_options

FLOAT32, INT8, INT32 = 0, 9, 2
SAME, VALID = 0, 1
SAFE_RUNS = 12  # random inputs at the rule's offset
TIGHT_RUNS = 12  # random inputs tried one step tighter until one breaks

Builder = Callable[[np.random.Generator], tuple[bytes, int]]  # model, overlapped input slot


def _act(g: Graph, name: str, shape: tuple[int, ...], dtype: int = INT8, scale: float = 1 / 128,
         zp: int = 0) -> int:  # fmt: skip
    if dtype == FLOAT32:
        return g.tensor(name, shape, FLOAT32, [], [])
    return g.tensor(name, shape, dtype, [scale], [zp])


def _conv(kh: int, kw: int, stride: tuple[int, int], dil: tuple[int, int], pad: int,
          ins: tuple[int, ...], cout: int, out_hw: tuple[int, int],
          depthwise: bool = False, dtype: int = INT8) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = _act(g, "x", ins, dtype)
        cin = ins[3]
        shape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin)
        fan_in = kh * kw * (1 if depthwise else cin)
        w = rng.uniform(-1, 1, shape) * 1.5 / np.sqrt(fan_in)
        if dtype == FLOAT32:
            wt = g.tensor("w", shape, FLOAT32, [], [], w.astype(np.float32).tobytes())
            bt = g.tensor("b", (cout,), FLOAT32, [], [],
                          rng.normal(0, 0.1, cout).astype(np.float32).tobytes())  # fmt: skip
        else:
            qdim = 3 if depthwise else 0
            data, ws = _quantize_weights(w, qdim)
            wt = g.tensor("w", shape, INT8, ws, [0] * cout, data, qdim=qdim)
            bt = g.tensor("b", (cout,), INT32, [s / 128 for s in ws], [0] * cout,
                          _bias(cout, 1 / 128, ws, rng))  # fmt: skip
        y = _act(g, "y", (ins[0], *out_hw, cout), dtype, 0.04)
        if depthwise:
            slots = {0: ("B", pad), 1: ("i", stride[1]), 2: ("i", stride[0]),
                     3: ("i", cout // cin), 5: ("i", dil[1]), 6: ("i", dil[0])}  # fmt: skip
            g.op(4, [x, wt, bt], [y], 2, scalar_options(slots, 7))
        else:
            slots = {0: ("B", pad), 1: ("i", stride[1]), 2: ("i", stride[0]),
                     4: ("i", dil[1]), 5: ("i", dil[0])}  # fmt: skip
            g.op(3, [x, wt, bt], [y], 1, scalar_options(slots, 7))
        return assemble(g, [x], [y]), 0

    return build


def _fc(batches: int, depth: int, units: int, dtype: int = INT8) -> Builder:
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = _act(g, "x", (batches, depth), dtype)
        w = rng.uniform(-1, 1, (units, depth)) * 1.5 / np.sqrt(depth)
        if dtype == FLOAT32:
            wt = g.tensor("w", (units, depth), FLOAT32, [], [], w.astype(np.float32).tobytes())
            bt = -1
        else:
            data, ws = _quantize_weights(w, 0)
            wt = g.tensor("w", (units, depth), INT8, ws, [0] * units, data)
            bt = g.tensor("b", (units,), INT32, [s / 128 for s in ws], [0] * units,
                          _bias(units, 1 / 128, ws, rng))  # fmt: skip
        y = _act(g, "y", (batches, units), dtype, 0.04)
        g.op(9, [x, wt, bt], [y], 8, scalar_options({}, 5))
        return assemble(g, [x], [y]), 0

    return build


def _pool(code: int, k: tuple[int, int], stride: tuple[int, int], pad: int,
          ins: tuple[int, ...], out_hw: tuple[int, int]) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = _act(g, "x", ins)
        y = _act(g, "y", (ins[0], *out_hw, ins[3]))
        slots = {0: ("B", pad), 1: ("i", stride[1]), 2: ("i", stride[0]),
                 3: ("i", k[1]), 4: ("i", k[0])}  # fmt: skip
        g.op(code, [x], [y], 5, scalar_options(slots, 6))
        return assemble(g, [x], [y]), 0

    return build


def _binary(code: int, opt_type: int, a: tuple[int, ...], b: tuple[int, ...],
            out: tuple[int, ...], slot: int, dtype: int = INT8) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x1, x2 = _act(g, "a", a, dtype), _act(g, "b", b, dtype)
        y = _act(g, "y", out, dtype, 2 / 128 if code == 0 else 1 / 128)
        g.op(code, [x1, x2], [y], opt_type, scalar_options({}, 2))
        return assemble(g, [x1, x2], [y]), slot

    return build


def _unary(code: int, shape: tuple[int, ...], src: int = INT8, dst: int = INT8,
           out_q: tuple[float, int] = (1 / 128, 0)) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = _act(g, "x", shape, src)
        y = _act(g, "y", shape, dst, *out_q)
        g.op(code, [x], [y], 0, scalar_options({}, 1))
        return assemble(g, [x], [y]), 0

    return build


ADD, MUL, RELU, RELU6, LOGISTIC, TANH, QUANTIZE, DEQUANTIZE = 0, 18, 19, 21, 14, 28, 114, 6
AVG, MAX = 1, 17

CASES: dict[str, Builder] = {
    "conv 1x1 (pointwise)": _conv(1, 1, (1, 1), (1, 1), SAME, (1, 12, 12, 8), 16, (12, 12)),
    "conv 3x3 same": _conv(3, 3, (1, 1), (1, 1), SAME, (1, 9, 9, 4), 6, (9, 9)),
    "conv 3x3 stride 2 same": _conv(3, 3, (2, 2), (1, 1), SAME, (1, 12, 12, 8), 8, (6, 6)),
    "conv 3x2 valid dilated": _conv(3, 2, (1, 2), (2, 1), VALID, (1, 11, 10, 3), 5, (7, 5)),
    "conv batch 2": _conv(3, 3, (1, 1), (1, 1), SAME, (2, 6, 6, 4), 8, (6, 6)),
    "conv float 3x3": _conv(3, 3, (1, 1), (1, 1), SAME, (1, 8, 8, 4), 8, (8, 8), dtype=FLOAT32),
    "depthwise 3x3 same": _conv(3, 3, (1, 1), (1, 1), SAME, (1, 10, 10, 8), 8, (10, 10), True),
    "depthwise 3x3 stride 2": _conv(3, 3, (2, 2), (1, 1), SAME, (1, 12, 12, 16), 16, (6, 6), True),
    "depthwise multiplier 3": _conv(3, 3, (1, 1), (1, 1), VALID, (1, 8, 8, 4), 12, (6, 6), True),
    "depthwise float dilated":
        _conv(3, 3, (1, 1), (2, 2), SAME, (1, 9, 9, 4), 4, (9, 9), True, FLOAT32),
    "fully connected batch 3": _fc(3, 40, 24),
    "fully connected float": _fc(2, 32, 16, FLOAT32),
    "average pool 2x2": _pool(AVG, (2, 2), (2, 2), VALID, (1, 12, 12, 8), (6, 6)),
    "average pool 3x3 same": _pool(AVG, (3, 3), (1, 1), SAME, (1, 8, 8, 4), (8, 8)),
    "max pool 3x3 stride 2": _pool(MAX, (3, 3), (2, 2), SAME, (1, 12, 12, 8), (6, 6)),
    "add same shape": _binary(ADD, 11, (1, 8, 8, 4), (1, 8, 8, 4), (1, 8, 8, 4), 0),
    "add broadcast (channel vector)": _binary(ADD, 11, (1, 6, 6, 8), (1, 1, 1, 8), (1, 6, 6, 8), 0),
    "add broadcast input 1": _binary(ADD, 11, (1, 1, 6, 8), (1, 6, 6, 8), (1, 6, 6, 8), 1),
    "mul same shape": _binary(MUL, 21, (1, 8, 8, 4), (1, 8, 8, 4), (1, 8, 8, 4), 1),
    "mul broadcast": _binary(MUL, 21, (1, 6, 1, 8), (1, 6, 6, 8), (1, 6, 6, 8), 1),
    "add float": _binary(ADD, 11, (1, 8, 8, 4), (1, 8, 8, 4), (1, 8, 8, 4), 0, FLOAT32),
    "relu": _unary(RELU, (1, 16, 16)),
    "relu6": _unary(RELU6, (1, 16, 16), out_q=(6 / 255, -128)),
    "logistic": _unary(LOGISTIC, (1, 16, 16), out_q=(1 / 256, -128)),
    "tanh": _unary(TANH, (1, 16, 16)),
    "quantize float to int8": _unary(QUANTIZE, (1, 16, 16), FLOAT32, INT8, (1 / 32, 0)),
    "requantize int8": _unary(QUANTIZE, (1, 16, 16), INT8, INT8, (1 / 64, 3)),
    "dequantize int8 to float": _unary(DEQUANTIZE, (1, 16, 16), INT8, FLOAT32),
}  # fmt: skip


def _with_plan(model: bytes, offsets: dict[int, int]) -> bytes:
    m = Model(model)
    offline_plan.embed(m, offsets)
    return m.to_bytes()


def _layout(model: bytes, slot: int, delta: int) -> dict[int, int] | None:
    """Offsets with input `slot` at `delta` bytes above the output (others out of the way);
    None if that does not overlap the input at all."""
    m = Model(model)
    sg = m.subgraphs[0]
    op = sg.operators[0]
    x, y = op.inputs[slot], op.outputs[0]
    size = {t: align_up(sg.tensors[t].nbytes()) for t in sg.inputs + sg.outputs}
    if delta <= -size[x] or delta >= size[y]:
        return None
    out_at = max(0, -delta)
    offsets = {y: out_at, x: out_at + delta}
    top = max(out_at + size[y], out_at + delta + size[x])
    for t in sg.inputs:
        if t not in offsets:
            offsets[t], top = top, top + size[t]
    return offsets


def _outputs(model: bytes, seed: int) -> list[np.ndarray]:
    return run_tflm(model, seed).outputs


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("case", list(CASES))
def test_rule_on_real_tflm(case: str) -> None:
    model, slot = CASES[case](np.random.default_rng(7))
    m = Model(model)
    rules = op_rules(m, m.subgraphs[0], m.subgraphs[0].operators[0])
    assert rules, f"{case}: no overlap rule"
    d = {r.slot: r.min_delta for r in rules}[slot]
    in_size = align_up(m.subgraphs[0].tensors[m.subgraphs[0].operators[0].inputs[slot]].nbytes())
    delta = align_up(d) if d is not None else -in_size + 16
    safe = _layout(model, slot, delta)
    assert safe is not None, f"{case}: the rule allows no useful overlap (d={d})"
    planned = _with_plan(model, safe)
    for seed in range(SAFE_RUNS):
        assert _same(_outputs(planned, seed), _outputs(model, seed)), (case, d, delta, seed)
    tight = _layout(model, slot, delta - 16) if d is not None else None
    if tight is None:
        return  # one step tighter no longer overlaps: nothing can break
    k = describe(m, m.subgraphs[0], m.subgraphs[0].operators[0])
    assert k is not None
    unsafe = overlap_sim.corrupted_read(
        overlap_sim.trace(k), slot, delta - 16, k.in_bytes, k.out_bytes
    )
    planned = _with_plan(model, tight)
    broke = any(
        not _same(_outputs(planned, seed), _outputs(model, seed)) for seed in range(TIGHT_RUNS)
    )
    if unsafe:
        assert broke, f"{case}: offset {delta - 16} (rule {d}) never corrupted the output"
    else:
        assert not broke, f"{case}: offset {delta - 16} is safe in the simulation, not in TFLM"
        assert d > delta - 16  # the rule is conservative there, never unsafe


def test_reshape_is_not_overlapped() -> None:
    """RESHAPE copies with memcpy unless input and output share one address: no rule."""
    g = Graph()
    x = _act(g, "x", (1, 4, 8))
    y = _act(g, "y", (1, 32))
    opts = new_table("ReshapeOptions", {}, 1)
    set_child(opts, 0, struct.pack("<2i", 1, 32))
    g.op(22, [x], [y], 17, opts)
    m = Model(assemble(g, [x], [y]))
    assert op_rules(m, m.subgraphs[0], m.subgraphs[0].operators[0]) is None
