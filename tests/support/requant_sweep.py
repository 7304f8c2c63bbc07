"""Requantization swept against the real TFLM: every input value of the type, random scales.

Each case is a one-operator model whose first input holds every int8 value (256) or every
int16 value (65,536), under seeded, realistic scales and zero points, so an error in how a
kernel forms or applies its multiplier (a ratio formed in float instead of double, a rounding
tie broken the other way) shows on the inputs where it matters. A second input, where the
operator has one, is random. `OPS` are element-wise (activations, unary, binary, QUANTIZE,
reductions over one value); `WEIGHTED` sum many inputs per output (convolutions,
FULLY_CONNECTED, BATCH_MATMUL, SVDF, pools, SOFTMAX, reductions) with seeded weights, fused
activations, strides and paddings; `tie_cases` are crafted rounding ties that tell a
multiplier formed in float from one formed in double. `tests/runtime/test_requant_sweep.py`
runs a few seeds in CI; `tools/sweep_requant.py --configs N` runs many by hand.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from support.conformance import (
    BOOL,
    F32,
    I8,
    I16,
    I32,
    I64,
    NP_TYPES,
    Case,
    Result,
    T,
    check,
    const_i32,
)


@dataclass(frozen=True)
class Op:
    """How to make one operator's case: which types, which scales it fixes."""

    name: str
    types: tuple[int, ...]
    options: str | None = None
    # The options' slots for a seeded generator (e.g. LEAKY_RELU's alpha).
    slots: Callable[[np.random.Generator], dict[int, tuple[str, object]]] | None = None
    # A fixed output quantization (TANH, LOGISTIC): by type, (scale, zero point).
    out_fixed: dict[int, tuple[float, int]] | None = None
    out_type: int | None = None  # the output's type if not the input's (QUANTIZE int8->int16)
    second: bool = False  # a second (random) input quantized like the first's type
    reduce: bool = False  # MEAN over a last axis of one element (keep_dims)
    int16_zp0: bool = True  # int16 with zero points 0, as TFLM's int16 kernels expect
    zp_min: bool = False  # the input's zero point at the type's minimum (RSQRT: inputs >= 0)
    # The output's scale from the input's, where a plain ratio would saturate every output.
    out_scale: Callable[[float], float] | None = None
    # int8 outputs on the square of the larger input scale (SQUARED_DIFFERENCE: on the first
    # input's alone, a coarser second input saturated every output of a configuration).
    squares: bool = False


def _alpha(rng: np.random.Generator) -> dict[int, tuple[str, object]]:
    alpha = float(rng.uniform(0.01, 0.5)) * (-1 if rng.random() < 0.2 else 1)
    return {0: ("f", np.float32(alpha).item())}


OPS = (
    Op("RELU", (I8, I16)),
    Op("LEAKY_RELU", (I8, I16), "LeakyReluOptions", _alpha),
    Op("ABS", (I8, I16)),
    Op("HARD_SWISH", (I8,)),
    Op("ELU", (I8,)),
    # 1/sqrt(x) is at most 1/sqrt(input scale): spread that over the int8 range.
    Op("RSQRT", (I8,), zp_min=True, out_scale=lambda s: 1 / np.sqrt(s) / 64),
    Op("TANH", (I8, I16), out_fixed={I8: (1 / 128, 0), I16: (2**-15, 0)}),
    Op("LOGISTIC", (I8, I16), out_fixed={I8: (1 / 256, -128), I16: (2**-15, 0)}),
    Op("QUANTIZE", (I8, I16)),
    Op("QUANTIZE", (I8,), out_type=I16),
    Op("ADD", (I8, I16), "AddOptions", second=True),
    Op("SUB", (I8, I16), "SubOptions", second=True),
    Op("MUL", (I8, I16), "MulOptions", second=True),
    Op("MEAN", (I8, I16), "ReducerOptions", lambda rng: {0: ("B", 1)}, reduce=True),
    Op("SUM", (I8, I16), "ReducerOptions", lambda rng: {0: ("B", 1)}, reduce=True),
    Op("PRELU", (I8,), second=True),
    Op("SQUARED_DIFFERENCE", (I8, I16), second=True, squares=True),
)


