"""Conformance of the math operators (reductions, element-wise arithmetic, activations,
comparisons, ...) with the real TFLM: every case is a one-operator model run on the
runtime's ASan+UBSan build and on TFLM with the same inputs; integers must agree bit for bit,
floats within 1e-5. Cases vary what changes the arithmetic: types, broadcast shapes, axes,
keep_dims, fused activations, scales and zero points at the ends of the range.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.conformance import (
    BOOL,
    F32,
    I8,
    I16,
    I32,
    I64,
    U32,
    Case,
    T,
    check,
    const_i32,
    f32,
    q8,
    q16,
    random_tensor,
    run_cases,
)  # fmt: skip

ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 1, 2, 3


def reducer(op: str, x: T, axes: list[int], out: T, keep: bool, name: str) -> Case:
    return Case(f"{op} {name}", op, [x, const_i32(axes)], [out], "ReducerOptions",
                {0: ("B", int(keep))})  # fmt: skip


def mostly_true(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Bool inputs 90% true, so that ANDs over several values are not all false."""
    return [rng.random(t.shape) < 0.9 for t in ts]


def reduce_all() -> list[Case]:
    def case(
        name: str, shape: tuple[int, ...], axes: list[int], out: tuple[int, ...], keep: bool
    ) -> Case:
        c = reducer("REDUCE_ALL", T(shape, BOOL), axes, T(out, BOOL), keep, name)
        c.make_inputs = mostly_true if axes else None  # no axes: a copy of even odds
        return c

    return [
        case("axis 1", (3, 4, 5), [1], (3, 5), False),
        case("axes 0,2 keep_dims", (3, 4, 5), [0, 2], (1, 4, 1), True),
        case("axis -1 rank 4", (2, 3, 4, 6), [-1], (2, 3, 4), False),
        case("all axes", (2, 2, 3), [0, 1, 2], (1, 1, 1), True),
        case("duplicate axis", (4, 3, 5), [1, -2], (4, 5), False),
        case("no axes", (3, 4), [], (3, 4), True),
        Case("REDUCE_ALL float refused", "REDUCE_ALL", [f32((2, 3)), const_i32([1])],
             [f32((2,))], "ReducerOptions",
             refuse=("MA_ERR_UNSUPPORTED", ["REDUCE_ALL", "FLOAT32", "bool"])),
    ]  # fmt: skip


def reductions() -> list[Case]:
    cases = []
    for op in ("MEAN", "SUM"):
        k = 1.0 if op == "MEAN" else 6.0  # output scale factor that keeps sums in range
        cases += [
            reducer(op, q8((1, 5, 7, 8), 0.05, -3), [1, 2], q8((1, 1, 1, 8), 0.02 if op == "MEAN"
                    else 0.9, 5), True, "int8 axes 1,2 keep_dims"),
            reducer(op, q8((1, 5, 7, 8), 0.05, -3), [2, 1], q8((1, 8), 0.05, -3), False,
                    "int8 axes 2,1 same quantization"),
            reducer(op, q8((2, 3, 4, 5), 0.1, 127), [-1], q8((2, 3, 4, 1), 0.15 * k, 127), True,
                    "int8 axis -1 zero points at the ends"),
            reducer(op, q8((2, 3, 4, 5), 0.1, -128), [0, 2], q8((3, 5), 0.11 * k, -128), False,
                    "int8 axes 0,2 zero points at the ends"),
            reducer(op, q8((1, 25, 41, 3), 0.02, 4), [1, 2], q8((1, 1, 1, 3), 0.5, 1), True,
                    "int8 1025 elements coarse output"),
            reducer(op, q8((3, 6), 0.5, 0), [1, -1], q8((3,), 0.004, 0), False,
                    "int8 duplicate axis fine output"),
            reducer(op, q8((2, 3), 0.05, 2), [], q8((2, 3), 0.05, 2), True, "int8 no axes"),
            reducer(op, q16((2, 6, 5), 0.001), [1], q16((2, 5), 0.0007 if op == "MEAN"
                    else 0.004), False, "int16"),
            reducer(op, f32((2, 5, 7, 3)), [1, 2], f32((2, 1, 1, 3)), True,
                    "float axes 1,2 keep_dims"),
            reducer(op, f32((2, 5, 7, 3)), [3, 0], f32((5, 7)), False, "float axes 3,0"),
            reducer(op, f32((4, 3, 2)), [0, 1, 2], f32((1, 1, 1)), True, "float all axes"),
        ]  # fmt: skip
    for op in ("REDUCE_MAX", "REDUCE_MIN"):
        cases += [
            reducer(op, q8((2, 5, 7, 3), 0.05, -3), [1, 2], q8((2, 3), 0.05, -3), False,
                    "int8 axes 1,2"),
            reducer(op, q8((4, 9), 0.1, 127), [-1], q8((4, 1), 0.1, 127), True, "int8 axis -1"),
            reducer(op, f32((3, 4, 5)), [0, 2], f32((1, 4, 1)), True, "float keep_dims"),
            reducer(op, f32((3, 4, 5)), [1], f32((3, 5)), False, "float axis 1"),
        ]  # fmt: skip
    cases += reduce_all()
    cases += [
        Case("MEAN int32 refused", "MEAN", [T((2, 3), I32), const_i32([1])], [T((2,), I32)],
             "ReducerOptions", refuse=("MA_ERR_UNSUPPORTED", ["MEAN", "INT32"])),
        Case("REDUCE_MAX int8 rescale refused", "REDUCE_MAX", [q8((2, 3), 0.1, 0),
             const_i32([1])], [q8((2,), 0.2, 0)], "ReducerOptions",
             refuse=("MA_ERR_UNSUPPORTED", ["REDUCE_MAX", "scale"])),
    ]  # fmt: skip
    return cases


