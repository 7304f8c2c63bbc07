"""Conformance of the shape and data-movement operators (slices, splits, packs, squeeze,
broadcast, space/depth/batch moves, mirror padding, GATHER_ND), BATCH_MATMUL, TRANSPOSE_CONV
and RESIZE_BILINEAR with the real TFLM: every case is a one-operator model run on the
runtime's ASan+UBSan build and on TFLM with the same inputs; integers must agree bit for bit,
floats within 1e-5. Cases vary what changes the result: types, strides (negative too),
begin/end/shrink masks, axes, padding SAME/VALID, per-channel scales, zero points at the ends
of the range, broadcast shapes, adj_x/adj_y, align_corners/half_pixel_centers. Where TFLM
computes something TensorFlow did not mean (ignored masks, out-of-range indices), the runtime
refuses the model with a message saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from conformance import (  # noqa: E402
    BOOL,
    F32,
    I8,
    I16,
    I32,
    I64,
    Case,
    T,
    assert_same,
    check,
    const_i32,
    f32,
    q8,
    q16,
    run_cases,
)  # fmt: skip

RNG = np.random.default_rng(2024)
QX = (0.05, 3)  # a generic int8 quantization for data-movement cases


def typed(shape: tuple[int, ...], dtype: int) -> T:
    """A non-constant tensor of any type (int8 and int16 quantized, as converters make them)."""
    if dtype == I8:
        return q8(shape, *QX)
    if dtype == I16:
        return q16(shape, 0.001)
    return T(shape, dtype)


def const(values: object, dtype: int = I32) -> T:
    arr = np.asarray(values)
    return T(arr.shape, dtype, data=arr)


NP = {I32: np.int32, I64: np.int64}
NAMES = {F32: "float32", I8: "int8", I16: "int16", I32: "int32", I64: "int64", BOOL: "bool"}


# ----------------------------------------------------------------------------- slices


def strided_slice(name: str, dtype: int, shape: tuple[int, ...], begin: list[int],
                  end: list[int], strides: list[int], out: tuple[int, ...],
                  masks: tuple[int, ...] = (0, 0, 0, 0, 0),
                  refuse: tuple[str, list[str]] | None = None) -> Case:  # fmt: skip
    slots = {i: ("i", m) for i, m in enumerate(masks)}
    return Case(f"STRIDED_SLICE {NAMES[dtype]} {name}", "STRIDED_SLICE",
                [typed(shape, dtype), const_i32(begin), const_i32(end), const_i32(strides)],
                [typed(out, dtype)], "StridedSliceOptions", slots, 7, refuse=refuse)  # fmt: skip


def slices() -> list[Case]:
    unsupported = ("MA_ERR_UNSUPPORTED", ["STRIDED_SLICE", "not supported", "TFLM ignores"])
    cases = [
        strided_slice("stride 2", F32, (4, 6), [1, 0], [3, 6], [1, 2], (2, 3)),
        strided_slice("negative strides and indices", F32, (4, 6), [-1, 5], [-5, -7],
                      [-1, -2], (4, 3)),
        strided_slice("negative strides", I8, (3, 4, 5), [2, 3, 4], [0, 0, 0], [-1, -1, -2],
                      (2, 3, 2)),
        strided_slice("begin and end masks", I16, (3, 4, 5), [2, 3, 4], [0, 0, 0], [1, 1, 1],
                      (3, 4, 5), (7, 7, 0, 0, 0)),
        strided_slice("shrink axes 0 and 2", I32, (3, 4, 5), [1, 0, -1], [2, 4, 0], [1, 1, 1],
                      (4,), (0, 0, 0, 0, 5)),
        strided_slice("shrink negative index", F32, (3, 4, 5), [-1, 0, 0], [0, 4, 5],
                      [1, 2, 1], (2, 5), (0, 0, 0, 0, 1)),
        strided_slice("rank 4 strides 3 and 2", BOOL, (2, 3, 4, 5), [0, 1, 0, 1], [2, 3, 4, 5],
                      [1, 1, 3, 2], (2, 2, 2, 2)),
        strided_slice("indices clamped", I8, (5,), [-10], [100], [1], (5,)),
        strided_slice("end mask with negative stride", I8, (6, 2), [4, 0], [0, 2], [-2, 1],
                      (3, 2), (0, 1, 0, 0, 0)),
        strided_slice("ellipsis mask", F32, (3, 4), [0, 0], [2, 4], [1, 1], (2, 4),
                      (0, 0, 1, 0, 0), unsupported),
        strided_slice("new axis mask", F32, (3, 4), [0, 0], [2, 4], [1, 1], (2, 4),
                      (0, 0, 0, 1, 0), unsupported),
        strided_slice("shrunk index past the end", F32, (4, 6), [4, 0], [5, 6], [1, 1], (6,),
                      (0, 0, 0, 0, 1), ("MA_ERR_MODEL", ["STRIDED_SLICE", "shrunk axis 0"])),
        strided_slice("rank 5", F32, (1, 2, 3, 4, 5), [0] * 5, [1, 2, 3, 4, 5], [1] * 5,
                      (1, 2, 3, 4, 5), refuse=("MA_ERR_UNSUPPORTED", ["STRIDED_SLICE", "rank 5"])),
        strided_slice("wrong output shape", F32, (4, 6), [1, 0], [3, 6], [1, 2], (2, 4),
                      refuse=("MA_ERR_MODEL", ["STRIDED_SLICE", "output shape"])),
    ]  # fmt: skip
    for dtype, it, shape, begin, size, out in [
        (F32, I32, (4, 5, 6), [1, 0, 2], [2, -1, 3], (2, 5, 3)),
        (I8, I64, (4, 5), [3, 1], [1, 4], (1, 4)),
        (I16, I32, (6,), [2], [3], (3,)),
        (I32, I32, (3, 4), [0, 1], [-1, 2], (3, 2)),
        (BOOL, I32, (2, 2, 3, 2, 4), [1, 0, 1, 0, 1], [1, 2, 2, 2, 3], (1, 2, 2, 2, 3)),
    ]:
        cases.append(Case(f"SLICE {NAMES[dtype]} {NAMES[it]} indices rank {len(shape)}", "SLICE",
                          [typed(shape, dtype), const(begin, it), const(size, it)],
                          [typed(out, dtype)], "SliceOptions"))  # fmt: skip
    cases.append(Case("SLICE float32 past the end", "SLICE",
                      [f32((4,)), const_i32([2]), const_i32([3])], [f32((3,))], "SliceOptions",
                      refuse=("MA_ERR_MODEL", ["SLICE", "do not fit"])))  # fmt: skip
    return cases


# ----------------------------------------------------------------------------- split, pack


def split(dtype: int, shape: tuple[int, ...], axis: int, n: int) -> Case:
    part = list(shape)
    part[axis % len(shape)] //= n
    return Case(f"SPLIT {NAMES[dtype]} axis {axis} into {n}", "SPLIT",
                [const_i32([axis]), typed(shape, dtype)], [typed(tuple(part), dtype)] * n,
                "SplitOptions", {0: ("i", n)})  # fmt: skip


def split_v(dtype: int, shape: tuple[int, ...], axis: int, sizes: list[int],
            real: list[int]) -> Case:  # fmt: skip
    outs = []
    for k in real:
        part = list(shape)
        part[axis % len(shape)] = k
        outs.append(typed(tuple(part), dtype))
    return Case(f"SPLIT_V {NAMES[dtype]} axis {axis} sizes {sizes}", "SPLIT_V",
                [typed(shape, dtype), const_i32(sizes), const_i32([axis])], outs,
                "SplitVOptions", {0: ("i", len(sizes))})  # fmt: skip


def unpack(dtype: int, shape: tuple[int, ...], axis: int) -> Case:
    part = list(shape)
    n = part.pop(axis % len(shape))
    return Case(f"UNPACK {NAMES[dtype]} axis {axis}", "UNPACK", [typed(shape, dtype)],
                [typed(tuple(part), dtype)] * n, "UnpackOptions",
                {0: ("i", n), 1: ("i", axis)})  # fmt: skip


def pack(dtype: int, shape: tuple[int, ...], n: int, axis: int) -> Case:
    whole = list(shape)
    whole.insert(axis % (len(shape) + 1), n)
    return Case(f"PACK {NAMES[dtype]} {n} values axis {axis}", "PACK", [typed(shape, dtype)] * n,
                [typed(tuple(whole), dtype)], "PackOptions",
                {0: ("i", n), 1: ("i", axis)})  # fmt: skip


def splits() -> list[Case]:
    return [
        split(F32, (2, 6, 3), 1, 3), split(I8, (2, 3, 4), -1, 2), split(I16, (4, 3), 0, 4),
        split(I32, (2, 4), 1, 2),
        split_v(F32, (2, 7, 3), 1, [2, -1, 1], [2, 4, 1]), split_v(I8, (3, 6), -1, [1, 5], [1, 5]),
        split_v(I16, (5, 2), 0, [3, 2], [3, 2]), split_v(I32, (2, 5), 1, [-1, 4], [1, 4]),
        unpack(F32, (3, 4, 2), 0), unpack(I8, (2, 3, 4), 1), unpack(I16, (2, 3), -1),
        unpack(I32, (4, 2), 1),
        pack(F32, (3, 4), 2, 0), pack(I8, (3, 4), 3, 1), pack(I16, (5,), 4, 1),
        pack(I32, (2, 2), 2, -1), pack(I64, (2, 3), 2, -1),
        Case("UNPACK bool refused", "UNPACK", [T((2, 3), BOOL)], [T((3,), BOOL)] * 2,
             "UnpackOptions", {0: ("i", 2), 1: ("i", 0)},
             refuse=("MA_ERR_UNSUPPORTED", ["UNPACK", "BOOL"])),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- shapes


def shapes() -> list[Case]:
    return [
        Case("SQUEEZE float32 every unit axis", "SQUEEZE", [f32((1, 3, 1, 4))], [f32((3, 4))],
             "SqueezeOptions"),
        Case("SQUEEZE int8 axis -2", "SQUEEZE", [q8((1, 3, 1, 4), *QX)], [q8((1, 3, 4), *QX)],
             "SqueezeOptions", vectors={0: [-2]}),
        Case("SQUEEZE bool axes 0 and 3", "SQUEEZE", [T((1, 3, 2, 1), BOOL)], [T((3, 2), BOOL)],
             "SqueezeOptions", vectors={0: [0, 3]}),
        Case("SQUEEZE axis of size 3", "SQUEEZE", [f32((1, 3, 1, 4))], [f32((1, 1, 4))],
             "SqueezeOptions", vectors={0: [1]},
             refuse=("MA_ERR_MODEL", ["SQUEEZE", "axis 1"])),
        Case("EXPAND_DIMS float32 axis 1", "EXPAND_DIMS", [f32((3, 4)), const_i32([1])],
             [f32((3, 1, 4))]),
        Case("EXPAND_DIMS int8 axis -1", "EXPAND_DIMS", [q8((3, 4), *QX), const_i32(-1)],
             [q8((3, 4, 1), *QX)]),
        Case("EXPAND_DIMS int16 axis 0", "EXPAND_DIMS", [q16((5,), 0.001), const_i32(0)],
             [q16((1, 5), 0.001)]),
        Case("EXPAND_DIMS int32 refused", "EXPAND_DIMS", [T((3, 4), I32), const_i32(0)],
             [T((1, 3, 4), I32)], refuse=("MA_ERR_UNSUPPORTED", ["EXPAND_DIMS", "INT32"])),
        Case("SHAPE of a rank 3 float32", "SHAPE", [f32((3, 4, 5))], [T((3,), I32)],
             "ShapeOptions", {0: ("b", I32)}),
        Case("SHAPE of a rank 5 int8", "SHAPE", [q8((2, 1, 3, 1, 6), *QX)], [T((5,), I32)],
             "ShapeOptions", {0: ("b", I32)}),
        Case("SHAPE int64 output refused", "SHAPE", [f32((3, 4))], [T((2,), I64)],
             "ShapeOptions", {0: ("b", I64)}, refuse=("MA_ERR_UNSUPPORTED", ["SHAPE", "INT64"])),
        Case("BROADCAST_TO float32 rank 2 to 3", "BROADCAST_TO",
             [f32((3, 1)), const_i32([2, 3, 4])], [f32((2, 3, 4))]),
        Case("BROADCAST_TO int8 int64 shape", "BROADCAST_TO",
             [q8((1, 4, 1), *QX), const([2, 3, 4, 5], I64)], [q8((2, 3, 4, 5), *QX)]),
        Case("BROADCAST_TO bool", "BROADCAST_TO", [T((1, 6), BOOL), const_i32([3, 6])],
             [T((3, 6), BOOL)]),
        Case("BROADCAST_TO int16 rank 5", "BROADCAST_TO",
             [q16((2, 1, 1, 3, 1), 0.001), const_i32([2, 2, 2, 3, 2])],
             [q16((2, 2, 2, 3, 2), 0.001)]),
        Case("BROADCAST_TO int32 no-op", "BROADCAST_TO", [T((2, 3), I32), const_i32([2, 3])],
             [T((2, 3), I32)]),
        Case("BROADCAST_TO incompatible", "BROADCAST_TO", [f32((3,)), const_i32([2, 4])],
             [f32((2, 4))], refuse=("MA_ERR_MODEL", ["BROADCAST_TO", "does not broadcast"])),
    ]  # fmt: skip


# Operators whose output is constant by definition (FILL, ZEROS_LIKE): compared byte for byte
# without the generic check's guard against degenerate (constant) outputs.
FILLS = [
    Case("FILL float32", "FILL", [const_i32([3, 4]), f32(())], [f32((3, 4))]),
    Case("FILL int8 int64 dims", "FILL", [const([2, 1, 4], I64), q8((), *QX)],
         [q8((2, 1, 4), *QX)]),
    Case("FILL int32", "FILL", [const_i32([5]), T((), I32)], [T((5,), I32)]),
    Case("ZEROS_LIKE float32", "ZEROS_LIKE", [f32((3, 4))], [f32((3, 4))]),
    Case("ZEROS_LIKE int8", "ZEROS_LIKE", [q8((7,), *QX)], [q8((7,), *QX)]),
    Case("ZEROS_LIKE int32", "ZEROS_LIKE", [T((2, 3), I32)], [T((2, 3), I32)]),
    Case("ZEROS_LIKE int64", "ZEROS_LIKE", [T((3,), I64)], [T((3,), I64)]),
]  # fmt: skip


# ----------------------------------------------------------------------------- BATCH_MATMUL


def batch_matmul(name: str, dtype: int, xs: tuple[int, ...], ys: tuple[int, ...],
                 adj: tuple[int, int] = (0, 0),
                 quant: tuple[tuple[float, int], ...] = ((0.05, 3), (0.02, -5), (0.3, 7)),
                 const_y: bool = False) -> Case:  # fmt: skip
    a = np.zeros(xs)
    b = np.zeros(ys)
    out = np.matmul(np.swapaxes(a, -1, -2) if adj[0] else a,
                    np.swapaxes(b, -1, -2) if adj[1] else b).shape  # fmt: skip
    shapes = (xs, ys, out)
    if dtype == F32:
        x, y, o = (f32(s) for s in shapes)
        if const_y:
            y = f32(ys, data=RNG.normal(0, 1, ys))
    else:
        x, y, o = (T(s, dtype, [sc], [zp]) for s, (sc, zp) in zip(shapes, quant, strict=True))
        if const_y:
            info = np.iinfo(np.int8 if dtype == I8 else np.int16)
            y = T(ys, dtype, [quant[1][0]], [quant[1][1]],
                  data=RNG.integers(info.min, info.max, ys, endpoint=True))  # fmt: skip
    return Case(f"BATCH_MATMUL {NAMES[dtype]} {name}", "BATCH_MATMUL", [x, y], [o],
                "BatchMatMulOptions", {0: ("B", adj[0]), 1: ("B", adj[1])})  # fmt: skip


def matmuls() -> list[Case]:
    q16s = ((0.001, 0), (0.002, 0), (0.01, 0))
    return [
        batch_matmul("rank 2", F32, (3, 5), (5, 4)),
        batch_matmul("adj_x", F32, (2, 5, 3), (2, 5, 4), (1, 0)),
        batch_matmul("adj_y broadcast batch", F32, (2, 1, 3, 5), (3, 4, 5), (0, 1)),
        batch_matmul("adj_x adj_y rank 5", F32, (1, 2, 2, 5, 3), (2, 1, 4, 5), (1, 1)),
        batch_matmul("rank 2 by rank 4", F32, (3, 5), (2, 3, 5, 4)),
        batch_matmul("constant weights", F32, (2, 3, 6), (6, 4), const_y=True),
        batch_matmul("rank 2", I8, (3, 5), (5, 4)),
        batch_matmul("adj_x broadcast batch", I8, (2, 3, 7, 5), (1, 3, 7, 6), (1, 0)),
        batch_matmul("adj_y constant weights", I8, (4, 16), (8, 16), (0, 1), const_y=True),
        batch_matmul("zero points at the ends", I8, (2, 4, 9), (2, 9, 3),
                     quant=((0.02, -128), (0.03, 127), (2.0, 127))),
        batch_matmul("depth 300 saturating", I8, (2, 300), (300, 3),
                     quant=((0.1, 0), (0.1, 0), (10.0, 0))),
        batch_matmul("rank 3", I16, (2, 3, 5), (2, 5, 4), quant=q16s),
        batch_matmul("adj_x adj_y", I16, (3, 5), (4, 3), (1, 1),
                     quant=((0.001, 0), (0.002, 0), (0.5, 0))),
        Case("BATCH_MATMUL int16 zero point refused", "BATCH_MATMUL",
             [q16((3, 5), 0.001, 1), q16((5, 4), 0.002)], [q16((3, 4), 0.01)],
             "BatchMatMulOptions", refuse=("MA_ERR_MODEL", ["BATCH_MATMUL", "zero points"])),
        Case("BATCH_MATMUL hybrid refused", "BATCH_MATMUL",
             [f32((3, 5)), q8((5, 4), 0.1, 0, data=np.ones((5, 4)))], [f32((3, 4))],
             "BatchMatMulOptions", refuse=("MA_ERR_UNSUPPORTED", ["BATCH_MATMUL", "INT8"])),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- TRANSPOSE_CONV

SAME, VALID = 0, 1


def transpose_conv(name: str, dtype: int, ins: tuple[int, int, int, int],
                   kernel: tuple[int, int], cout: int, stride: tuple[int, int], padding: int,
                   out_hw: tuple[int, int], bias: int | None = None, act: int = 0,
                   per_channel: bool = True, quant: tuple[tuple[float, int], ...] = (
                       (0.05, 3), (0.2, -4))) -> Case:  # fmt: skip
    """bias: the bias type (None: no bias)."""
    fshape = (cout, kernel[0], kernel[1], ins[3])
    oshape = (ins[0], out_hw[0], out_hw[1], cout)
    if dtype == F32:
        w = f32(fshape, data=RNG.normal(0, 0.5, fshape))
        b = f32((cout,), data=RNG.normal(0, 0.5, cout))
        x, o = f32(ins), f32(oshape)
    else:
        scales = [0.01 + 0.003 * i for i in range(cout)] if per_channel else [0.02]
        w = T(fshape, I8, scales, [0] * len(scales), data=RNG.integers(-127, 128, fshape))
        b = T((cout,), bias or I32, data=RNG.integers(-3000, 3000, cout))
        if dtype == I8:
            x, o = q8(ins, *quant[0]), q8(oshape, *quant[1])
        else:
            x, o = q16(ins, quant[0][0]), q16(oshape, quant[1][0])
    inputs = [const_i32(list(oshape)), w, x] + ([b] if bias is not None else [])
    return Case(f"TRANSPOSE_CONV {NAMES[dtype]} {name}", "TRANSPOSE_CONV", inputs, [o],
                "TransposeConvOptions", {0: ("B", padding), 1: ("i", stride[1]),
                2: ("i", stride[0]), 3: ("b", act)}, 5)  # fmt: skip


def transpose_convs() -> list[Case]:
    q16s = ((0.001, 0), (0.01, 0))
    return [
        transpose_conv("SAME stride 2 bias", F32, (1, 4, 5, 3), (3, 3), 4, (2, 2), SAME, (8, 10),
                       F32),
        transpose_conv("VALID stride 2 RELU batch 2", F32, (2, 4, 5, 3), (3, 3), 2, (2, 2), VALID,
                       (9, 11), F32, act=1),
        transpose_conv("stride 1 no bias", F32, (1, 5, 5, 2), (3, 2), 3, (1, 1), SAME, (5, 5)),
        transpose_conv("kernel 2 stride 3", F32, (1, 3, 3, 4), (2, 2), 2, (3, 3), VALID, (9, 9),
                       F32),
        transpose_conv("SAME stride 2 per-channel", I8, (1, 4, 5, 3), (3, 3), 4, (2, 2), SAME,
                       (8, 10), I32),
        transpose_conv("VALID kernel 4 RELU6 batch 2", I8, (2, 4, 4, 3), (4, 4), 5, (2, 2), VALID,
                       (10, 10), I32, act=3),
        transpose_conv("per-tensor no bias strides 1x2", I8, (1, 3, 4, 8), (3, 3), 4, (1, 2),
                       SAME, (3, 8), per_channel=False),
        transpose_conv("zero points at the ends", I8, (1, 4, 4, 3), (3, 3), 3, (2, 2), SAME,
                       (8, 8), I32, quant=((0.05, -128), (0.1, 127))),
        transpose_conv("13 channels (four-wide dot and tail) input zero point 127", I8,
                       (1, 3, 4, 13), (3, 3), 5, (2, 2), SAME, (6, 8), I32,
                       quant=((0.05, 127), (0.3, -5))),
        transpose_conv("unet's: kernel 2 stride 2 16 to 12 channels no bias", I8,
                       (1, 4, 4, 16), (2, 2), 12, (2, 2), SAME, (8, 8)),
        transpose_conv("17 to 7 channels (vector tail 1, channel tail 3) VALID", I8,
                       (1, 3, 3, 17), (3, 3), 7, (2, 2), VALID, (7, 7), I32,
                       quant=((0.04, -9), (0.2, 11))),
        transpose_conv("33 to 4 channels per-tensor strides 3x1 RELU", I8, (2, 2, 3, 33),
                       (3, 2), 4, (3, 1), SAME, (6, 3), I32, act=1, per_channel=False),
        transpose_conv("1 to 2 channels kernel 5 stride 2 VALID", I8, (1, 3, 2, 1), (5, 5), 2,
                       (2, 2), VALID, (9, 7), I32),
        transpose_conv("int64 bias", I16, (1, 4, 5, 3), (3, 3), 4, (2, 2), SAME, (8, 10), I64,
                       quant=q16s),
        transpose_conv("int16 bias VALID", I16, (1, 4, 5, 3), (3, 3), 4, (2, 2), VALID, (9, 11),
                       I16, quant=q16s),
        transpose_conv("no bias RELU", I16, (1, 3, 3, 2), (2, 2), 2, (2, 2), VALID, (6, 6),
                       act=1, quant=((0.001, 0), (0.005, 0))),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- CONCATENATION


def concat(name: str, dtype: int, shapes: list[tuple[int, ...]], axis: int) -> Case:
    ndims = len(shapes[0])
    a = axis % ndims
    oshape = list(shapes[0])
    oshape[a] = sum(sh[a] for sh in shapes)

    def t(shape: tuple[int, ...]) -> T:
        if dtype == F32:
            return f32(shape)
        return q8(shape, 0.1, -3) if dtype == I8 else q16(shape, 0.01)

    return Case(f"CONCATENATION {NAMES[dtype]} {name}", "CONCATENATION",
                [t(sh) for sh in shapes], [t(tuple(oshape))], "ConcatenationOptions",
                {0: ("i", axis)})  # fmt: skip


def concats() -> list[Case]:
    return [
        concat("unet's: 12 + 12 channels", I8, [(1, 8, 8, 12), (1, 8, 8, 12)], 3),
        concat("12 + 8 channels axis -1", I8, [(1, 16, 16, 12), (1, 16, 16, 8)], -1),
        concat("odd runs 3 + 17 + 5 + 1", I8, [(1, 3, 5, 3), (1, 3, 5, 17), (1, 3, 5, 5),
               (1, 3, 5, 1)], 3),
        concat("rows of 35 bytes along axis 1", I8, [(2, 3, 5, 7), (2, 1, 5, 7)], 1),
        concat("axis 0 (one run per input)", I8, [(1, 4, 3), (2, 4, 3)], 0),
        concat("int16 three inputs axis 2", I16, [(2, 3, 1), (2, 3, 6), (2, 3, 9)], 2),
        concat("float 2 + 9 axis -2", F32, [(3, 2, 2), (3, 9, 2)], -2),
        # TFLM copies bytes without requantizing, so its Prepare refuses int8 inputs quantized
        # unlike the output and int16 zero points other than 0; int16 scales may differ.
        concat_quantized("input scale differs refused", q8((2, 3), 0.04, -3),
                         q8((2, 6), 0.05, -3), ("MA_ERR_UNSUPPORTED", ["CONCATENATION", "scale"])),
        concat_quantized("input zero point differs refused", q8((2, 3), 0.05, 3),
                         q8((2, 6), 0.05, -3),
                         ("MA_ERR_UNSUPPORTED", ["CONCATENATION", "zero point"])),
        concat_quantized("input zero point 2 refused", q16((2, 3), 0.01, 2), q16((2, 6), 0.01),
                         ("MA_ERR_UNSUPPORTED", ["CONCATENATION", "zero point 0"])),
        concat_quantized("output zero point 2 refused", q16((2, 3), 0.01), q16((2, 6), 0.01, 2),
                         ("MA_ERR_UNSUPPORTED", ["CONCATENATION", "zero point 0"])),
        concat_quantized("input scale differs", q16((2, 3), 0.02), q16((2, 6), 0.01), None),
    ]  # fmt: skip


def concat_quantized(name: str, first: T, out: T, refuse: tuple[str, list[str]] | None) -> Case:
    """Two inputs along axis 1: `first`, then one quantized as `out`."""
    second = T((2, 3), out.dtype, list(out.scale), list(out.zp))
    return Case(f"CONCATENATION {NAMES[out.dtype]} {name}", "CONCATENATION", [first, second],
                [out], "ConcatenationOptions", {0: ("i", 1)}, refuse=refuse)  # fmt: skip


# ----------------------------------------------------------------------------- resizes


def resize(name: str, dtype: int, ins: tuple[int, int, int, int], out_hw: tuple[int, int],
           align: int = 0, half: int = 0, op: str = "RESIZE_BILINEAR",
           refuse: tuple[str, list[str]] | None = None) -> Case:  # fmt: skip
    out = (ins[0], out_hw[0], out_hw[1], ins[3])
    bilinear = op == "RESIZE_BILINEAR"
    slots = {2: ("B", align), 3: ("B", half)} if bilinear else {0: ("B", align), 1: ("B", half)}
    return Case(f"{op} {NAMES[dtype]} {name}", op, [typed(ins, dtype), const_i32(list(out_hw))],
                [typed(out, dtype)],
                "ResizeBilinearOptions" if bilinear else "ResizeNearestNeighborOptions", slots,
                refuse=refuse)  # fmt: skip


def resizes() -> list[Case]:
    cases = []
    for dtype in (F32, I8):
        cases += [
            resize("up 2x", dtype, (1, 3, 4, 2), (6, 8)),
            resize("up odd batch 2", dtype, (2, 3, 5, 3), (7, 11)),
            resize("align_corners", dtype, (1, 3, 4, 2), (7, 9), align=1),
            resize("half_pixel_centers mixed", dtype, (1, 4, 5, 2), (7, 3), half=1),
            resize("half_pixel_centers up", dtype, (1, 3, 3, 2), (8, 8), half=1),
            resize("down", dtype, (1, 8, 9, 2), (3, 4)),
            resize("align_corners to 1x1", dtype, (1, 3, 4, 2), (1, 1), align=1),
        ]
    cases += [
        resize("both flags", F32, (1, 3, 4, 2), (6, 8), 1, 1,
               refuse=("MA_ERR_MODEL", ["RESIZE_BILINEAR", "align_corners"])),
        resize("refused", I16, (1, 3, 4, 2), (6, 8),
               refuse=("MA_ERR_UNSUPPORTED", ["RESIZE_BILINEAR", "INT16"])),
        resize("half pixel", I16, (1, 4, 5, 2), (7, 3), half=1, op="RESIZE_NEAREST_NEIGHBOR"),
    ]  # fmt: skip
    return cases


# ----------------------------------------------------------------------------- space and batch


def space_moves() -> list[Case]:
    cases = []
    for dtype in (F32, I8):
        n = NAMES[dtype]
        cases += [
            Case(f"SPACE_TO_DEPTH {n} block 2", "SPACE_TO_DEPTH", [typed((2, 4, 6, 3), dtype)],
                 [typed((2, 2, 3, 12), dtype)], "SpaceToDepthOptions", {0: ("i", 2)}),
            Case(f"DEPTH_TO_SPACE {n} block 3", "DEPTH_TO_SPACE", [typed((1, 2, 3, 18), dtype)],
                 [typed((1, 6, 9, 2), dtype)], "DepthToSpaceOptions", {0: ("i", 3)}),
            Case(f"BATCH_TO_SPACE_ND {n} crops", "BATCH_TO_SPACE_ND",
                 [typed((12, 3, 2, 2), dtype), const_i32([2, 3]),
                  const_i32([[1, 0], [2, 1]])], [typed((2, 5, 3, 2), dtype)],
                 "BatchToSpaceNDOptions"),
            Case(f"BATCH_TO_SPACE_ND {n} rank 3", "BATCH_TO_SPACE_ND",
                 [typed((6, 2, 3), dtype), const_i32([3]), const_i32([[0, 1]])],
                 [typed((2, 5, 3), dtype)], "BatchToSpaceNDOptions"),
            Case(f"MIRROR_PAD {n} REFLECT", "MIRROR_PAD",
                 [typed((3, 4, 2), dtype), const_i32([[2, 1], [0, 3], [1, 1]])],
                 [typed((6, 7, 4), dtype)], "MirrorPadOptions", {0: ("b", 0)}),
            Case(f"MIRROR_PAD {n} SYMMETRIC int64 paddings", "MIRROR_PAD",
                 [typed((3, 4), dtype), const([[3, 2], [4, 1]], I64)], [typed((8, 9), dtype)],
                 "MirrorPadOptions", {0: ("b", 1)}),
            Case(f"GATHER_ND {n} elements", "GATHER_ND",
                 [typed((3, 4, 2), dtype),
                  const_i32([[0, 0, 0], [2, 3, 1], [1, 2, 0], [2, 0, 1], [0, 3, 1]])],
                 [typed((5,), dtype)]),
            Case(f"GATHER_ND {n} slices", "GATHER_ND",
                 [typed((3, 4, 2), dtype), const_i32([[[2], [0]], [[1], [1]]])],
                 [typed((2, 2, 4, 2), dtype)]),
            Case(f"GATHER_ND {n} rows", "GATHER_ND",
                 [typed((3, 4, 2), dtype), const_i32([[2, 3], [0, 1], [1, 0]])],
                 [typed((3, 2), dtype)]),
            Case(f"SPACE_TO_BATCH_ND {n} no padding", "SPACE_TO_BATCH_ND",
                 [typed((2, 4, 6, 2), dtype), const_i32([2, 3]), const_i32([[0, 0], [0, 0]])],
                 [typed((12, 2, 2, 2), dtype)], "SpaceToBatchNDOptions"),
        ]  # fmt: skip
    cases += [
        Case("MIRROR_PAD REFLECT as wide as the axis", "MIRROR_PAD",
             [f32((3, 4)), const_i32([[3, 0], [0, 0]])], [f32((6, 4))], "MirrorPadOptions",
             {0: ("b", 0)}, refuse=("MA_ERR_MODEL", ["MIRROR_PAD", "paddings 3, 0"])),
        Case("GATHER_ND index past the end", "GATHER_ND",
             [f32((3, 4)), const_i32([[3, 0]])], [f32((1,))],
             refuse=("MA_ERR_KERNEL", ["GATHER_ND", "index 3 outside"])),
        Case("GATHER_ND negative index TFLM lets through", "GATHER_ND",
             [f32((3, 4)), const_i32([[1, -1]])], [f32((1,))],
             refuse=("MA_ERR_KERNEL", ["GATHER_ND", "index -1 outside"])),
        # What the converter writes for a dilated Conv1D built without a batch size: batch 1
        # out where 2 belong (TFLM runs it, half its output never written).
        Case("SPACE_TO_BATCH_ND batch left 1", "SPACE_TO_BATCH_ND",
             [f32((1, 24, 4)), const_i32([2]), const_i32([[0, 0]])], [f32((1, 12, 4))],
             "SpaceToBatchNDOptions",
             refuse=("MA_ERR_MODEL", ["[1 24 1 4] to the output [1 12 1 4]", "batches disagree"])),
        Case("SPACE_TO_DEPTH int16 refused", "SPACE_TO_DEPTH", [q16((1, 2, 2, 1), 0.001)],
             [q16((1, 1, 1, 4), 0.001)], "SpaceToDepthOptions", {0: ("i", 2)},
             refuse=("MA_ERR_UNSUPPORTED", ["SPACE_TO_DEPTH", "INT16"])),
    ]  # fmt: skip
    return cases


def others() -> list[Case]:
    cases = [
        Case(f"REVERSE_V2 {NAMES[dtype]} axes {axes}", "REVERSE_V2",
             [typed(shape, dtype), const_i32(axes)], [typed(shape, dtype)], "ReverseV2Options")
        for dtype, shape, axes in [
            (F32, (3, 4, 5), [1]), (I8, (3, 4, 5), [2, 1]), (I16, (2, 3), [-1]),
            (I32, (4, 3, 2), [0, 1, 2]), (I64, (5,), [0]), (BOOL, (3, 4), [0]),
        ]
    ]  # fmt: skip
    cases.append(
        Case(
            "REVERSE_V2 non-consecutive axes refused",
            "REVERSE_V2",
            [f32((2, 3, 4)), const_i32([0, 2])],
            [f32((2, 3, 4))],
            "ReverseV2Options",
            refuse=("MA_ERR_UNSUPPORTED", ["REVERSE_V2", "non-consecutive"]),
        )
    )
    cases += [
        Case(f"DYNAMIC_UPDATE_SLICE {NAMES[dtype]} {name}", "DYNAMIC_UPDATE_SLICE",
             [typed(shape, dtype), typed(upd, dtype), const(start, it)], [typed(shape, dtype)])
        for dtype, name, shape, upd, start, it in [
            (F32, "inside", (4, 5, 3), (2, 2, 3), [1, 2, 0], I32),
            (I8, "start clamped", (4, 5), (3, 2), [3, -4], I64),
            (I16, "whole operand", (2, 3), (2, 3), [0, 0], I32),
            (I32, "row", (3, 4), (1, 4), [2, 0], I32),
        ]
    ]  # fmt: skip
    cases += [
        Case(f"BROADCAST_ARGS {NAMES[dtype]} {a} {b}", "BROADCAST_ARGS",
             [T((len(a),), dtype), T((len(b),), dtype)], [T((len(out),), dtype)],
             make_inputs=lambda rng, ts, a=a, b=b, dt=dtype: [
                 np.asarray(a, NP[dt]), np.asarray(b, NP[dt])])
        for dtype, a, b, out in [
            (I32, [2, 1, 3], [4, 1], [2, 4, 3]), (I64, [5], [3, 1, 5], [3, 1, 5]),
            (I32, [1, 7, 1, 2], [6, 2], [1, 7, 6, 2]),
        ]
    ]  # fmt: skip
    pool = {0: ("B", SAME), 1: ("i", 2), 2: ("i", 2), 3: ("i", 3), 4: ("i", 3)}
    cases += [
        Case("L2_POOL_2D float32 SAME stride 2 partial windows", "L2_POOL_2D", [f32((2, 7, 9, 3))],
             [f32((2, 4, 5, 3))], "Pool2DOptions", pool),
        Case("L2_POOL_2D float32 VALID RELU6", "L2_POOL_2D", [f32((1, 7, 9, 3))],
             [f32((1, 3, 4, 3))], "Pool2DOptions", {**pool, 0: ("B", VALID), 5: ("b", 3)}),
        Case("L2_POOL_2D int8 refused", "L2_POOL_2D", [q8((1, 4, 4, 1), *QX)],
             [q8((1, 2, 2, 1), *QX)], "Pool2DOptions", pool,
             refuse=("MA_ERR_UNSUPPORTED", ["L2_POOL_2D", "INT8"])),
        Case("EMBEDDING_LOOKUP float32", "EMBEDDING_LOOKUP",
             [const_i32([3, 0, 3, 1]), f32((4, 2, 3), data=RNG.normal(0, 1, (4, 2, 3)))],
             [f32((4, 2, 3))]),
        Case("EMBEDDING_LOOKUP int8", "EMBEDDING_LOOKUP",
             [T((5,), I32, low=0, high=5),
              q8((6, 4), 0.1, 0, data=RNG.integers(-128, 128, (6, 4)))], [q8((5, 4), 0.1, 0)]),
        Case("EMBEDDING_LOOKUP int8 table to float32", "EMBEDDING_LOOKUP",
             [const_i32([1, 4, 0]), q8((5, 7), 0.03, 0, data=RNG.integers(-128, 128, (5, 7)))],
             [f32((3, 7))]),
        Case("EMBEDDING_LOOKUP index past the end", "EMBEDDING_LOOKUP",
             [const_i32([1, 5]), f32((5, 2), data=np.ones((5, 2)))], [f32((2, 2))],
             refuse=("MA_ERR_KERNEL", ["EMBEDDING_LOOKUP", "index 5"])),
    ]  # fmt: skip
    return cases


# SPACE_TO_BATCH_ND with padding: TFLM pads with the bytes of a parameter its prepare never
# sets, so its padded cells are whatever its persistent memory held. The other cells must
# match bit for bit; the padded ones hold zero (int8: the output zero point).
PADDED = [
    Case(f"SPACE_TO_BATCH_ND {NAMES[dtype]} {name}", "SPACE_TO_BATCH_ND",
         [typed(ins, dtype), const_i32(block), const_i32(pads)], [typed(out, dtype)],
         "SpaceToBatchNDOptions")
    for dtype in (F32, I8)
    for name, ins, block, pads, out in [
        ("padded 4-D", (2, 5, 3, 2), [2, 3], [[1, 0], [2, 1]], (12, 3, 2, 2)),
        ("padded rank 3", (2, 5, 3), [3], [[0, 1]], (6, 2, 3)),
    ]
]  # fmt: skip


def space_to_batch_mask(case: Case) -> np.ndarray:
    """True where SPACE_TO_BATCH_ND's output holds an input cell (TensorFlow's definition:
    pad, split each spatial axis into (size / block, block), move the blocks to the batch)."""
    x = np.ones(case.inputs[0].shape, np.int8)
    rank3 = x.ndim == 3
    if rank3:
        x = x[:, :, None, :]
    block = list(case.inputs[1].data.reshape(-1)) + ([1] if rank3 else [])
    pads = case.inputs[2].data.reshape(-1, 2).tolist() + ([[0, 0]] if rank3 else [])
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    n, h, w, c = x.shape
    bh, bw = block
    x = x.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    out = x.reshape(bh * bw * n, h // bh, w // bw, c)
    return (out[:, :, 0, :] if rank3 else out).astype(bool)


GENERIC = (
    slices()
    + splits()
    + shapes()
    + matmuls()
    + transpose_convs()
    + concats()
    + resizes()
    + space_moves()
    + others()
)
CASES = GENERIC + FILLS + PADDED  # every case (tools/gen_operators_doc.py reads CASES)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("shape"))


@pytest.mark.parametrize(
    "case", [c for c in GENERIC if c.op == "CONCATENATION" and c.refuse], ids=str
)
def test_concatenation_refusals_are_tflms(results: dict, case: Case) -> None:
    """Each is TFLM's own Prepare refusal, not a gap of the runtime's."""
    assert results[case.name].tflm is None, f"{case}: TFLM runs what the runtime refuses"


@pytest.mark.parametrize("case", GENERIC, ids=str)
def test_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])


@pytest.mark.parametrize("case", FILLS, ids=str)
def test_constant_outputs_match_tflm(results: dict, case: Case) -> None:
    r = results[case.name]
    assert r.status is None and r.tflm is not None, (r.status, r.message, r.tflm_error)
    assert_same(r.ours[0], r.tflm[0], case.name)


@pytest.mark.parametrize("case", PADDED, ids=str)
def test_space_to_batch_padding(results: dict, case: Case) -> None:
    r = results[case.name]
    assert r.status is None and r.tflm is not None, (r.status, r.message, r.tflm_error)
    ours, tflm = r.ours[0], r.tflm[0]
    mask = space_to_batch_mask(case)
    assert mask.shape == ours.shape and 0 < mask.sum() < mask.size
    assert_same(ours[mask], tflm[mask], case.name)
    zero = case.outputs[0].zp[0] if case.outputs[0].zp else 0
    assert np.all(ours[~mask] == zero), f"{case.name}: padded cells are not {zero}"