def _scale(rng: np.random.Generator, dtype: int) -> float:
    """A realistic scale: a float32 value, 1e-3..1 for int8, 1e-5..1e-2 for int16."""
    low, high = (-3.0, 0.0) if dtype == I8 else (-5.0, -2.0)
    return float(np.float32(10.0 ** rng.uniform(low, high)))


def _zp(rng: np.random.Generator, dtype: int, op: Op) -> int:
    if dtype == I16 and op.int16_zp0:
        return 0
    info = np.iinfo(NP_TYPES[dtype])
    # Not within 32 of the top, so that some inputs lie above the zero point (a RELU of inputs
    # all below it is a constant, which hides arithmetic).
    high = int(info.max) - 32
    return int(info.min) if op.zp_min else int(rng.integers(info.min, high, endpoint=True))


def every_value(dtype: int) -> np.ndarray:
    info = np.iinfo(NP_TYPES[dtype])
    return np.arange(info.min, info.max + 1, dtype=NP_TYPES[dtype])


def case(op: Op, dtype: int, config: int) -> Case:
    """The config-th seeded case of `op` on `dtype` inputs."""
    name = f"{op.name} {'int8' if dtype == I8 else 'int16'}"
    if op.out_type is not None:
        name += " to int16"
    rng = np.random.default_rng(zlib.crc32(f"{name} {config}".encode()))
    n = every_value(dtype).size
    shape = (n, 1) if op.reduce else (n,)
    x = T(shape, dtype, [_scale(rng, dtype)], [_zp(rng, dtype, op)])
    out_dtype = op.out_type or dtype
    ratio = float(10.0 ** rng.uniform(-0.5, 0.5))
    if op.out_scale is not None:
        out_scale = float(np.float32(op.out_scale(x.scale[0]) * ratio))
    elif out_dtype == dtype:
        out_scale = float(np.float32(x.scale[0] * ratio))
    else:
        out_scale = _scale(rng, out_dtype)
    out_q = (out_scale, _zp(rng, out_dtype, op))
    if op.out_fixed is not None:
        out_q = op.out_fixed[dtype]
    out = T((n,) if not op.reduce else (n, 1), out_dtype, [out_q[0]], [out_q[1]])
    inputs: list[T | None] = [x]
    if op.second:
        inputs.append(T(shape, dtype, [_scale(rng, dtype)], [_zp(rng, dtype, op)]))
    if op.squares and dtype == I8:
        larger = max(t.scale[0] for t in inputs if t is not None)
        out.scale = [float(np.float32(larger**2 * 256 * ratio))]
    if op.reduce:
        inputs.append(const_i32([1]))
    slots = op.slots(rng) if op.slots else {}

    def make_inputs(g: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
        arrays = [every_value(dtype).reshape(shape)]
        for t in ts[1:]:
            info = np.iinfo(NP_TYPES[t.dtype])
            arrays.append(g.integers(info.min, info.max, t.shape, endpoint=True).astype(info.dtype))
        return arrays

    return Case(
        f"{name} config {config}",
        op.name,
        inputs,
        [out],
        op.options,
        slots,
        make_inputs=make_inputs,
        seed=config,
    )


# ----------------------------------------------------------------------------- weighted and
# windowed operators: the fed first input holds every value of its type (shuffled, then
# random values where the shape is larger), weights and biases are seeded constants, and the
# output scale is set from the accumulators' spread so that outputs use the whole range.

ACTS = (0, 0, 1, 3)  # fused activations drawn: none (twice as often), RELU, RELU6
SAME, VALID = 0, 1


@dataclass
class Parts:
    """One weighted operator's case but its name: tensors, options, invocations."""

    inputs: list[T | None]
    outputs: list[T]
    options: str | None = None
    slots: dict[int, tuple[str, object]] = field(default_factory=dict)
    nslots: int = 8
    invokes: int = 1
    divisor: bool = False  # the second input never at its zero point (DIV)


@dataclass(frozen=True)
class Weighted:
    name: str  # the case's name before its type, e.g. "CONV_2D per-channel"
    types: tuple[int, ...]
    make: Callable[[np.random.Generator, int], Parts]


def _spread(dtype: int) -> float:
    """The standard deviation of a value spread evenly over the type's range."""
    info = np.iinfo(NP_TYPES[dtype])
    return (int(info.max) - int(info.min) + 1) / np.sqrt(12)


def _acc_out(rng: np.random.Generator, dtype: int, real_spread: float) -> T:
    """An output quantization that spans about three standard deviations of the result."""
    info = np.iinfo(NP_TYPES[dtype])
    scale = float(np.float32(3 * real_spread / int(info.max) * 10.0 ** rng.uniform(-0.5, 0.5)))
    zp = 0 if dtype == I16 else int(rng.integers(-64, 64))
    return T((), dtype, [scale], [zp])


def _weights(
    rng: np.random.Generator, shape: tuple[int, ...], channels: int, qdim: int
) -> tuple[T, np.ndarray]:
    """int8 weights, symmetric, one scale per channel (channels 1: per-tensor)."""
    scales = [float(np.float32(10.0 ** rng.uniform(-3, -1))) for _ in range(channels)]
    data = rng.integers(-127, 128, shape)
    return T(shape, I8, scales, [0] * channels, data, qdim if channels > 1 else 0), np.array(scales)


def _bias(rng: np.random.Generator, n: int, dtype: int, acc_spread: float) -> T:
    limit = min(acc_spread, 2**31 - 1)
    return T((n,), dtype, data=rng.normal(0, limit, n).clip(-limit, limit).astype(np.int64))


def _act(rng: np.random.Generator, out: T) -> int:
    """A fused activation; RELU6 only where 6 spans enough output steps to show."""
    act = int(rng.choice(ACTS))
    return 0 if act == 3 and 6 / out.scale[0] < 16 else act


def _shaped(t: T, shape: tuple[int, ...]) -> T:
    return T(shape, t.dtype, t.scale, t.zp)


def _window(size: int, filt: int, stride: int, padding: int) -> int:
    return -(-size // stride) if padding == SAME else (size - filt) // stride + 1


def _in(rng: np.random.Generator, dtype: int, shape: tuple[int, ...]) -> T:
    zp = 0 if dtype == I16 else int(rng.integers(-128, 128))
    return T(shape, dtype, [_scale(rng, dtype)], [zp])


def _conv(per_channel: bool, depthwise: bool) -> Callable[[np.random.Generator, int], Parts]:
    def make(rng: np.random.Generator, dtype: int) -> Parts:
        hw, cin = (8, 4) if dtype == I8 else ((128, 4) if depthwise else (64, 16))
        x = _in(rng, dtype, (1, hw, hw, cin))
        kh, kw = (int(k) for k in rng.integers(1, 4, 2))
        stride, padding = int(rng.integers(1, 3)), int(rng.integers(0, 2))
        mult = int(rng.integers(1, 3)) if depthwise else 1
        cout = cin * mult if depthwise else int(rng.integers(2, 7))
        shape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin)
        w, ws = _weights(rng, shape, cout if per_channel else 1, 3 if depthwise else 0)
        depth = kh * kw * (1 if depthwise else cin)
        acc = _spread(dtype) * _spread(I8) * np.sqrt(depth)
        bias_type = I32 if dtype == I8 else (I64 if depthwise or rng.random() < 0.5 else I32)
        b = _bias(rng, cout, bias_type, acc)
        oh, ow = _window(hw, kh, stride, padding), _window(hw, kw, stride, padding)
        out = _acc_out(rng, dtype, acc * x.scale[0] * float(np.mean(ws)))
        out = _shaped(out, (1, oh, ow, cout))
        act = _act(rng, out)
        if depthwise:
            slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("i", mult),
                     4: ("b", act)}  # fmt: skip
            return Parts([x, w, b], [out], "DepthwiseConv2DOptions", slots)
        slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("b", act)}
        return Parts([x, w, b], [out], "Conv2DOptions", slots)

    return make


