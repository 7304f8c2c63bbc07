"""Requantization swept against the real TFLM: every input value of the type, random scales.

Each case is a one-operator model whose first input holds every int8 value (256) or every
int16 value (65,536), under seeded, realistic scales and zero points, so an error in how a
kernel forms or applies its multiplier (a ratio formed in float instead of double, a rounding
tie broken the other way) shows on the inputs where it matters. A second input, where the
operator has one, is random. `tests/runtime/test_requant_sweep.py` runs a few seeds in CI;
`tools/sweep_requant.py --configs N` runs many by hand.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from support.conformance import I8, I16, NP_TYPES, Case, T, const_i32


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
    Op("SQUARED_DIFFERENCE", (I8, I16), second=True),
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


def cases(configs: range) -> list[Case]:
    return [case(op, t, k) for op in OPS for t in op.types for k in configs]
