"""Single-operator models (the project's model writer) for operators and options the shared
models do not exercise, each run on the real TFLM and on the kernels."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.kernel_harness import (
    BOOL,
    F32,
    I8,
    I16,
    I32,
    Graph,
    T,
    assert_same,
    f32,
    q8,
    run_op_on_tflm_tensors,
    single_op_model,
    tflm_run,
)

RNG = np.random.default_rng(7)
W8 = RNG.integers(-127, 128, 4 * 3 * 3 * 6).astype(np.int8)
WF = RNG.normal(0, 0.5, 4 * 3 * 3 * 6).astype(np.float32)
B32 = RNG.integers(-2000, 2000, 12).astype(np.int32)
WL = np.random.default_rng(8).normal(0, 0.5, 220).astype(np.float32)
PADS = [[0, 0], [1, 2], [2, 0], [0, 0]]
SAME_S2 = {0: ("B", 0), 1: ("i", 2), 2: ("i", 2), 3: ("i", 3), 4: ("i", 3)}
SINGLE_OPS: dict[str, tuple[str, list[T], list[T], str | None, dict[int, tuple[str, Any]]]] = {
    "MAX_POOL_2D int8 SAME s2 RELU6": ("MAX_POOL_2D", [q8((1, 7, 9, 5), 0.05, 3)],
        [q8((1, 4, 5, 5), 0.05, 3)], "Pool2DOptions", {**SAME_S2, 5: ("b", 3)}),
    "AVERAGE_POOL_2D int8 SAME partial windows": ("AVERAGE_POOL_2D", [q8((2, 7, 9, 5), 0.05, 3)],
        [q8((2, 4, 5, 5), 0.05, 3)], "Pool2DOptions", SAME_S2),
    "AVERAGE_POOL_2D float SAME RELU": ("AVERAGE_POOL_2D", [f32((1, 7, 9, 5))],
        [f32((1, 4, 5, 5))], "Pool2DOptions", {**SAME_S2, 5: ("b", 1)}),
    "MAX_POOL_2D float VALID": ("MAX_POOL_2D", [f32((1, 7, 9, 5))], [f32((1, 3, 4, 5))],
        "Pool2DOptions", {**SAME_S2, 0: ("B", 1)}),
    "LOGISTIC int8": ("LOGISTIC", [q8((4, 64), 0.09, -7)], [q8((4, 64), 1 / 256, -128)], None, {}),
    "LOGISTIC int8 fine scale": ("LOGISTIC", [q8((4, 64), 0.02, 10)],
        [q8((4, 64), 1 / 256, -128)], None, {}),
    "LOGISTIC float": ("LOGISTIC", [f32((3, 50))], [f32((3, 50))], None, {}),
    "RELU int8 rescale": ("RELU", [q8((2, 40), 0.07, 5)], [q8((2, 40), 0.04, -128)], None, {}),
    "RELU float": ("RELU", [f32((2, 40))], [f32((2, 40))], None, {}),
    "LEAKY_RELU int8": ("LEAKY_RELU", [q8((2, 40), 0.07, 5)], [q8((2, 40), 0.05, -20)],
        "LeakyReluOptions", {0: ("f", 0.2)}),
    "LEAKY_RELU float": ("LEAKY_RELU", [f32((2, 40))], [f32((2, 40))], "LeakyReluOptions",
        {0: ("f", 0.3)}),
    "MUL int8 broadcast RELU": ("MUL", [q8((1, 4, 4, 3), 0.05, 2), q8((3,), 0.02, -3)],
        [q8((1, 4, 4, 3), 0.004, -10)], "MulOptions", {0: ("b", 1)}),
    "MUL float broadcast": ("MUL", [f32((2, 1, 3)), f32((4, 1))], [f32((2, 4, 3))],
        "MulOptions", {}),
    "ADD int8 broadcast": ("ADD", [q8((2, 1, 3), 0.05, 2), q8((1, 4, 1), 0.03, -3)],
        [q8((2, 4, 3), 0.06, 1)], "AddOptions", {}),
    "ADD float RELU6": ("ADD", [f32((2, 8)), f32((2, 8))], [f32((2, 8))], "AddOptions",
        {0: ("b", 3)}),
    "ADD int32": ("ADD", [T((2, 8), I32), T((8,), I32)], [T((2, 8), I32)], "AddOptions", {}),
    "LESS float broadcast": ("LESS", [f32((3, 4)), f32((4,))], [T((3, 4), BOOL)],
        "LessOptions", {}),
    "LESS int32": ("LESS", [T((10,), I32), T((10,), I32)], [T((10,), BOOL)], "LessOptions", {}),
    "LESS int8 rescaled": ("LESS", [q8((40,), 0.05, 2), q8((40,), 0.07, -1)],
        [T((40,), BOOL)], "LessOptions", {}),
    "EQUAL int8 rescaled": ("EQUAL", [q8((200,), 0.1, 0), q8((200,), 0.2, 0)],
        [T((200,), BOOL)], "EqualOptions", {}),
    "EQUAL int32 broadcast": ("EQUAL", [T((4, 3), I32), T((1, 3), I32, data=[[0, -1, 5]])],
        [T((4, 3), BOOL)], "EqualOptions", {}),
    "EQUAL float": ("EQUAL", [f32((6,)), f32((6,), [0.5, 0.0, -1.0, 2.0, 0.25, 7.0])],
        [T((6,), BOOL)], "EqualOptions", {}),
    "QUANTIZE float to int8": ("QUANTIZE", [f32((3, 40))], [q8((3, 40), 0.004, 7)], None, {}),
    "QUANTIZE int8 to int8": ("QUANTIZE", [q8((3, 40), 0.05, 7)], [q8((3, 40), 0.03, -9)],
        None, {}),
    "DEQUANTIZE int8": ("DEQUANTIZE", [q8((3, 40), 0.05, 7)], [f32((3, 40))], None, {}),
    "PAD float": ("PAD", [f32((1, 3, 4, 2)), T((4, 2), I32, data=PADS)], [f32((1, 6, 6, 2))],
        "PadOptions", {}),
    "PAD int8 zero point": ("PAD", [q8((1, 3, 4, 2), 0.1, -5), T((4, 2), I32, data=PADS)],
        [q8((1, 6, 6, 2), 0.1, -5)], "PadOptions", {}),
    "PADV2 float constant": ("PADV2", [f32((2, 3, 4)), T((3, 2), I32, data=PADS[1:]),
        f32((1,), [1.5])], [f32((5, 5, 4))], "PadV2Options", {}),
    "TRANSPOSE int8 rank 5": ("TRANSPOSE", [q8((2, 3, 4, 5, 6), 0.1, 0),
        T((5,), I32, data=[4, 0, 3, 1, 2])], [q8((6, 2, 5, 3, 4), 0.1, 0)],
        "TransposeOptions", {}),
    "TRANSPOSE float": ("TRANSPOSE", [f32((3, 7)), T((2,), I32, data=[1, 0])], [f32((7, 3))],
        "TransposeOptions", {}),
    "CONCATENATION float axis -1": ("CONCATENATION", [f32((2, 3, 2)), f32((2, 3, 5)),
        f32((2, 3, 1))], [f32((2, 3, 8))], "ConcatenationOptions", {0: ("i", -1)}),
    "CONCATENATION int8 axis 1": ("CONCATENATION", [q8((2, 3, 2), 0.1, 1), q8((2, 4, 2), 0.1, 1)],
        [q8((2, 7, 2), 0.1, 1)], "ConcatenationOptions", {0: ("i", 1)}),
    "GATHER float axis 1": ("GATHER", [f32((3, 5, 2)), T((4,), I32, data=[4, 0, 0, 2])],
        [f32((3, 4, 2))], "GatherOptions", {0: ("i", 1)}),
    "GATHER int8 2-D indices": ("GATHER", [q8((6, 3), 0.1, 0),
        T((2, 2), I32, data=[[5, 1], [0, 3]])], [q8((2, 2, 3), 0.1, 0)], "GatherOptions", {}),
    "GATHER batch_dims 1": ("GATHER", [f32((2, 5, 3)), T((2, 2), I32, data=[[4, 1], [0, 2]])],
        [f32((2, 2, 3))], "GatherOptions", {0: ("i", 1), 1: ("i", 1)}),
    "RESIZE_NEAREST_NEIGHBOR int8": ("RESIZE_NEAREST_NEIGHBOR", [q8((1, 3, 5, 2), 0.1, 0),
        T((2,), I32, data=[7, 8])], [q8((1, 7, 8, 2), 0.1, 0)],
        "ResizeNearestNeighborOptions", {}),
    "RESIZE_NEAREST_NEIGHBOR align corners": ("RESIZE_NEAREST_NEIGHBOR", [f32((1, 3, 5, 2)),
        T((2,), I32, data=[7, 8])], [f32((1, 7, 8, 2))], "ResizeNearestNeighborOptions",
        {0: ("B", 1)}),
    "RESIZE_NEAREST_NEIGHBOR half pixel": ("RESIZE_NEAREST_NEIGHBOR", [f32((1, 4, 5, 2)),
        T((2,), I32, data=[7, 3])], [f32((1, 7, 3, 2))], "ResizeNearestNeighborOptions",
        {1: ("B", 1)}),
    "SOFTMAX float beta 0.5": ("SOFTMAX", [f32((3, 10))], [f32((3, 10))], "SoftmaxOptions",
        {0: ("f", 0.5)}),
    "SOFTMAX int8 wide input scale": ("SOFTMAX", [q8((2, 30), 0.3, 4)],
        [q8((2, 30), 1 / 256, -128)], "SoftmaxOptions", {0: ("f", 1.0)}),
    "SOFTMAX int8 to int16": ("SOFTMAX", [q8((2, 30), 0.06, 4)],
        [T((2, 30), I16, 1 / 65536, -32768)], "SoftmaxOptions", {0: ("f", 1.0)}),
    "CONV_2D float dilated SAME s2": ("CONV_2D", [f32((1, 9, 8, 6)), f32((4, 3, 3, 6), WF)],
        [f32((1, 5, 4, 4))], "Conv2DOptions", {0: ("B", 0), 1: ("i", 2), 2: ("i", 2),
        4: ("i", 2), 5: ("i", 2)}),
    "CONV_2D int8 per-tensor no bias RELU": ("CONV_2D", [q8((1, 6, 6, 6), 0.05, -3),
        T((4, 3, 3, 6), I8, 0.01, 0, W8)], [q8((1, 4, 4, 4), 0.2, 5)], "Conv2DOptions",
        {0: ("B", 1), 1: ("i", 1), 2: ("i", 1), 3: ("b", 1)}),
    "DEPTHWISE_CONV_2D int8 multiplier 2 dilated": ("DEPTHWISE_CONV_2D",
        [q8((1, 7, 7, 6), 0.05, -3), T((1, 3, 3, 12), I8, [0.01 + 0.001 * i for i in range(12)],
        [0] * 12, RNG.integers(-127, 128, 108), qdim=3), T((12,), I32, [0.0005] * 12, [0] * 12,
        B32)], [q8((1, 4, 4, 12), 0.1, 2)], "DepthwiseConv2DOptions", {0: ("B", 0),
        1: ("i", 2), 2: ("i", 2), 3: ("i", 2), 5: ("i", 2), 6: ("i", 2)}),
    "FULLY_CONNECTED float keep dims RELU": ("FULLY_CONNECTED", [f32((2, 3, 18)),
        f32((12, 18), WF[:216])], [f32((2, 3, 12))], "FullyConnectedOptions",
        {0: ("b", 1), 2: ("B", 1)}),
    "FULLY_CONNECTED int8 batch 3": ("FULLY_CONNECTED", [q8((3, 18), 0.05, 3),
        T((12, 18), I8, 0.02, 0, W8[:216]), T((12,), I32, 0.001, 0, B32)],
        [q8((3, 12), 0.3, -4)], "FullyConnectedOptions", {}),
    "SVDF float rank 2 RELU": ("SVDF", [f32((2, 6)), f32((8, 6), WF[:48]), f32((8, 5), WF[50:90]),
        f32((4,), WF[100:104]), T((2, 40), F32, variable=True)], [f32((2, 4))], "SVDFOptions",
        {0: ("i", 2), 1: ("b", 1)}),
    "SVDF int8 with int16 state": ("SVDF", [q8((2, 6), 0.05, 3), T((8, 6), I8, 0.01, 0, W8[:48]),
        T((8, 5), I16, 0.0004, 0, RNG.integers(-20000, 20000, 40)), T((4,), I32, 8e-7, 0,
        B32[:4]), T((2, 40), I16, 0.002, 0, variable=True)], [q8((2, 4), 0.05, -10)],
        "SVDFOptions", {0: ("i", 2), 1: ("b", 1)}),
    "UNIDIRECTIONAL_SEQUENCE_LSTM float time-major batch 2 clip": (
        "UNIDIRECTIONAL_SEQUENCE_LSTM", [f32((3, 2, 4))]
        + [f32((5, 4), WL[20 * g : 20 * g + 20]) for g in range(4)]
        + [f32((5, 5), WL[80 + 25 * g : 105 + 25 * g]) for g in range(4)] + [None] * 3
        + [f32((5,), WL[180 + 5 * g : 185 + 5 * g]) for g in range(4)] + [None] * 2
        + [T((2, 5), F32, variable=True), T((2, 5), F32, variable=True)] + [None] * 4,
        [f32((3, 2, 5))], "UnidirectionalSequenceLSTMOptions",
        {0: ("b", 4), 1: ("f", 0.8), 3: ("B", 1)}),
    # the rows after the last axes of one element (yamnet's input transpose)
    "TRANSPOSE int8 last axis of 1": ("TRANSPOSE", [q8((1, 6, 9, 1), 0.1, 0),
        T((4,), I32, data=[0, 2, 1, 3])], [q8((1, 9, 6, 1), 0.1, 0)], "TransposeOptions", {}),
}  # fmt: skip


def lstm_int8_case(cell_scale: float, clip: float) -> tuple:
    """An int8 LSTM (time-major, batch 2) with the given int16 cell-state scale."""
    rng = np.random.default_rng(9)
    w = [T((5, 4), I8, 0.02, 0, rng.integers(-127, 128, 20)) for _ in range(4)]
    r = [T((5, 5), I8, 0.03, 0, rng.integers(-127, 128, 25)) for _ in range(4)]
    b = [T((5,), I32, 0.05 * 0.02, 0, rng.integers(-3000, 3000, 5)) for _ in range(4)]
    state = [T((2, 5), I8, 0.02, 3, variable=True), T((2, 5), I16, cell_scale, 0, variable=True)]
    ins = [q8((3, 2, 4), 0.05, -7), *w, *r, None, None, None, *b, None, None, *state]
    return ("UNIDIRECTIONAL_SEQUENCE_LSTM", ins + [None] * 4, [q8((3, 2, 5), 0.02, 3)],
            "UnidirectionalSequenceLSTMOptions",
            {0: ("b", 4), 1: ("f", clip), 3: ("B", 1)})  # fmt: skip


SINGLE_OPS["UNIDIRECTIONAL_SEQUENCE_LSTM int8 cell 2^-10"] = lstm_int8_case(2.0**-10, 0.0)
SINGLE_OPS["UNIDIRECTIONAL_SEQUENCE_LSTM int8 cell 2^-14 clip"] = lstm_int8_case(2.0**-14, 1.5)


@pytest.mark.parametrize("case", SINGLE_OPS)
def test_single_operator_matches_tflm(lib: ctypes.CDLL, tmp_path: Path, case: str) -> None:
    """Operators and options the shared models do not exercise, one model each."""
    op, ins, outs, opt, slots = SINGLE_OPS[case]
    path = tmp_path / "op.tflite"
    path.write_bytes(single_op_model(op, ins, outs, opt, slots))
    g = Graph(path.read_bytes())
    it, _ = tflm_run(path, None, seed=len(case))
    ours, want, _ = run_op_on_tflm_tensors(lib, g, it, 0, g.subgraphs[0]["ops"][0])
    assert_same(ours[0], want[0].reshape(ours[0].shape), case)