def _fully_connected(per_channel: bool) -> Callable[[np.random.Generator, int], Parts]:
    def make(rng: np.random.Generator, dtype: int) -> Parts:
        depth = int(rng.choice((8, 16, 32)))
        rows = every_value(dtype).size // depth
        units = int(rng.integers(2, 9 if dtype == I8 else 5))
        x = _in(rng, dtype, (rows, depth))
        w, ws = _weights(rng, (units, depth), units if per_channel else 1, 0)
        acc = _spread(dtype) * _spread(I8) * np.sqrt(depth)
        b = _bias(rng, units, I32 if dtype == I8 or rng.random() < 0.5 else I64, acc)
        out = _shaped(_acc_out(rng, dtype, acc * x.scale[0] * float(np.mean(ws))), (rows, units))
        return Parts([x, w, b], [out], "FullyConnectedOptions", {0: ("b", _act(rng, out))})

    return make


def _pool(rng: np.random.Generator, dtype: int) -> Parts:
    """AVERAGE_POOL_2D or MAX_POOL_2D: TFLM needs the output quantized as the input."""
    hw = 16 if dtype == I8 else 256
    x = _in(rng, dtype, (1, hw, hw, 1))
    fh, fw = (int(k) for k in rng.integers(1, 5, 2))
    stride, padding = int(rng.integers(1, 4)), int(rng.integers(0, 2))
    shape = (1, _window(hw, fh, stride, padding), _window(hw, fw, stride, padding), 1)
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride), 3: ("i", fw),
             4: ("i", fh)}  # fmt: skip
    return Parts([x], [_shaped(x, shape)], "Pool2DOptions", slots)


