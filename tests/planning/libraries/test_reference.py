"""TFLM's reference kernels as host/planning/libraries/reference.py states them, against the
real TFLM (the pip tflite-micro interpreter): each operator's scratch requests, built as a
one-operator model whose tensors an offline plan pins from offset 0, so TFLM's head minus the
tensors is exactly what its kernels requested; the operators listed as requesting none.
(The shared models' heads, which add TFLM's planning of that scratch, are
tests/planning/test_scratch.py's; the persistent allocations,
tests/planning/targets/test_tflm.py's.)
"""

from __future__ import annotations

import struct

import pytest
from support.conformance import single_op_model
from support.detection_models import detect
from support.scratch_models import builtin_op_model, stacked
from support.tflm_oracle import run_tflm

from host.planning.libraries.reference import REFERENCE
from host.planning.model.lifetimes import walk
from host.planning.scratch import predict_tflm_head, scratch_requests, unknown_scratch_ops
from host.tflite.flatbuf import new_table, set_child
from host.tflite.model import Model
from host.tflite.modelgen import Graph, assemble, scalar_options
from host.tflite.ops import BUILTIN_NAMES

FLOAT32, INT64, INT16, INT8, INT4 = 0, 4, 7, 9, 17
TCONV = {0: ("B", 0), 1: ("i", 2), 2: ("i", 2)}  # SAME padding, stride 2
TCONV_SHAPE = struct.pack("<4i", 1, 4, 4, 2)
AXES_12 = {1: struct.pack("<2i", 1, 2)}
AXES_012 = {1: struct.pack("<3i", 0, 1, 2)}
KEEP, DROP = {0: ("B", 1)}, {0: ("B", 0)}
SINGLE_OPS = {
    # name: (builtin code, input shapes, output shape, dtype, options type, slots, constants)
    "ADD_N float, 3 inputs": (106, [(1, 8)] * 3, (1, 8), FLOAT32, 82, None, None),
    "ADD_N int8, 5 inputs": (106, [(1, 8)] * 5, (1, 8), INT8, 82, None, None),
    "MEAN int8": (40, [(1, 4, 6, 8), (2,)], (1, 1, 1, 8), INT8, 27, KEEP, AXES_12),
    "MEAN float": (40, [(1, 4, 6, 8), (2,)], (1, 1, 1, 8), FLOAT32, 27, KEEP, AXES_12),
    "SUM int8 rank 6": (74, [(1, 2, 3, 4, 5, 6), (1,)], (1, 2, 3, 4, 5), INT8, 27, DROP,
                        {1: struct.pack("<i", 5)}),
    "SUM float 3 axes": (74, [(2, 3, 4, 40), (3,)], (40,), FLOAT32, 27, DROP, AXES_012),
    "REDUCE_MAX int8": (82, [(2, 3, 4, 40), (3,)], (40,), INT8, 27, DROP, AXES_012),
    "REDUCE_MIN float rank 6": (89, [(1, 2, 3, 4, 5, 6), (1,)], (1, 2, 3, 4, 5), FLOAT32, 27,
                                DROP, {1: struct.pack("<i", 5)}),
    "CONV_2D int8 (none)": (3, [(1, 5, 5, 2), (4, 3, 3, 2)], (1, 3, 3, 4), INT8, 1,
                            {0: ("B", 1), 1: ("i", 1), 2: ("i", 1)},
                            {1: (bytes(range(72)), INT8)}),
    "CONV_2D int4 filter": (3, [(1, 5, 5, 2), (4, 3, 3, 2)], (1, 3, 3, 4), INT8, 1,
                            {0: ("B", 1), 1: ("i", 1), 2: ("i", 1)},
                            {1: (bytes(range(36)), INT4)}),
    "DEPTHWISE_CONV_2D int4 filter": (4, [(1, 5, 5, 4), (1, 3, 3, 4)], (1, 3, 3, 4), INT8, 2,
                                      {0: ("B", 1), 1: ("i", 1), 2: ("i", 1), 3: ("i", 1)},
                                      {1: (bytes(range(18)), INT4)}),
    "FULLY_CONNECTED int4 filter": (9, [(1, 40), (10, 40)], (1, 10), INT8, 8, {0: ("b", 0)},
                                    {1: (bytes(range(200)), INT4)}),
    "FULLY_CONNECTED int8 (none)": (9, [(1, 40), (10, 40)], (1, 10), INT8, 8, {0: ("b", 0)},
                                    {1: (bytes(range(200)) * 2, INT8)}),
    "TRANSPOSE_CONV int8": (67, [(4,), (2, 3, 3, 3), (1, 2, 2, 3)], (1, 4, 4, 2), INT8, 49,
                            TCONV, {0: TCONV_SHAPE, 1: (bytes(range(54)), INT8)}),
    "TRANSPOSE_CONV float (none)": (67, [(4,), (2, 3, 3, 3), (1, 2, 2, 3)], (1, 4, 4, 2),
                                    FLOAT32, 49, TCONV,
                                    {0: TCONV_SHAPE, 1: (struct.pack("<54f", *range(54)),
                                                         FLOAT32)}),
    "TRANSPOSE_CONV int16, int64 bias": (67, [(4,), (2, 3, 3, 3), (1, 2, 2, 3), (2,)],
                                         (1, 4, 4, 2), INT16, 49, TCONV,
                                         {0: TCONV_SHAPE, 1: (bytes(range(54)), INT8),
                                          3: (bytes(16), INT64)}),
    "TRANSPOSE_CONV int16, int16 bias": (67, [(4,), (2, 3, 3, 3), (1, 2, 2, 3), (2,)],
                                         (1, 4, 4, 2), INT16, 49, TCONV,
                                         {0: TCONV_SHAPE, 1: (bytes(range(54)), INT8),
                                          3: (bytes(4), INT16)}),
    "MIRROR_PAD rank 5": (100, [(1, 2, 3, 4, 5), (5, 2)], (1, 2, 3, 4, 7), INT8, 77, None,
                          {1: struct.pack("<10i", *([0] * 8 + [1, 1]))}),
}  # fmt: skip


