"""The operator facts the band rewrite (host.rewrite.bands) and its graph check
(host.rewrite.graph_check) share: the operators a stage may hold, the options slots and tensor
type codes they read, reading options and int32 constants, and how the rewrite names a band's
tensors."""

from __future__ import annotations

import re
import struct

from host.tflite import schema as S
from host.tflite.flatbuf import Table
from host.tflite.model import Model, Operator, Subgraph, Tensor

WINDOWED = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D")
PADS = ("PAD", "PADV2")
UNARY = (
    "RELU",
    "RELU6",
    "RELU_N1_TO_1",
    "LOGISTIC",
    "TANH",
    "QUANTIZE",
    "DEQUANTIZE",
    "HARD_SWISH",
    "LEAKY_RELU",
)
BINARY = ("ADD", "MUL", "SUB")
SAME, VALID = 0, 1
# Options slots (schema.fbs): Conv2DOptions / DepthwiseConv2DOptions / Pool2DOptions.
OPT_PADDING = 0
CONV_STRIDE_H, CONV_DIL_H, DW_DIL_H, POOL_STRIDE_H, POOL_FILTER_H = 2, 5, 6, 2, 4
CONV_STRIDE_W, CONV_DIL_W, DW_DIL_W, POOL_STRIDE_W, POOL_FILTER_W = 1, 4, 5, 1, 3
INT32 = 2
FLOAT32, INT16, INT8 = 0, 7, 9
BAND_TAG = "band"  # a band's tensors are named <original name>/band<N>[/<what>]
_BAND_NAME = re.compile(rf"/{BAND_TAG}(\d+)(?:/|$)")


def _options(model: Model, op: Operator, sub: int = 0) -> Table | None:
    raw = model.root.get(S.MODEL_SUBGRAPHS)[sub].get(S.SUBGRAPH_OPERATORS)[op.index]
    return raw.get(S.OP_OPTIONS)


def concat_axis(model: Model, sub: Subgraph, op: Operator) -> int | None:
    """A CONCATENATION's axis, made non-negative (None if out of range)."""
    opts = _options(model, op, sub.index)
    rank = len(sub.tensors[op.outputs[0]].shape)
    axis = opts.scalar(0, "i", 0) if opts is not None else 0
    axis = axis + rank if axis < 0 else axis
    return axis if 0 <= axis < rank else None


def _consts_i32(model: Model, t: Tensor) -> list[int]:
    data = model.buffer_data(t.buffer)
    return list(struct.unpack(f"<{len(data) // 4}i", data))


def band_of(name: str) -> int | None:
    """The band a tensor of a rewritten model belongs to (by its name), None if none."""
    m = _BAND_NAME.search(name)
    return int(m.group(1)) if m else None