def _batch_matmul(rng: np.random.Generator, dtype: int) -> Parts:
    depth = 16 if dtype == I8 else 256
    cols = int(rng.integers(2, 9 if dtype == I8 else 5))
    rows = every_value(dtype).size // depth
    x = _in(rng, dtype, (rows, depth))
    y = _in(rng, dtype, (depth, cols))
    y.zp = [y.zp[0] // 8]  # near 0: (y - zp) of mean 0 keeps the sums' mean in the range
    acc = _spread(dtype) ** 2 * np.sqrt(depth)
    out = _acc_out(rng, dtype, acc * x.scale[0] * y.scale[0])
    return Parts([x, y], [_shaped(out, (rows, cols))], "BatchMatMulOptions")


def _transpose_conv(rng: np.random.Generator, dtype: int) -> Parts:
    hw, cin = (8, 4) if dtype == I8 else (64, 16)
    x = _in(rng, dtype, (1, hw, hw, cin))
    k, stride, padding = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(0, 2))
    cout = int(rng.integers(2, 5))
    w, ws = _weights(rng, (cout, k, k, cin), cout, 0)
    o = hw * stride if padding == SAME else (hw - 1) * stride + k
    # Each output sums the kernel taps that reach it: about (k / stride)^2 of them.
    acc = _spread(dtype) * _spread(I8) * np.sqrt(cin * max(1.0, (k / stride) ** 2))
    b = _bias(rng, cout, I32 if dtype == I8 else I64, acc)
    out = _shaped(_acc_out(rng, dtype, acc * x.scale[0] * float(np.mean(ws))), (1, o, o, cout))
    slots = {0: ("B", padding), 1: ("i", stride), 2: ("i", stride)}
    return Parts([const_i32([1, o, o, cout]), w, x, b], [out], "TransposeConvOptions", slots, 5)