def binary(op: str, a: T, b: T, out: T, name: str, act: int = 0) -> Case:
    opts = {
        "SUB": "SubOptions",
        "ADD": "AddOptions",
        "MUL": "MulOptions",
        "DIV": "DivOptions",
        "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
        "MAXIMUM": "MaximumMinimumOptions",
        "MINIMUM": "MaximumMinimumOptions",
    }
    slots = {0: ("b", act)} if act else {}
    return Case(f"{op} {name}", op, [a, b], [out], opts[op], slots)


def nonzero_divisors(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    a = rng.integers(-(2**31), 2**31, ts[0].shape, dtype=np.int64).astype(np.int32)
    b = rng.integers(1, 60, ts[1].shape) * rng.choice([-1, 1], ts[1].shape)
    return [a, b.astype(np.int32)]


def nonzero_q8_divisors(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """int8 dividend over the whole range; divisor never at its zero point."""
    lo = -128 if ts[0].low is None else int(ts[0].low)
    hi = 127 if ts[0].high is None else int(ts[0].high)
    a = rng.integers(lo, hi + 1, ts[0].shape).astype(np.int8)
    zp = ts[1].zp[0]
    b = rng.integers(-128, 127, ts[1].shape)
    b = np.where(b >= zp, b + 1, b).astype(np.int8)
    return [a, b]


def arithmetic() -> list[Case]:
    cases = []
    for op in ("ADD", "SUB"):
        cases += [
            binary(op, q8((2, 8, 5), 0.05, 2), q8((2, 8, 5), 0.03, -3), q8((2, 8, 5), 0.06, 1),
                   "int8 same shape"),
            binary(op, q8((2, 1, 3), 0.05, 127), q8((1, 4, 1), 0.03, -128),
                   q8((2, 4, 3), 0.1, 127 if op == "SUB" else 0),
                   "int8 broadcast zero points at the ends"),
            binary(op, q8((3, 4), 0.02, 0), q8((4,), 0.08, 10), q8((3, 4), 0.05, -20),
                   "int8 RELU6", ACT_RELU6),
            binary(op, f32((3, 1, 4)), f32((5, 1)), f32((3, 5, 4)), "float broadcast RELU",
                   ACT_RELU),
            binary(op, T((2, 6), I32), T((6,), I32), T((2, 6), I32), "int32 broadcast"),
        ]  # fmt: skip
    cases += [
        binary("SUB", q16((4, 7), 0.001), q16((4, 7), 0.0004), q16((4, 7), 0.002),
               "int16 same shape"),
        binary("ADD", q16((4, 7), 0.001), q16((4, 7), 0.0004), q16((4, 7), 0.002),
               "int16 same shape"),
        binary("ADD", q16((3, 1), 0.001, 5), q16((7,), 0.003, -9), q16((3, 7), 0.0025, 3),
               "int16 broadcast zero points RELU", ACT_RELU),
        binary("MUL", q16((4, 7), 0.01), q16((7,), 0.02), q16((4, 7), 0.005), "int16 broadcast"),
        binary("MUL", q16((4, 7), 0.01, 3), q16((4, 7), 0.02), q16((4, 7), 0.005),
               "int16 zero point refused"),
        binary("SUB", q16((4, 1), 0.001), q16((7,), 0.003), q16((4, 7), 0.0025),
               "int16 broadcast RELU_N1_TO_1", ACT_RELU_N1_TO_1),
        binary("MUL", q8((2, 8, 5), 0.05, 2), q8((2, 8, 5), 0.03, -3), q8((2, 8, 5), 0.06, 1),
               "int8 same shape"),
        binary("MUL", T((2, 3), I32), T((1, 3), I32, low=-40000, high=40000), T((2, 3), I32),
               "int32 broadcast"),
        binary("SQUARED_DIFFERENCE", q8((3, 9), 0.05, 4), q8((3, 9), 0.07, -8),
               q8((3, 9), 0.2, -128), "int8 same shape"),
        binary("SQUARED_DIFFERENCE", q8((3, 1, 4), 0.02, -128), q8((5, 1), 0.03, 127),
               q8((3, 5, 4), 0.05, -100), "int8 broadcast zero points at the ends"),
        binary("SQUARED_DIFFERENCE", q16((3, 9), 0.001), q16((3, 9), 0.002),
               q16((3, 9), 0.01), "int16"),
        binary("SQUARED_DIFFERENCE", f32((2, 3, 4)), f32((4,)), f32((2, 3, 4)),
               "float broadcast"),
        binary("SQUARED_DIFFERENCE", T((5,), I32, low=-1000, high=1000),
               T((5,), I32, low=-1000, high=1000), T((5,), I32), "int32"),
        binary("DIV", f32((3, 4)), f32((4,), low=0.5, high=2.0), f32((3, 4)), "float broadcast"),
        binary("DIV", f32((6,)), f32((6,), low=0.5, high=2.0), f32((6,)), "float RELU6",
               ACT_RELU6),
        Case("DIV int32 broadcast", "DIV", [T((3, 8), I32), T((8,), I32)], [T((3, 8), I32)],
             "DivOptions", make_inputs=nonzero_divisors),
        Case("DIV int32 RELU", "DIV", [T((16,), I32), T((16,), I32)], [T((16,), I32)],
             "DivOptions", {0: ("b", ACT_RELU)}, make_inputs=nonzero_divisors),
    ]  # fmt: skip
    for op in ("MAXIMUM", "MINIMUM"):
        cases += [
            binary(op, f32((2, 3, 4)), f32((3, 1)), f32((2, 3, 4)), "float broadcast"),
            binary(op, q8((4, 5), 0.05, 3), q8((4, 5), 0.05, 3), q8((4, 5), 0.05, 3), "int8"),
            binary(op, q16((4, 5), 0.05), q16((5,), 0.05), q16((4, 5), 0.05), "int16"),
            binary(op, T((4, 5), I32), T((1, 5), I32), T((4, 5), I32), "int32"),
            binary(op, T((7,), I64), T((7,), I64), T((7,), I64), "int64"),
        ]  # fmt: skip
    cases += [
        binary("SUB", T((2, 2), BOOL), T((2, 2), BOOL), T((2, 2), BOOL), "bool refused"),
        binary("DIV", T((4,), I16, [0.1]), T((4,), I16, [0.1]), T((4,), I16, [0.1]),
               "int16 refused"),
        Case("DIV int8", "DIV", [q8((40,), 0.05, 3), q8((40,), 0.02, -5)], [q8((40,), 0.1, 2)],
             "DivOptions", make_inputs=nonzero_q8_divisors),
        Case("DIV int8 small dividends", "DIV", [q8((60,), 0.01, 0, low=-6, high=6),
             q8((60,), 0.05, 0)], [q8((60,), 0.01, -3)], "DivOptions",
             make_inputs=nonzero_q8_divisors),
        Case("DIV int8 broadcast RELU", "DIV", [q8((4, 10), 0.1, -128), q8((10,), 0.05, 0)],
             [q8((4, 10), 0.3, -128)], "DivOptions", {0: ("b", ACT_RELU)},
             make_inputs=nonzero_q8_divisors),
    ]  # fmt: skip
    next(c for c in cases if c.name == "MUL int16 zero point refused").refuse = (
        "MA_ERR_UNSUPPORTED",
        ["MUL", "int16", "zero point"],
    )
    cases[-5].refuse = ("MA_ERR_UNSUPPORTED", ["SUB", "BOOL"])
    cases[-4].refuse = ("MA_ERR_UNSUPPORTED", ["DIV", "INT16"])
    return cases


def unary(op: str, x: T, out: T, name: str, options: str | None = None, **kw) -> Case:
    return Case(f"{op} {name}", op, [x], [out], options, **kw)


def halves(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Values k/2 (ties for ROUND) and random ones."""
    n = int(np.prod(ts[0].shape))
    v = np.concatenate([np.arange(-n // 4, n - n // 4) / 2.0])[:n]
    v[n // 2 :] = rng.uniform(-5, 5, n - n // 2)
    return [v.astype(np.float32).reshape(ts[0].shape)]


def activations() -> list[Case]:
    return [
        unary("TANH", f32((4, 50), low=-6, high=6), f32((4, 50)), "float"),
        unary("TANH", q8((4, 64), 0.05, 3), q8((4, 64), 1 / 128, 0), "int8"),
        unary("TANH", q8((4, 64), 0.01, -128), q8((4, 64), 1 / 128, 0), "int8 fine scale"),
        unary("TANH", q8((4, 64), 0.3, 127), q8((4, 64), 1 / 128, 0), "int8 coarse scale"),
        unary("TANH", q16((4, 64), 2**-12), q16((4, 64), 2**-15), "int16 power-of-two scale"),
        unary("TANH", q16((4, 64), 2**-11), q16((4, 64), 2**-15), "int16 scale 2^-11"),
        unary("TANH", q16((4, 64), 0.0003), q16((4, 64), 2**-15), "int16 general scale"),
        unary("LOGISTIC", q16((4, 64), 2**-12), q16((4, 64), 2**-15), "int16 power-of-two"),
        unary("LOGISTIC", q16((4, 64), 0.0007), q16((4, 64), 2**-15), "int16 general scale"),
        unary("HARD_SWISH", f32((3, 40), low=-5, high=5), f32((3, 40)), "float"),
        unary("HARD_SWISH", q8((3, 40), 0.05, -10), q8((3, 40), 0.03, -30), "int8"),
        unary("HARD_SWISH", q8((3, 40), 0.02, 127), q8((3, 40), 0.005, 127),
              "int8 zero points at the ends"),
        unary("HARD_SWISH", q8((3, 40), 0.1, 0), q8((3, 40), 0.09, -60), "int8 coarse"),
        unary("RELU6", f32((3, 40), low=-3, high=9), f32((3, 40)), "float"),
        unary("RELU6", q8((3, 40), 0.05, -20), q8((3, 40), 0.05, -20), "int8"),
        unary("RELU6", q16((3, 40), 0.001), q16((3, 40), 0.001), "int16"),
        unary("RELU", q8((2, 40), 0.07, 5), q8((2, 40), 0.04, -128), "int8 rescale"),
        unary("RELU", q16((2, 40), 0.001), q16((2, 40), 0.0004), "int16 rescale"),
        unary("LEAKY_RELU", q8((2, 40), 0.07, 5), q8((2, 40), 0.05, -20), "int8",
              "LeakyReluOptions", slots={0: ("f", 0.2)}),
        unary("LEAKY_RELU", q8((2, 40), 0.07, 5), q8((2, 40), 0.05, -20), "int8 negative alpha",
              "LeakyReluOptions", slots={0: ("f", -0.3)}),
        unary("LEAKY_RELU", q16((2, 40), 0.001, 7), q16((2, 40), 0.0007, -3), "int16",
              "LeakyReluOptions", slots={0: ("f", 0.1)}),
        unary("LEAKY_RELU", f32((2, 40)), f32((2, 40)), "float negative alpha",
              "LeakyReluOptions", slots={0: ("f", -0.5)}),
        unary("ELU", f32((3, 40)), f32((3, 40)), "float"),
        unary("ELU", q8((3, 40), 0.05, 10), q8((3, 40), 0.04, -80), "int8"),
        unary("TANH", T((3,), I32), T((3,), I32), "int32 refused",
              refuse=("MA_ERR_UNSUPPORTED", ["TANH", "INT32"])),
        unary("HARD_SWISH", q16((3,), 0.01), q16((3,), 0.01), "int16 refused",
              refuse=("MA_ERR_UNSUPPORTED", ["HARD_SWISH", "INT16"])),
        # TFLite's input radius shifts by the scale's exponent, negative below 2^-28: the
        # fuzzer (UBSan on the kernels) once stopped on the radius overflowing int.
        unary("TANH", q8((2, 8), 2**-29, 0), q8((2, 8), 1 / 128, 0),
              "int8 input scale 2^-29 refused",
              refuse=("MA_ERR_UNSUPPORTED", ["TANH", "input scale", "out of range"])),
        unary("LOGISTIC", q8((2, 8), 1e-12, 5), q8((2, 8), 1 / 256, -128),
              "int8 input scale 1e-12 refused",
              refuse=("MA_ERR_UNSUPPORTED", ["LOGISTIC", "input scale", "out of range"])),
    ]  # fmt: skip


def elementwise_math() -> list[Case]:
    cases = [
        unary("ABS", f32((3, 20)), f32((3, 20)), "float"),
        unary("ABS", q8((3, 20), 0.05, -3), q8((3, 20), 0.05, -3), "int8 same scale"),
        unary("ABS", q8((3, 20), 0.05, 127), q8((3, 20), 0.03, -128), "int8 rescale"),
        unary("ABS", q16((3, 20), 0.001), q16((3, 20), 0.002), "int16 rescale"),
        unary("ABS", T((3, 20), I16), T((3, 20), I16), "int16 unquantized"),
        unary("RSQRT", f32((3, 20), low=0.01, high=9), f32((3, 20)), "float"),
        unary("RSQRT", q8((3, 40), 0.05, -128, low=-128), q8((3, 40), 0.02, -128), "int8"),
        unary("RSQRT", q8((3, 40), 0.001, 10, low=10), q8((3, 40), 0.5, -100), "int8 fine input"),
        unary("SQRT", f32((3, 20), low=0, high=9), f32((3, 20)), "float"),
        unary("EXP", f32((3, 20)), f32((3, 20)), "float"),
        unary("LOG", f32((3, 20), low=0.01, high=20), f32((3, 20)), "float"),
        unary("NEG", f32((3, 20)), f32((3, 20)), "float"),
        unary("SIN", f32((3, 20), low=-7, high=7), f32((3, 20)), "float"),
        unary("COS", f32((3, 20), low=-7, high=7), f32((3, 20)), "float"),
        unary("SQUARE", f32((3, 20)), f32((3, 20)), "float"),
        unary("FLOOR", f32((40,)), f32((40,)), "float", make_inputs=halves),
        unary("CEIL", f32((40,)), f32((40,)), "float", make_inputs=halves),
        unary("ROUND", f32((40,)), f32((40,)), "float half to even", make_inputs=halves),
        unary("LOGICAL_NOT", T((4, 5), BOOL), T((4, 5), BOOL), "bool"),
        unary("EXP", q8((3,), 0.1, 0), q8((3,), 0.1, 0), "int8 refused",
              refuse=("MA_ERR_UNSUPPORTED", ["EXP", "INT8"])),
        unary("RSQRT", q16((3,), 0.1), q16((3,), 0.1), "int16 refused",
              refuse=("MA_ERR_UNSUPPORTED", ["RSQRT", "INT16"])),
    ]  # fmt: skip
    return cases


def few_values(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Values from a small set, so that equal pairs occur."""
    out = []
    for t in ts:
        v = rng.integers(-2, 3, t.shape)
        out.append((v * 0.5).astype(np.float32) if t.dtype == F32 else (v * 2).astype(np.int8))
    return out


def comparisons() -> list[Case]:
    cases = []
    for op in ("LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL"):
        opts = "".join(w.capitalize() for w in op.split("_")) + "Options"
        small = {"low": -3, "high": 3}
        cases += [
            Case(f"{op} float broadcast", op, [f32((8, 4)), f32((4,))], [T((8, 4), BOOL)], opts,
                 make_inputs=few_values),
            Case(f"{op} int8 scales 0.1 and 0.2", op, [q8((60,), 0.1, 0), q8((60,), 0.2, 0)],
                 [T((60,), BOOL)], opts, make_inputs=few_values),
            Case(f"{op} int32 broadcast", op, [T((4, 3), I32, **small), T((1, 3), I32, **small)],
                 [T((4, 3), BOOL)], opts),
            Case(f"{op} int64", op, [T((9,), I64, **small), T((9,), I64, **small)],
                 [T((9,), BOOL)], opts),
        ]  # fmt: skip
        if op not in ("EQUAL", "NOT_EQUAL"):  # (different scales: equal pairs are rare)
            cases.append(Case(f"{op} int8 rescaled", op, [q8((60,), 0.05, 2),
                              q8((60,), 0.07, -1)], [T((60,), BOOL)], opts))  # fmt: skip
        else:
            cases.append(Case(f"{op} bool", op, [T((8,), BOOL), T((8,), BOOL)],
                              [T((8,), BOOL)], opts))  # fmt: skip
    return cases


def extreme_floats(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Floats beyond every integer type's range, NaN, infinities, halves and small values."""
    values = [1e10, -1e10, 300.7, -300.7, 127.9, -128.9, 2.5, -2.5, np.nan, np.inf, -np.inf,
              7e4, -1.5, 0.0, 3e9, -3e9]  # fmt: skip
    return [np.array(values, np.float32)]


def half_zeros(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Random values of the input's type, about half of them 0 (casts to bool)."""
    x = random_tensor(rng, ts[0])
    return [np.where(rng.random(x.shape) < 0.5, np.zeros_like(x), x)]


def casts() -> list[Case]:
    def cast(a: T, b: T, name: str, **kw) -> Case:
        return Case(f"CAST {name}", "CAST", [a], [b], **kw)

    names = {I8: "int8", I16: "int16", I32: "int32", U32: "uint32", F32: "float32"}

    return [
        cast(f32((40,), low=-300, high=300), T((40,), I32), "float to int32 truncates"),
        cast(f32((40,), low=-100, high=100), T((40,), I8), "float to int8"),
        cast(f32((40,), low=-3e4, high=3e4), T((40,), I16), "float to int16"),
        cast(f32((40,), low=0, high=4e9), T((40,), U32), "float to uint32"),
        cast(T((40,), I32), f32((40,)), "int32 to float"),
        cast(T((40,), I32), T((40,), I8), "int32 to int8 wraps"),
        cast(T((40,), I32), T((40,), U32), "int32 to uint32"),
        cast(T((40,), U32), T((40,), I32), "uint32 to int32"),
        cast(T((40,), I16), T((40,), I32), "int16 to int32"),
        cast(T((40,), I8), T((40,), I16), "int8 to int16"),
        cast(T((40,), BOOL), f32((40,)), "bool to float"),
        cast(T((40,), BOOL), T((40,), I32), "bool to int32"),
        *[cast(f32((16,)), T((16,), t), f"float to {names[t]} saturates, NaN to 0",
               make_inputs=extreme_floats) for t in (I8, I16, I32, U32)],
        *[cast(T((40,), t) if t != F32 else f32((40,)), T((40,), BOOL), f"{names[t]} to bool",
               make_inputs=half_zeros)
          for t in (I8, I16, I32, U32, F32)],
        cast(f32((16,)), T((16,), BOOL), "float to bool, NaN true", make_inputs=extreme_floats),
        cast(T((4,), I64), T((4,), I32), "int64 refused",
             refuse=("MA_ERR_UNSUPPORTED", ["CAST", "INT64"])),
    ]  # fmt: skip


def distinct(rng: np.random.Generator, ts: list[T]) -> list[np.ndarray]:
    """Float inputs without ties (ARG_MAX/ARG_MIN pick the first of equal values)."""
    return [rng.permutation(np.prod(t.shape)).reshape(t.shape).astype(np.float32) for t in ts]


def others() -> list[Case]:
    b = T((4, 5), BOOL)
    return [
        Case("LOGICAL_AND same shape", "LOGICAL_AND", [b, T((4, 5), BOOL)], [T((4, 5), BOOL)],
             "LogicalAndOptions"),
        Case("LOGICAL_AND broadcast", "LOGICAL_AND", [T((3, 1), BOOL), T((1, 6), BOOL)],
             [T((3, 6), BOOL)], "LogicalAndOptions"),
        Case("LOGICAL_OR broadcast", "LOGICAL_OR", [T((2, 3, 1), BOOL), T((4,), BOOL)],
             [T((2, 3, 4), BOOL)], "LogicalOrOptions"),
        Case("SELECT_V2 float same shape", "SELECT_V2", [T((3, 4), BOOL), f32((3, 4)),
             f32((3, 4))], [f32((3, 4))], "SelectV2Options"),
        Case("SELECT_V2 int8 broadcast", "SELECT_V2", [T((3, 1), BOOL), q8((1, 5), 0.1, 2),
             q8((3, 5), 0.1, 2)], [q8((3, 5), 0.1, 2)], "SelectV2Options"),
        Case("SELECT_V2 int16 scalar condition", "SELECT_V2", [T((1,), BOOL, data=[True]),
             q16((2, 3), 0.1), q16((2, 3), 0.1)], [q16((2, 3), 0.1)], "SelectV2Options"),
        Case("ARG_MAX float axis 1", "ARG_MAX", [f32((3, 7, 2)), const_i32([1])],
             [T((3, 2), I32)], "ArgMaxOptions", {0: ("b", I32)}, make_inputs=distinct),
        Case("ARG_MAX int8 axis -1", "ARG_MAX", [q8((5, 9), 0.1, 0), const_i32([-1])],
             [T((5,), I32)], "ArgMaxOptions", {0: ("b", I32)}),
        Case("ARG_MIN float axis 0", "ARG_MIN", [f32((6, 4)), const_i32([0])], [T((4,), I32)],
             "ArgMinOptions", {0: ("b", I32)}, make_inputs=distinct),
        Case("ARG_MIN int8 axis 2", "ARG_MIN", [q8((2, 3, 8), 0.1, 0), const_i32([2])],
             [T((2, 3), I32)], "ArgMinOptions", {0: ("b", I32)}),
        Case("CUMSUM float axis 1", "CUMSUM", [f32((3, 6, 2)), const_i32(1)], [f32((3, 6, 2))],
             "CumsumOptions"),
        Case("CUMSUM float exclusive reverse", "CUMSUM", [f32((4, 5)), const_i32(-1)],
             [f32((4, 5))], "CumsumOptions", {0: ("B", 1), 1: ("B", 1)}),
        Case("CUMSUM int8 axis 0", "CUMSUM", [q8((6, 4), 0.05, 0), const_i32(0)],
             [q8((6, 4), 0.2, 0)], "CumsumOptions"),
        Case("CUMSUM int8 zero point reverse", "CUMSUM", [q8((3, 8), 0.02, -60),
             const_i32(1)], [q8((3, 8), 0.1, 20)], "CumsumOptions", {1: ("B", 1)}),
        Case("CUMSUM int8 exclusive", "CUMSUM", [q8((3, 8), 0.02, 10), const_i32(1)],
             [q8((3, 8), 0.1, -5)], "CumsumOptions", {0: ("B", 1)}),
        Case("ADD_N float 3 inputs", "ADD_N", [f32((2, 5)), f32((2, 5)), f32((2, 5))],
             [f32((2, 5))], "AddNOptions"),
        Case("ADD_N int8 4 inputs", "ADD_N", [q8((3, 6), 0.05, -7) for _ in range(4)],
             [q8((3, 6), 0.2, 3)], "AddNOptions"),
        Case("ADD_N int8 mixed quantization refused", "ADD_N", [q8((4,), 0.05, 0),
             q8((4,), 0.06, 0)], [q8((4,), 0.1, 0)], "AddNOptions",
             refuse=("MA_ERR_UNSUPPORTED", ["ADD_N", "quantization"])),
        Case("L2_NORMALIZATION float", "L2_NORMALIZATION", [f32((3, 10))], [f32((3, 10))],
             "L2NormOptions"),
        Case("L2_NORMALIZATION int8", "L2_NORMALIZATION", [q8((2, 3, 16), 0.05, 3)],
             [q8((2, 3, 16), 1 / 128, 0)], "L2NormOptions"),
        Case("L2_NORMALIZATION int8 depth 1", "L2_NORMALIZATION", [q8((8, 1), 0.05, -7)],
             [q8((8, 1), 1 / 128, 0)], "L2NormOptions"),
        Case("LOG_SOFTMAX float", "LOG_SOFTMAX", [f32((3, 12), low=-10, high=10)],
             [f32((3, 12))], "LogSoftmaxOptions"),
        *log_softmax_int8(),
        Case("FLOOR_DIV float broadcast", "FLOOR_DIV", [f32((3, 4), low=-20, high=20),
             f32((4,), low=0.5, high=3)], [f32((3, 4))], "FloorDivOptions"),
        Case("FLOOR_MOD float", "FLOOR_MOD", [f32((12,), low=-20, high=20),
             T((12,), F32, data=[3, -3, 2.5, -2.5] * 3)], [f32((12,))], "FloorModOptions"),
        Case("PRELU float broadcast", "PRELU", [f32((2, 3, 4)), f32((4,), low=0, high=0.5)],
             [f32((2, 3, 4))]),
        Case("PRELU int8 per-channel alpha", "PRELU", [q8((2, 3, 4), 0.05, 3),
             q8((1, 1, 4), 0.002, -10)], [q8((2, 3, 4), 0.04, -20)]),
        Case("PRELU int8 same shape", "PRELU", [q8((20,), 0.1, 100), q8((20,), 0.01, 0)],
             [q8((20,), 0.05, 0)]),
    ]  # fmt: skip


def log_softmax_int8() -> list[Case]:
    """The input scale sets the Q5.26 multiplier, diff_min and the reverse scaling; the row
    length sets the sum of exponentials (and so its log)."""

    def case(name: str, shape: tuple[int, ...], scale: float, zp: int) -> Case:
        return Case(f"LOG_SOFTMAX int8 {name}", "LOG_SOFTMAX", [q8(shape, scale, zp)],
                    [q8(shape, 16 / 256, 127)], "LogSoftmaxOptions")  # fmt: skip

    return [
        case("scale 0.1", (2, 5), 0.1, 0),
        case("zero point -128", (3, 40), 0.05, -128),
        case("zero point 127 rank 4", (1, 2, 3, 8), 0.2, 127),
        case("coarse scale", (4, 16), 1.0, 3),
        case("scale 20 (left shift 31)", (3, 7), 20.0, 0),
        case("fine scale", (2, 30), 0.001, -5),
        case("depth 2", (6, 2), 0.1, 0),
        case("depth 300", (2, 300), 0.03, 10),
        case("scale 2^-9", (2, 9), 2.0**-9, 0),
        Case("LOG_SOFTMAX int8 output quantization refused", "LOG_SOFTMAX",
             [q8((2, 5), 0.1, 0)], [q8((2, 5), 1 / 256, -128)], "LogSoftmaxOptions",
             refuse=("MA_ERR_UNSUPPORTED", ["LOG_SOFTMAX", "16/256", "127"])),
    ]  # fmt: skip


CASES = [
    *casts(), *reductions(), *others(), *arithmetic(), *activations(), *elementwise_math(),
    *comparisons(),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_math"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])
