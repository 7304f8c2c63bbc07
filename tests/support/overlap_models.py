"""Single-operator models for the overlap rules' tests (tests/planning/test_overlap_tflm.py on
the real TFLM, tests/runtime/test_overlap_runtime.py on this project's runtime): one operator
whose input and output are the model's, built with host/tflite/modelgen.py, and offline plans
that put an input a given number of bytes above the output."""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from host.planning.model import metadata
from host.planning.model.lifetimes import align_up
from host.tflite.model import Model
from host.tflite.modelgen import Graph, _bias, _quantize_weights, assemble, scalar_options

FLOAT32, INT8, INT32 = 0, 9, 2
SAME, VALID = 0, 1

Builder = Callable[[np.random.Generator], tuple[bytes, int]]  # model, overlapped input slot


def act(g: Graph, name: str, shape: tuple[int, ...], dtype: int = INT8, scale: float = 1 / 128,
         zp: int = 0) -> int:  # fmt: skip
    if dtype == FLOAT32:
        return g.tensor(name, shape, FLOAT32, [], [])
    return g.tensor(name, shape, dtype, [scale], [zp])


def _conv(kh: int, kw: int, stride: tuple[int, int], dil: tuple[int, int], pad: int,
          ins: tuple[int, ...], cout: int, out_hw: tuple[int, int],
          depthwise: bool = False, dtype: int = INT8) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = act(g, "x", ins, dtype)
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
        y = act(g, "y", (ins[0], *out_hw, cout), dtype, 0.04)
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
        x = act(g, "x", (batches, depth), dtype)
        w = rng.uniform(-1, 1, (units, depth)) * 1.5 / np.sqrt(depth)
        if dtype == FLOAT32:
            wt = g.tensor("w", (units, depth), FLOAT32, [], [], w.astype(np.float32).tobytes())
            bt = -1
        else:
            data, ws = _quantize_weights(w, 0)
            wt = g.tensor("w", (units, depth), INT8, ws, [0] * units, data)
            bt = g.tensor("b", (units,), INT32, [s / 128 for s in ws], [0] * units,
                          _bias(units, 1 / 128, ws, rng))  # fmt: skip
        y = act(g, "y", (batches, units), dtype, 0.04)
        g.op(9, [x, wt, bt], [y], 8, scalar_options({}, 5))
        return assemble(g, [x], [y]), 0

    return build


def _pool(code: int, k: tuple[int, int], stride: tuple[int, int], pad: int,
          ins: tuple[int, ...], out_hw: tuple[int, int]) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = act(g, "x", ins)
        y = act(g, "y", (ins[0], *out_hw, ins[3]))
        slots = {0: ("B", pad), 1: ("i", stride[1]), 2: ("i", stride[0]),
                 3: ("i", k[1]), 4: ("i", k[0])}  # fmt: skip
        g.op(code, [x], [y], 5, scalar_options(slots, 6))
        return assemble(g, [x], [y]), 0

    return build


def _binary(code: int, opt_type: int, a: tuple[int, ...], b: tuple[int, ...],
            out: tuple[int, ...], slot: int, dtype: int = INT8) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x1, x2 = act(g, "a", a, dtype), act(g, "b", b, dtype)
        y = act(g, "y", out, dtype, 2 / 128 if code == 0 else 1 / 128)
        g.op(code, [x1, x2], [y], opt_type, scalar_options({}, 2))
        return assemble(g, [x1, x2], [y]), slot

    return build


def _unary(code: int, shape: tuple[int, ...], src: int = INT8, dst: int = INT8,
           out_q: tuple[float, int] = (1 / 128, 0)) -> Builder:  # fmt: skip
    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = act(g, "x", shape, src)
        y = act(g, "y", shape, dst, *out_q)
        g.op(code, [x], [y], 0, scalar_options({}, 1))
        return assemble(g, [x], [y]), 0

    return build


def _rearrange(code: int, shape: tuple[int, ...], arg: list[int], out: tuple[int, ...],
               dtype: int = INT8) -> Builder:  # fmt: skip
    """TRANSPOSE (arg: permutation) or PAD (arg: before/after per dimension), constant arg."""

    def build(rng: np.random.Generator) -> tuple[bytes, int]:
        g = Graph()
        x = act(g, "x", shape, dtype)
        dims = (len(arg),) if code == TRANSPOSE else (len(shape), 2)
        a = g.tensor("arg", dims, INT32, [], [], struct.pack(f"<{len(arg)}i", *arg))
        y = act(g, "y", out, dtype)
        g.op(code, [x, a], [y], 0, scalar_options({}, 1))
        return assemble(g, [x], [y]), 0

    return build


ADD, MUL, RELU, RELU6, LOGISTIC, TANH, QUANTIZE, DEQUANTIZE = 0, 18, 19, 21, 14, 28, 114, 6
TRANSPOSE, PAD = 39, 34
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
    "transpose NHWC to NCHW": _rearrange(TRANSPOSE, (1, 6, 5, 8), [0, 3, 1, 2], (1, 8, 6, 5)),
    "transpose 2-D float": _rearrange(TRANSPOSE, (12, 10), [1, 0], (10, 12), FLOAT32),
    "pad image": _rearrange(PAD, (1, 8, 8, 4), [0, 0, 1, 1, 2, 1, 0, 0], (1, 10, 11, 4)),
    "pad channels float": _rearrange(PAD, (1, 6, 6, 3), [0, 0, 0, 0, 0, 0, 1, 2], (1, 6, 6, 6),
                                     FLOAT32),
}  # fmt: skip


def with_plan(model: bytes, offsets: dict[int, int]) -> bytes:
    m = Model(model)
    metadata.embed(m, offsets)
    return m.to_bytes()


def overlap_layout(model: bytes, slot: int, delta: int) -> dict[int, int] | None:
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


# Int8 operators whose fast path (fast_s8.c) pairs pixels or rows, shaped so that the pairs need
# the input further above the output than the in-order loops: between the two rules (16-byte
# steps) the pairs must not run. tests/runtime/test_overlap_fast_pairs_run.py, test_runtime_qemu.py.
PAIR_CASES: dict[str, Builder] = {
    "conv 1x1 32 to 32": _conv(1, 1, (1, 1), (1, 1), VALID, (1, 6, 6, 32), 32, (6, 6)),
    "conv 1x1 48 to 24": _conv(1, 1, (1, 1), (1, 1), VALID, (1, 5, 5, 48), 24, (5, 5)),
    "conv 3x3 16 to 18 same": _conv(3, 3, (1, 1), (1, 1), SAME, (1, 6, 6, 16), 18, (6, 6)),
    "conv 3x3 stride 2 batch 2":
        _conv(3, 3, (2, 2), (1, 1), SAME, (2, 8, 8, 16), 17, (4, 4)),
    "fully connected batch 4": _fc(4, 32, 32),
}  # fmt: skip

# A depthwise 3x3 of multiplier 1 whose inside pixels take the DSP cores' blocks of four
# channels (fast_depthwise_s8.c's dw3x3_pixel_dsp); test_runtime_qemu.py overlaps it.
DEPTHWISE_FOURS: Builder = _conv(3, 3, (1, 1), (1, 1), SAME, (1, 9, 8, 16), 16, (9, 8),
                                 depthwise=True)  # fmt: skip