def _svdf(rng: np.random.Generator, dtype: int) -> Parts:
    """int8 SVDF with an int16 state, over three invocations (the state carries)."""
    batch, n_input, rank, n_memory = 16, 16, int(rng.integers(1, 3)), int(rng.integers(2, 9))
    n_filter = rank * int(rng.integers(2, 5))
    x = _in(rng, dtype, (batch, n_input))
    wf, (sf,) = _weights(rng, (n_filter, n_input), 1, 0)
    state_scale = float(np.float32(3 * x.scale[0] * sf * _spread(I8) ** 2 * np.sqrt(n_input)
                                   / 32767 * 10.0 ** rng.uniform(-0.5, 0.5)))  # fmt: skip
    st = float(np.float32(10.0 ** rng.uniform(-5, -3)))
    wt = T((n_filter, n_memory), I16, [st], [0], rng.integers(-32767, 32768, (n_filter, n_memory)))
    acc = _spread(I16) ** 2 * np.sqrt(n_memory * rank)
    b = _bias(rng, n_filter // rank, I32, acc)
    b.scale, b.zp = [float(np.float32(state_scale * st))], [0]
    state = T((batch, n_filter * n_memory), I16, [state_scale], [0], variable=True)
    out = _shaped(_acc_out(rng, I8, acc * state_scale * st), (batch, n_filter // rank))
    slots = {0: ("i", rank), 1: ("b", 1 if rng.random() < 0.25 else 0)}
    return Parts([x, wf, wt, b, state], [out], "SVDFOptions", slots, invokes=3)


def _lstm(rng: np.random.Generator, dtype: int) -> Parts:
    """int8 UNIDIRECTIONAL_SEQUENCE_LSTM, int16 cell state, 4 steps of a batch of 4: weight
    scales set so that the gates' pre-activations spread over about +-2."""
    steps, batch, n_in, n_cell = 4, 4, 16, int(rng.integers(4, 17))
    x = _in(rng, dtype, (steps, batch, n_in))
    h_scale = float(np.float32(10.0 ** rng.uniform(-2.5, -1.5)))
    h_zp = int(rng.integers(-64, 64))

    def gain(terms: int, real: float) -> float:
        return float(
            np.float32(2 / (_spread(I8) * real * np.sqrt(terms)) * 10.0 ** rng.uniform(-0.5, 0.5))
        )

    sw = [gain(n_in, _spread(I8) * x.scale[0]) for _ in range(4)]
    sr = [gain(n_cell, 0.5) for _ in range(4)]
    w = [T((n_cell, n_in), I8, [s], [0], rng.integers(-127, 128, (n_cell, n_in))) for s in sw]
    r = [T((n_cell, n_cell), I8, [s], [0], rng.integers(-127, 128, (n_cell, n_cell))) for s in sr]
    b = [
        T(
            (n_cell,),
            I32,
            [float(np.float32(x.scale[0] * s))],
            [0],
            rng.integers(-3000, 3000, n_cell),
        )
        for s in sw
    ]
    cell_scale = 2.0 ** -int(rng.integers(11, 15))
    state = [
        T((batch, n_cell), I8, [h_scale], [h_zp], variable=True),
        T((batch, n_cell), I16, [cell_scale], [0], variable=True),
    ]
    clip = float(np.float32(rng.uniform(0.5, 4))) if rng.random() < 0.3 else 0.0
    ins = [x, *w, *r, None, None, None, *b, None, None, *state, None, None, None, None]
    out = T((steps, batch, n_cell), I8, [h_scale], [h_zp])
    slots = {0: ("b", 4), 1: ("f", clip), 3: ("B", 1)}
    return Parts(ins, [out], "UnidirectionalSequenceLSTMOptions", slots)


def _fixed_out(
    options: str | None,
    out_q: dict[int, tuple[float, int]],
    beta: bool = False,
    out_type: int | None = None,
) -> Callable[[np.random.Generator, int], Parts]:
    """A row-wise operator whose output quantization TFLM fixes (SOFTMAX and the like)."""

    def make(rng: np.random.Generator, dtype: int) -> Parts:
        n = every_value(dtype).size
        row = 16 if dtype == I8 else 256
        x = _in(rng, dtype, (n // row, row))
        if dtype == I16:  # int16 softmax's table spans 10 (scaled input) below the row's max
            x.scale = [float(np.float32(10.0 ** rng.uniform(-4, -3.5)))]
        scale, zp = out_q[dtype]
        slots = {0: ("f", float(np.float32(rng.uniform(0.5, 2.0))))} if beta else {}
        return Parts([x], [T(x.shape, out_type or dtype, [scale], [zp])], options, slots)

    return make


def _dequantize(rng: np.random.Generator, dtype: int) -> Parts:
    x = _in(rng, dtype, (every_value(dtype).size,))
    if dtype == I16:
        x.zp = [int(rng.integers(-1000, 1000))]
    return Parts([x], [T(x.shape, F32)])


def _div(rng: np.random.Generator, dtype: int) -> Parts:
    """int8 DIV: the quotient's typical size is the scales' ratio (small divisors saturate)."""
    n = every_value(dtype).size
    x, y = _in(rng, dtype, (n,)), _in(rng, dtype, (n,))
    out = _acc_out(rng, dtype, x.scale[0] / y.scale[0])
    return Parts([x, y], [_shaped(out, (n,))], "DivOptions", divisor=True)


def _compare(rng: np.random.Generator, dtype: int) -> Parts:
    n = every_value(dtype).size
    x, y = _in(rng, dtype, (n,)), _in(rng, dtype, (n,))
    # Below 1: TFLM's comparisons turn each input's scale itself into a multiplier, and the
    # pip TFLM aborts the process on a scale of 1 or more (a check in QuantizeMultiplier).
    y.scale = [float(np.float32(min(x.scale[0] * 10.0 ** rng.uniform(-0.3, 0.3), 0.99)))]
    return Parts([x, y], [T((n,), BOOL)])


def _reduce(op: str) -> Callable[[np.random.Generator, int], Parts]:
    """MEAN, SUM or CUMSUM over a last axis of 2 to 12 values."""

    def make(rng: np.random.Generator, dtype: int) -> Parts:
        k = int(rng.integers(2, 13))
        rows = -(-every_value(dtype).size // k)
        x = _in(rng, dtype, (rows, k))
        if dtype == I16:
            x.zp = [0]
        gain = 1 / np.sqrt(k) if op == "MEAN" else np.sqrt(k)
        keep = int(rng.integers(0, 2))
        flags = {0: ("B", keep)}
        if op == "CUMSUM":
            shape: tuple[int, ...] = (rows, k)
            flags = {0: ("B", int(rng.integers(0, 2))), 1: ("B", int(rng.integers(0, 2)))}
        else:
            shape = (rows, 1) if keep else (rows,)
        out = _sum_out(rng, x, 1 if op == "MEAN" else k, gain, shape)
        options = "CumsumOptions" if op == "CUMSUM" else "ReducerOptions"
        return Parts([x, const_i32(1 if op == "CUMSUM" else [1])], [out], options, flags)

    return make


def _sum_out(
    rng: np.random.Generator, x: T, terms: float, gain: float, shape: tuple[int, ...]
) -> T:
    """The output of a sum of `terms` inputs like x, its spread `gain` times x's: the sum's
    mean is off zero by the input's zero point, so the output's zero point is put there."""
    mean = (-0.5 - x.zp[0]) * x.scale[0] * terms
    out = _shaped(_acc_out(rng, x.dtype, _spread(x.dtype) * x.scale[0] * gain + abs(mean)), shape)
    if x.dtype == I8:
        out.zp = [int(np.clip(-round(mean / out.scale[0]), -128, 127))]
    return out


def _mean_hw(rng: np.random.Generator, dtype: int) -> Parts:
    """MEAN over height and width of an image (TFLM's integer Mean has a path of its own)."""
    h, w = (int(k) for k in rng.integers(2, 10, 2))
    c = -(-every_value(dtype).size // (h * w))
    x = _in(rng, dtype, (1, h, w, c))
    if dtype == I16:
        x.zp = [0]
    keep = int(rng.integers(0, 2))
    out = _sum_out(rng, x, 1, 1 / np.sqrt(h * w), (1, 1, 1, c) if keep else (1, c))
    return Parts([x, const_i32([1, 2])], [out], "ReducerOptions", {0: ("B", keep)})


def _add_n(rng: np.random.Generator, dtype: int) -> Parts:
    x = _in(rng, dtype, (every_value(dtype).size,))
    out = _sum_out(rng, x, 3, np.sqrt(3), x.shape)
    return Parts([x, _shaped(x, x.shape), _shaped(x, x.shape)], [out])


WEIGHTED = (
    Weighted("CONV_2D per-channel", (I8, I16), _conv(True, False)),
    Weighted("CONV_2D per-tensor", (I8, I16), _conv(False, False)),
    Weighted("DEPTHWISE_CONV_2D per-channel", (I8, I16), _conv(True, True)),
    Weighted("DEPTHWISE_CONV_2D per-tensor", (I8, I16), _conv(False, True)),
    Weighted("FULLY_CONNECTED per-channel", (I8, I16), _fully_connected(True)),
    Weighted("FULLY_CONNECTED per-tensor", (I8, I16), _fully_connected(False)),
    Weighted("TRANSPOSE_CONV", (I8, I16), _transpose_conv),
    Weighted("AVERAGE_POOL_2D", (I8, I16), _pool),
    Weighted("MAX_POOL_2D", (I8, I16), _pool),
    Weighted("BATCH_MATMUL", (I8, I16), _batch_matmul),
    Weighted("SVDF", (I8,), _svdf),
    Weighted("UNIDIRECTIONAL_SEQUENCE_LSTM", (I8,), _lstm),
    Weighted(
        "SOFTMAX",
        (I8, I16),
        _fixed_out("SoftmaxOptions", {I8: (1 / 256, -128), I16: (2**-15, 0)}, beta=True),
    ),  # fmt: skip
    Weighted(
        "SOFTMAX to int16",
        (I8,),
        _fixed_out("SoftmaxOptions", {I8: (2**-16, -32768)}, beta=True, out_type=I16),
    ),
    Weighted("DIV", (I8,), _div),
    Weighted("LOG_SOFTMAX", (I8,), _fixed_out(None, {I8: (16 / 256, 127)})),
    Weighted("L2_NORMALIZATION", (I8,), _fixed_out(None, {I8: (1 / 128, 0)})),
    Weighted("DEQUANTIZE", (I8, I16), _dequantize),
    Weighted("LESS", (I8,), _compare),
    Weighted("MEAN over 2-12", (I8, I16), _reduce("MEAN")),
    Weighted("MEAN over height and width", (I8, I16), _mean_hw),
    Weighted("SUM over 2-12", (I8, I16), _reduce("SUM")),
    Weighted("CUMSUM", (I8,), _reduce("CUMSUM")),
    Weighted("ADD_N", (I8,), _add_n),
)


def weighted_case(op: Weighted, dtype: int, config: int) -> Case:
    """The config-th seeded case of a weighted or windowed operator on `dtype` inputs."""
    name = f"{op.name} {'int8' if dtype == I8 else 'int16'}"
    rng = np.random.default_rng(zlib.crc32(f"{name} {config}".encode()))
    p = op.make(rng, dtype)

    def make_inputs(g: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
        arrays = [_random(g, t) for t in ts]
        first = arrays[0].reshape(-1)
        values = g.permutation(every_value(dtype))
        assert first.size >= values.size, f"{name}: fed input smaller than the type's range"
        first[: values.size] = values
        if p.divisor:  # a divisor at its zero point is a division by zero: one step off it
            zp = ts[1].zp[0]
            arrays[1][arrays[1] == zp] = zp + 1 if zp < 127 else zp - 1
        return arrays

    return Case(
        f"{name} config {config}",
        op.name.split()[0],
        p.inputs,
        p.outputs,
        p.options,
        p.slots,
        p.nslots,
        make_inputs=make_inputs,
        seed=config,
        invokes=p.invokes,
    )


def _random(g: np.random.Generator, t: T) -> np.ndarray:
    info = np.iinfo(NP_TYPES[t.dtype])
    return g.integers(info.min, info.max, t.shape, endpoint=True).astype(info.dtype)


def cases(configs: range) -> list[Case]:
    return [case(op, t, k) for op in OPS for t in op.types for k in configs] + [
        weighted_case(op, t, k) for op in WEIGHTED for t in op.types for k in configs
    ]


def check_bits(case: Case, r: Result) -> None:
    """`check`, and float outputs (DEQUANTIZE's) bit for bit too, not within a tolerance."""
    check(case, r)
    for i, (got, want) in enumerate(zip(r.ours or [], r.tflm or [], strict=True)):
        if np.issubdtype(want.dtype, np.floating):
            diff = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
            assert diff.size == 0, f"{case} output {i}: {diff.size} floats differ in their bits"


# ----------------------------------------------------------------------------- crafted ties
# Scales whose scale product (or ratio) rounds to another multiplier in float than in double,
# found by a seeded search, on the table of every int8 input times every weight -127..127:
# some of its 65,280 sums lie on a rounding tie that the two multipliers break differently.
# TFLM's source forms these in float; the pip TFLM's outputs are those of double. Random
# configurations rarely tell the two apart on int8 outputs (a tie within 2^-24 is rare).
TIE_SCALES = (0.23177163302898407, 0.0046866275370121, 0.09487183392047882)
WEIGHT_ROW = np.arange(-127, 128)


def _table_inputs(g: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    first = every_value(I8).reshape(ts[0].shape)
    return [first] + [WEIGHT_ROW.astype(np.int8).reshape(t.shape) for t in ts[1:]]


def tie_cases() -> list[Case]:
    si, sw, so = TIE_SCALES
    n = WEIGHT_ROW.size
    fc = Case(
        "FULLY_CONNECTED int8 per-tensor product tie",
        "FULLY_CONNECTED",
        [T((256, 1), I8, [si], [0]), T((n, 1), I8, [sw], [0], WEIGHT_ROW)],
        [T((256, n), I8, [so], [0])],
        "FullyConnectedOptions",
        make_inputs=_table_inputs,
    )
    bmm = Case(
        "BATCH_MATMUL int8 product tie",
        "BATCH_MATMUL",
        [T((256, 1), I8, [si], [0]), T((1, n), I8, [sw], [0])],
        [T((256, n), I8, [so], [0])],
        "BatchMatMulOptions",
        make_inputs=_table_inputs,
    )
    # SVDF of rank 1, memory 1: input * feature / state is exactly 1 (powers of 2), so the
    # state holds the table and the time weights (1) pass it to the output requantization.
    si, sf, st, so = 2.0**-4, 2.0**-3, 2.0**-7, 6.35492688161321e-06
    tw = 1.712036282697227e-05
    svdf = Case(
        "SVDF int8 state * time / output tie",
        "SVDF",
        [
            T((256, 1), I8, [si], [0]),
            T((n, 1), I8, [sf], [0], WEIGHT_ROW),
            T((n, 1), I16, [tw], [0], np.ones(n)),
            T((n,), I32, [float(np.float32(st * tw))], [0], np.zeros(n)),
            T((256, n), I16, [st], [0], variable=True),
        ],
        [T((256, n), I8, [so], [0])],
        "SVDFOptions",
        {0: ("i", 1), 1: ("b", 0)},
        make_inputs=_table_inputs,
    )
    # HARD_SWISH's two ratios (hires input / output, hires input / (3/32768)) rounded to 16
    # bits: scales where float and double give other multipliers, and outputs that differ.
    swish = [
        Case(
            f"HARD_SWISH int8 ratio tie {k}",
            "HARD_SWISH",
            [T((256,), I8, [si], [zi])],
            [T((256,), I8, [so], [zo])],
            make_inputs=lambda g, ts: [every_value(I8)],
        )
        for k, (si, zi, so, zo) in enumerate(
            (
                (0.0012402001302689314, -66, 0.000953718030359596, -7),
                (0.019912391901016235, -63, 0.01512036845088005, -100),
            )
        )
    ]
    return [fc, bmm, svdf, *swish]