@pytest.mark.parametrize("case", SINGLE_OPS)
def test_single_operator_scratch_in_tflm(case: str) -> None:
    """Tensors pinned from 0 leave no gap: TFLM's head minus the tensors is the op's scratch."""
    _check_scratch_in_tflm(builtin_op_model(*SINGLE_OPS[case]), case)


@pytest.mark.parametrize(
    "options",
    [
        dict(boxes=30, classes=4, max_detections=7),
        dict(boxes=30, classes=4, max_detections=7, regular=True, per_class=3),
        dict(boxes=12, classes=20, background=False, max_detections=3, per_detection=2),
    ],
    ids=["fast", "regular", "more classes than detections"],
)
def test_detection_postprocess_scratch_in_tflm(options: dict) -> None:
    """TFLite_Detection_PostProcess's 11 requests, sized by boxes, classes and options."""
    case = detect("scratch", **options)
    _check_scratch_in_tflm(single_op_model(case), str(case))
    assert len(scratch_requests(Model(single_op_model(case)), REFERENCE)) == 11


def _check_scratch_in_tflm(data: bytes, case: str) -> None:
    model = Model(data, case)
    assert unknown_scratch_ops(model, REFERENCE) == []
    planned = stacked(model, 0)
    try:
        real = run_tflm(planned).head
    except RuntimeError as e:
        pytest.skip(f"{case}: this TFLM build does not run the operator: {e}")
    tensors_total = sum(lt.size for lt in walk(model).lifetimes)
    predicted = sum(-(-r.bytes // 16) * 16 for r in scratch_requests(model, REFERENCE))
    assert real - tensors_total == predicted
    assert predict_tflm_head(Model(planned), REFERENCE) == real
    assert predict_tflm_head(model, REFERENCE) == run_tflm(data).head


def test_unmodelled_ops_are_named() -> None:
    # REDUCE_PROD: TFLM has no kernel for it, so nothing is known of its scratch.
    axis = {1: struct.pack("<i", 0)}
    model = Model(builtin_op_model(81, [(2, 4), (1,)], (4,), FLOAT32, 27, DROP, axis))
    assert unknown_scratch_ops(model, REFERENCE) == ["subgraph 0 op 0 REDUCE_PROD"]
    assert scratch_requests(model, REFERENCE) == []  # what is known: nothing


def _i32(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


BOOL, INT32 = 6, 2
X4 = (1, 4, 4, 2)
POOL = {0: ("B", 1), 1: ("i", 2), 2: ("i", 2), 3: ("i", 2), 4: ("i", 2)}
UNARY = [
    "ABS",
    "RELU",
    "RELU6",
    "LOGISTIC",
    "TANH",
    "EXP",
    "LOG",
    "SQRT",
    "RSQRT",
    "SQUARE",
    "NEG",
    "FLOOR",
    "CEIL",
    "ROUND",
    "SIN",
    "COS",
    "ELU",
    "HARD_SWISH",
    "LEAKY_RELU",
    "SOFTMAX",
    "LOG_SOFTMAX",
    "ZEROS_LIKE",
    "L2_NORMALIZATION",
    "QUANTIZE",
    "CAST",
]
BINARY = [
    "ADD",
    "SUB",
    "MUL",
    "DIV",
    "MAXIMUM",
    "MINIMUM",
    "SQUARED_DIFFERENCE",
    "FLOOR_DIV",
    "FLOOR_MOD",
    "PRELU",
]
COMPARE = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]


# Operators listed as never requesting scratch, each in a small valid shape:
# name: (input shapes, output shape(s), options type, option slots, constants[, output type])
SCRATCH_FREE = {
    **{name: ([(1, 8)], (1, 8), 82, None, None) for name in UNARY},
    **{name: ([(1, 8), (1, 8)], (1, 8), 82, None, None) for name in BINARY},
    **{name: ([(4, 2), (4, 2)], (4, 2), 82, None, None, BOOL) for name in COMPARE},
    "PAD": ([X4, (4, 2)], (1, 6, 6, 2), 22, None, {1: _i32(0, 0, 1, 1, 1, 1, 0, 0)}),
    "PADV2": ([X4, (4, 2), (1,)], (1, 6, 6, 2), 43, None,
              {1: _i32(0, 0, 1, 1, 1, 1, 0, 0), 2: (struct.pack("<f", 0.0), FLOAT32)}),
    "CONCATENATION": ([X4, X4], (1, 4, 4, 4), 10, {0: ("i", 3)}, None),
    "GATHER": ([(5, 3), (2,)], (2, 3), 23, {0: ("i", 0)}, {1: _i32(1, 3)}),
    "GATHER_ND": ([(5, 3), (2, 1)], (2, 3), 83, None, {1: _i32(1, 3)}),
    "STRIDED_SLICE": ([X4, (4,), (4,), (4,)], (1, 2, 2, 2), 32, None,
                      {1: _i32(0, 0, 0, 0), 2: _i32(1, 4, 4, 2), 3: _i32(1, 2, 2, 1)}),
    "SLICE": ([X4, (4,), (4,)], (1, 2, 2, 2), 48, None,
              {1: _i32(0, 1, 1, 0), 2: _i32(1, 2, 2, 2)}),
    "TRANSPOSE": ([X4, (4,)], (1, 2, 4, 4), 26, None, {1: _i32(0, 3, 1, 2)}),
    "RESIZE_NEAREST_NEIGHBOR": ([X4, (2,)], (1, 8, 8, 2), 74, None, {1: _i32(8, 8)}),
    "RESIZE_BILINEAR": ([X4, (2,)], (1, 8, 8, 2), 15, None, {1: _i32(8, 8)}),
    "SPLIT": ([(1,), X4], [(1, 4, 4, 1)] * 2, 35, {0: ("i", 2)}, {0: _i32(3)}),
    "SPLIT_V": ([X4, (2,), (1,)], [(1, 4, 4, 1)] * 2, 79, {0: ("i", 2)},
                {1: _i32(1, 1), 2: _i32(3)}),
    "PACK": ([(4, 2), (4, 2)], (2, 4, 2), 59, {0: ("i", 2), 1: ("i", 0)}, None),
    "UNPACK": ([(2, 4, 2)], [(4, 2)] * 2, 64, {0: ("i", 2), 1: ("i", 0)}, None),
    "RESHAPE": ([X4, (2,)], (1, 32), 17, None, {1: _i32(1, 32)}),
    "SQUEEZE": ([(1, 4, 1, 2)], (4, 2), 30, None, None),
    "EXPAND_DIMS": ([(4, 2), (1,)], (1, 4, 2), 52, None, {1: _i32(0)}),
    "AVERAGE_POOL_2D": ([X4], (1, 2, 2, 2), 5, POOL, None),
    "MAX_POOL_2D": ([X4], (1, 2, 2, 2), 5, POOL, None),
    "L2_POOL_2D": ([X4], (1, 2, 2, 2), 5, POOL, None),
    "ARG_MAX": ([X4, (1,)], (1, 4, 4), 40, {0: ("b", INT32)}, {1: _i32(3)}, INT32),
    "ARG_MIN": ([X4, (1,)], (1, 4, 4), 57, {0: ("b", INT32)}, {1: _i32(3)}, INT32),
    "CUMSUM": ([X4, (1,)], X4, 102, None, {1: _i32(1)}),
    "DEPTH_TO_SPACE": ([(1, 2, 2, 8)], X4, 94, {0: ("i", 2)}, None),
    "SPACE_TO_DEPTH": ([X4], (1, 2, 2, 8), 19, {0: ("i", 2)}, None),
    "BATCH_TO_SPACE_ND": ([(4, 2, 2, 2), (2,), (2, 2)], X4, 24, None,
                          {1: _i32(2, 2), 2: _i32(0, 0, 0, 0)}),
    "SPACE_TO_BATCH_ND": ([X4, (2,), (2, 2)], (4, 2, 2, 2), 25, None,
                          {1: _i32(2, 2), 2: _i32(0, 0, 0, 0)}),
    "FILL": ([(2,), ()], (3, 4), 68, None, {0: _i32(3, 4)}),
    "SHAPE": ([X4], (4,), 55, {0: ("b", INT32)}, None, INT32),
    "BROADCAST_TO": ([(1, 2), (2,)], (3, 2), 104, None, {1: _i32(3, 2)}),
    "BROADCAST_ARGS": ([(2,), (2,)], (2,), 82, None, {0: _i32(1, 2), 1: _i32(3, 1)}, INT32),
    "SELECT_V2": ([(4, 2), (4, 2), (4, 2)], (4, 2), 98, None, {0: (bytes(8), BOOL)}),
    "EMBEDDING_LOOKUP": ([(2,), (5, 3)], (2, 3), 82, None,
                         {0: _i32(1, 3), 1: (struct.pack("<15f", *range(15)), FLOAT32)}),
    "REVERSE_V2": ([X4, (1,)], X4, 81, None, {1: _i32(1)}),
    "BATCH_MATMUL": ([(1, 4, 8), (1, 8, 3)], (1, 4, 3), 101, None, None),
    "DEQUANTIZE": ([(4, 2)], (4, 2), 38, None, None, FLOAT32),
    "LOGICAL_AND": ([(4, 2), (4, 2)], (4, 2), 62, None,
                    {0: (bytes(8), BOOL), 1: (bytes(8), BOOL)}, BOOL),
    "LOGICAL_OR": ([(4, 2), (4, 2)], (4, 2), 60, None,
                   {0: (bytes(8), BOOL), 1: (bytes(8), BOOL)}, BOOL),
    "LOGICAL_NOT": ([(4, 2)], (4, 2), 63, None, {0: (bytes(8), BOOL)}, BOOL),
}  # fmt: skip


@pytest.mark.parametrize("name", SCRATCH_FREE)
def test_ops_listed_without_scratch_request_none(name: str) -> None:
    """Ops modelled as never requesting scratch: TFLM's head is exactly the pinned tensors
    (float32 and int8 where this TFLM build has the kernel)."""
    code = {v: k for k, v in BUILTIN_NAMES.items()}[name]
    ins, out, opt_type, slots, consts, *out_type = SCRATCH_FREE[name]
    ran = []
    for dtype in (FLOAT32, INT8):
        data = builtin_op_model(code, ins, out, dtype, opt_type, slots, consts, *out_type)
        model = Model(data, name)
        assert (
            scratch_requests(model, REFERENCE) == [] and unknown_scratch_ops(model, REFERENCE) == []
        )
        try:
            real = run_tflm(stacked(model, 0)).head
        except RuntimeError:
            continue  # no kernel for this type in TFLM; the other type may run
        assert real == sum(lt.size for lt in walk(model).lifetimes)
        ran.append(dtype)
    if not ran:
        pytest.skip(f"this TFLM build runs {name} for neither float32 nor int8 here")


def _svdf_model(dtype: int, batch: int, filters: int, rank: int, memory: int) -> bytes:
    """One SVDF operator with its variable activation state (as TFLM's SVDF Prepare expects)."""
    units, n_in = filters // rank, 8
    int8 = dtype == INT8
    wtype, btype, stype = (INT8, INT32, INT16) if int8 else (FLOAT32, FLOAT32, FLOAT32)
    g = Graph()
    x = g.tensor("in", (batch, n_in), dtype, [0.05], [0])
    wf = g.tensor("feature", (filters, n_in), wtype, [0.05], [0],
                  bytes(filters * n_in * (1 if int8 else 4)))  # fmt: skip
    wt = g.tensor("time", (filters, memory), stype, [0.05], [0],
                  bytes(filters * memory * (2 if int8 else 4)))  # fmt: skip
    b = g.tensor("bias", (units,), btype, [0.05 * 0.05], [0], bytes(units * 4))
    state = new_table("Tensor", {1: ("b", stype), 2: ("I", 0), 5: ("B", 1)}, 10)
    set_child(state, 0, struct.pack("<2i", batch, memory * filters))
    set_child(state, 3, b"state")
    q = new_table("QuantizationParameters", {}, 7)
    set_child(q, 2, struct.pack("<f", 0.05))
    set_child(q, 3, struct.pack("<q", 0))
    set_child(state, 4, q)
    g.tensors.append(state)
    out = g.tensor("out", (batch, units), dtype, [0.05], [0])
    g.op(27, [x, wf, wt, b, len(g.tensors) - 2], [out], 6, scalar_options({0: ("i", rank)}, 3))
    return assemble(g, [x], [out])


@pytest.mark.parametrize("dtype", [FLOAT32, INT8])
def test_svdf_scratch_in_tflm(dtype: int) -> None:
    model = Model(_svdf_model(dtype, batch=2, filters=12, rank=2, memory=3))
    reqs = [r.bytes for r in scratch_requests(model, REFERENCE)]
    # int32 / float per batch x filter; int8 also int32 per batch x unit.
    assert reqs == ([2 * 12 * 4] if dtype == FLOAT32 else [2 * 12 * 4, 2 * 6 * 4])
    real = run_tflm(stacked(model, 0)).head
    assert real - sum(lt.size for lt in walk(model).lifetimes) == sum(
        -(-b // 16) * 16 for b in reqs
    )
    assert predict_tflm_head(model, REFERENCE) == run_tflm(model.to_bytes()).head
