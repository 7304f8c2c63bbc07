"""The conditions TFLM's reference kernels check in Prepare that decide what a model computes:
TFLM refuses a model that breaks one (or stops on a failed check), where a runtime that went on
would compute something else (bytes copied under another quantization, a lookup table for
another scale). One table: host.plan's verdict on TFLM (tflm_refusal) reads it,
docs/operators.md lists it (tools/gen_operators_doc.py), and tests/planning/tflm/test_prepare.py
builds a model breaking each row and checks that the pip TFLM, this runtime and host.plan all
refuse it. The facts come from TFLM's kernel sources, read, and from the pip TFLM, run."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from host.planning.model.operands import (
    FLOAT32,
    INT8,
    INT16,
    builtin_options,
    input_tensor,
    output_tensor,
    quantization,
    quantization_table,
)
from host.tflite.model import Model, Operator, Subgraph, Tensor

Broken = Callable[[Model, Subgraph, Operator], bool]


@dataclass(frozen=True)
class Condition:
    """One row: for these operators, when input 0 has one of `types` (any type when empty),
    TFLM's Prepare wants `text`; `broken` says whether an operator breaks it. A few checks
    TFLM makes only when the operator is first invoked (`at_invoke`): it loads the model, then
    every invoke fails."""

    key: str  # names the row in the tests
    ops: tuple[str, ...]
    types: tuple[str, ...]
    text: str
    broken: Broken
    at_invoke: bool = False

    def says(self) -> str:
        return f"{self.text} (checked when invoked)" if self.at_invoke else self.text


def _q(model: Model, t: Tensor | None) -> tuple[float, int]:
    """TFLM's params.scale and params.zero_point: the first of each, 0 when not quantized."""
    if t is None:
        return 0.0, 0
    scales, zeros = quantization(model, t)
    return (scales[0] if scales else 0.0), (zeros[0] if zeros else 0)


def _ins(sg: Subgraph, op: Operator) -> list[Tensor]:
    return [t for i in range(len(op.inputs)) if (t := input_tensor(sg, op, i)) is not None]


def _pool(model: Model, sg: Subgraph, op: Operator) -> bool:
    (xs, xz), (ys, yz) = _q(model, input_tensor(sg, op, 0)), _q(model, output_tensor(sg, op, 0))
    return abs(np.float32(xs) - np.float32(ys)) > 1e-6 or xz != yz


def _concat_int8(model: Model, sg: Subgraph, op: Operator) -> bool:
    y = _q(model, output_tensor(sg, op, 0))
    return any(_q(model, x) != y for x in _ins(sg, op))


def _zero_points(*which: str) -> Broken:
    """Some of the inputs ("in": every one, "in0", "in1") and the output ("out") need zero
    point 0."""

    def broken(model: Model, sg: Subgraph, op: Operator) -> bool:
        tensors = [output_tensor(sg, op, 0)] if "out" in which else []
        if "in" in which:
            tensors += _ins(sg, op)
        tensors += [input_tensor(sg, op, int(w[2:])) for w in which if w.startswith("in") and w[2:]]
        return any(_q(model, t)[1] != 0 for t in tensors if t is not None)

    return broken


def _output_is(zero_point: int, scale: float, tolerance: float | None = None) -> Broken:
    """The output quantized with this zero point and scale (exactly in float32, or within
    `tolerance`)."""

    def broken(model: Model, sg: Subgraph, op: Operator) -> bool:
        s, z = _q(model, output_tensor(sg, op, 0))
        want = np.float32(scale)
        off = np.float32(s) != want if tolerance is None else abs(np.float32(s) - want) > tolerance
        return bool(off) or z != zero_point

    return broken


def _out_type(t: int) -> Callable[[Subgraph, Operator], bool]:
    def has(sg: Subgraph, op: Operator) -> bool:
        y = output_tensor(sg, op, 0)
        return y is not None and y.type == t

    return has


def _when(test: Callable[[Subgraph, Operator], bool], then: Broken) -> Broken:
    return lambda model, sg, op: test(sg, op) and then(model, sg, op)


def _pad_constant(model: Model, sg: Subgraph, op: Operator) -> bool:
    value = input_tensor(sg, op, 2)
    return value is not None and _q(model, value) != _q(model, output_tensor(sg, op, 0))


def _rank_above(limit: int, tensor: str = "in") -> Broken:
    def broken(model: Model, sg: Subgraph, op: Operator) -> bool:
        t = input_tensor(sg, op, 0) if tensor == "in" else output_tensor(sg, op, 0)
        return t is not None and len(t.shape) > limit

    return broken


def _add_sub_multiplier(model: Model, sg: Subgraph, op: Operator) -> bool:
    a, b = _q(model, input_tensor(sg, op, 0))[0], _q(model, input_tensor(sg, op, 1))[0]
    y = output_tensor(sg, op, 0)
    left_shift = 20 if y is not None and y.type == INT8 else 15
    ratio = 2.0 * max(a, b) / ((1 << left_shift) * _q(model, y)[0]) if _q(model, y)[0] else 1.0
    return not ratio < 1.0


def _sum_multiplier(model: Model, sg: Subgraph, op: Operator) -> bool:
    """CUMSUM's and ADD_N's int8 rescaling: 2 x the input scale / (2^20 x the output scale)
    below 1."""
    x, y = _q(model, input_tensor(sg, op, 0))[0], _q(model, output_tensor(sg, op, 0))[0]
    return not (y and 2.0 * x / ((1 << 20) * y) < 1.0)


def _fc_bias(model: Model, sg: Subgraph, op: Operator) -> bool:
    w, bias = input_tensor(sg, op, 1), input_tensor(sg, op, 2)
    if w is None or bias is None or len(quantization(model, w)[0]) > 1:
        return False
    product = _q(model, input_tensor(sg, op, 0))[0] * _q(model, w)[0]
    out = _q(model, output_tensor(sg, op, 0))[0]
    return not (out and abs(product - _q(model, bias)[0]) / out <= 0.02)


# Operator -> (BuiltinOptions type, slot of fused_activation_function).
FUSED = {
    "CONV_2D": (1, 3), "DEPTHWISE_CONV_2D": (2, 4), "AVERAGE_POOL_2D": (5, 5),
    "MAX_POOL_2D": (5, 5), "FULLY_CONNECTED": (8, 0), "CONCATENATION": (10, 1),
    "ADD": (11, 0), "MUL": (21, 0), "SUB": (28, 0),
}  # fmt: skip
RELU_N1_TO_1, RELU6 = 2, 3  # ActivationFunctionType
ACTIVATION_CHECKED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL", "SUB")


def _activation_overflows(model: Model, sg: Subgraph, op: Operator) -> bool:
    """TFLM quantizes a fused RELU6's 6 (RELU_N1_TO_1's 1) by the output scale, rounding in
    float, and refuses a result outside int32."""
    kind, slot = FUSED[op.name]
    act = _option(model, sg, op, kind, slot, "b")
    bound = {RELU6: 6.0, RELU_N1_TO_1: 1.0}.get(act)
    scale = np.float32(_q(model, output_tensor(sg, op, 0))[0])
    if bound is None or scale == 0:
        return False
    with np.errstate(over="ignore"):
        q = float(np.round(np.float32(bound) / scale))
    return not -(2.0**31) <= q <= 2.0**31


def _softmax_beta(model: Model, sg: Subgraph, op: Operator) -> bool:
    """int8 SOFTMAX: beta x input scale x 2^26 (capped at 2^31 - 1) above 1."""
    beta = builtin_options(model, sg.index, op.index, SOFTMAX_OPTIONS)
    b = beta.scalar(0, "f", 0.0) if beta is not None else 0.0
    real = min(float(b) * _q(model, input_tensor(sg, op, 0))[0] * 2**26, 2**31 - 1)
    return not real > 1.0


def _add_n(model: Model, sg: Subgraph, op: Operator) -> bool:
    first = _q(model, input_tensor(sg, op, 0))
    return any(_q(model, x) != first for x in _ins(sg, op))


def _svdf_bias(model: Model, sg: Subgraph, op: Operator) -> bool:
    bias, state, time = (input_tensor(sg, op, i) for i in (3, 4, 2))
    if bias is None:
        return False
    product = np.float32(_q(model, state)[0]) * np.float32(_q(model, time)[0])
    return not abs(float(_q(model, bias)[0]) - float(product)) < 1e-5


def _types_differ(model: Model, sg: Subgraph, op: Operator) -> bool:
    x, y = input_tensor(sg, op, 0), output_tensor(sg, op, 0)
    return x is not None and y is not None and x.type != y.type


# BuiltinOptions union types and the option slots read here.
L2NORM_OPTIONS, RESIZE_BILINEAR_OPTIONS, GATHER_OPTIONS, SOFTMAX_OPTIONS = 12, 15, 23, 9
QUANT_DIMENSION = 6  # QuantizationParameters.quantized_dimension


def _option(model: Model, sg: Subgraph, op: Operator, kind: int, slot: int, fmt: str) -> int:
    opts = builtin_options(model, sg.index, op.index, kind)
    return opts.scalar(slot, fmt, 0) if opts is not None else 0


def _at_least_one(multiplier: float) -> bool:
    """Whether QuantizeMultiplier's split of a positive multiplier has an exponent above 0 (a
    multiplier of 1 or more once its 31-bit mantissa is rounded): a check TFLM stops on."""
    if multiplier == 0:
        return False
    q, exponent = math.frexp(multiplier)
    if math.floor(q * 2**31 + 0.5) == 2**31:
        exponent += 1
    return exponent > 0


def _hard_swish_multiplier(model: Model, sg: Subgraph, op: Operator) -> bool:
    """(input scale / 128) / output scale below 1 after rounding. TFLM's source divides in
    float, but the pip TFLM computes as in double (its outputs; the runtime does the same)."""
    x, y = _q(model, input_tensor(sg, op, 0))[0], _q(model, output_tensor(sg, op, 0))[0]
    hires = float(np.float32(np.float32(1 / 128) * np.float32(x)))
    return y == 0 or _at_least_one(hires / float(np.float32(y)))


def _comparison_scales(model: Model, sg: Subgraph, op: Operator) -> bool:
    """Each int8/uint8 input's scale is its own multiplier, which TFLM wants below 1."""
    return any(_at_least_one(float(np.float32(_q(model, t)[0]))) for t in _ins(sg, op)[:2])


def _same_shape(model: Model, sg: Subgraph, op: Operator) -> bool:
    x, y = input_tensor(sg, op, 0), output_tensor(sg, op, 0)
    return x is not None and y is not None and tuple(x.shape) != tuple(y.shape)


def _inputs_differ_in_shape(model: Model, sg: Subgraph, op: Operator) -> bool:
    return len({tuple(t.shape) for t in _ins(sg, op)}) > 1


def _l2norm(model: Model, sg: Subgraph, op: Operator) -> bool:
    return _rank_above(4)(model, sg, op) or _option(model, sg, op, L2NORM_OPTIONS, 0, "b") != 0


def _resize_flags(model: Model, sg: Subgraph, op: Operator) -> bool:
    align = _option(model, sg, op, RESIZE_BILINEAR_OPTIONS, 2, "B")
    return bool(align and _option(model, sg, op, RESIZE_BILINEAR_OPTIONS, 3, "B"))


def _gather_dims(model: Model, sg: Subgraph, op: Operator) -> bool:
    x, coords = input_tensor(sg, op, 0), input_tensor(sg, op, 1)
    if x is None or coords is None:
        return False
    rank, index_rank = len(x.shape), len(coords.shape)
    axis = _option(model, sg, op, GATHER_OPTIONS, 0, "i")
    batch = _option(model, sg, op, GATHER_OPTIONS, 1, "i")
    axis += rank if axis < 0 else 0
    batch += index_rank if batch < 0 else 0
    if not (0 <= axis < rank and 0 <= batch < rank and batch <= axis and batch <= index_rank):
        return True
    return tuple(x.shape[:batch]) != tuple(coords.shape[:batch])


def _channel_scales(model: Model, sg: Subgraph, op: Operator) -> bool:
    """A per-channel filter with as many scales as its quantized dimension has channels."""
    w = input_tensor(sg, op, 1)
    if w is None:
        return False
    scales = quantization(model, w)[0]
    q = quantization_table(model, w)
    axis = q.scalar(QUANT_DIMENSION, "i", 0) if q is not None else 0
    channels = w.shape[axis] if 0 <= axis < len(w.shape) else -1
    return len(scales) > 1 and len(scales) != channels


def _one_scale(model: Model, sg: Subgraph, op: Operator) -> bool:
    y = output_tensor(sg, op, 0)
    return y is not None and len(quantization(model, y)[0]) != 1


def _embedding_zero_point(model: Model, sg: Subgraph, op: Operator) -> bool:
    value, y = input_tensor(sg, op, 1), output_tensor(sg, op, 0)
    if value is None or y is None or value.type != INT8 or y.type != FLOAT32:
        return False
    return _q(model, value)[1] != 0


def _not_float_output(model: Model, sg: Subgraph, op: Operator) -> bool:
    y = output_tensor(sg, op, 0)
    return y is not None and y.type != FLOAT32


I8, I16 = ("INT8",), ("INT16",)
Q = ("INT8", "INT16")
COMPARISON_OPS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
SAME_TYPE_OPS = (
    "CONV_2D", "FULLY_CONNECTED", "PAD", "PADV2", "RESHAPE", "CONCATENATION", "LOGISTIC",
    "TANH", "TRANSPOSE", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND", "LEAKY_RELU", "L2_NORMALIZATION", "LOG_SOFTMAX", "BROADCAST_TO",
    "ABS", "SIN", "COS", "LOG", "SQRT", "RSQRT", "SQUARE", "LOGICAL_NOT", "ADD_N", "CEIL",
    "ROUND", "EXP", "ELU", "CUMSUM", "DIV", "FLOOR_DIV", "FLOOR_MOD", "L2_POOL_2D",
    "REVERSE_V2", "PRELU", "BATCH_MATMUL", "AVERAGE_POOL_2D", "MAX_POOL_2D", "BROADCAST_ARGS",
)  # fmt: skip
CONDITIONS = [
    Condition("pool quantization", ("AVERAGE_POOL_2D", "MAX_POOL_2D"), Q,
              "output scale within 1e-6 of the input's, the same zero point", _pool),
    Condition("concatenation int8", ("CONCATENATION",), I8,
              "every input's scale and zero point equal to the output's", _concat_int8),
    Condition("concatenation int16", ("CONCATENATION",), I16,
              "zero point 0 on every input and the output", _zero_points("in", "out")),
    Condition("pad constant", ("PAD", "PADV2"), I8,
              "a constant pad value quantized as the output (scale and zero point)",
              _pad_constant),
    Condition("pad rank", ("PAD", "PADV2"), (), "input rank at most 5", _rank_above(5)),
    Condition("transpose rank", ("TRANSPOSE",), (), "input rank at most 5", _rank_above(5)),
    Condition("strided slice rank", ("STRIDED_SLICE",), (), "input rank at most 4",
              _rank_above(4)),
    Condition("broadcast_to rank", ("BROADCAST_TO",), (), "output rank at most 5",
              _rank_above(5, "out")),
    Condition("add sub multiplier", ("ADD", "SUB"), Q,
              "output scale above 2 x the larger input scale / 2^20 (int8) or 2^15 (int16): "
              "an output multiplier of 1 or more fails a check that stops the program",
              _add_sub_multiplier),
    Condition("mul int16", ("MUL",), I16, "zero point 0 on both inputs and the output",
              _zero_points("in", "out")),
    Condition("relu int16", ("RELU",), I16, "zero point 0 on the input and the output",
              _zero_points("in0", "out")),
    Condition("logistic int8", ("LOGISTIC",), I8, "output zero point -128",
              lambda m, sg, op: _q(m, output_tensor(sg, op, 0))[1] != -128),
    Condition("logistic tanh int16", ("LOGISTIC", "TANH"), I16,
              "zero point 0 on the input and the output", _zero_points("in0", "out")),
    Condition("softmax int8", ("SOFTMAX",), I8,
              "an int8 output quantized with zero point -128 and scale 1/256 exactly; an int16 "
              "output with zero point -32768 and scale 1/65536 (within 0.1%)",
              lambda m, sg, op: _when(_out_type(INT8), _output_is(-128, 1 / 256))(m, sg, op)
              or _when(_out_type(INT16), _output_is(-32768, 1 / 65536, 1e-3 / 65536))(m, sg, op)),
    Condition("softmax beta", ("SOFTMAX",), I8,
              "beta x input scale x 2^26 above 1: a failed check stops the program otherwise",
              _softmax_beta),
    Condition("softmax int16", ("SOFTMAX",), I16,
              "zero point 0 on the input and the output, output scale 1/32768 (within 0.1%)",
              lambda m, sg, op: _zero_points("in0", "out")(m, sg, op)
              or _output_is(0, 1 / 32768, 1e-3 / 32768)(m, sg, op)),
    Condition("log_softmax int8", ("LOG_SOFTMAX",), I8,
              "output zero point 127 and scale 16/256 exactly", _output_is(127, 16 / 256)),
    Condition("batch_matmul int16", ("BATCH_MATMUL",), I16,
              "zero point 0 on both inputs and the output", _zero_points("in", "out")),
    Condition("squared_difference int16", ("SQUARED_DIFFERENCE",), I16,
              "zero point 0 on both inputs and the output", _zero_points("in", "out")),
    Condition("add_n int8", ("ADD_N",), I8, "every input quantized as the first", _add_n),
    Condition("reduce min max int8", ("REDUCE_MAX", "REDUCE_MIN"), I8,
              "the output quantized as the input (scale and zero point)",
              lambda m, sg, op: _q(m, input_tensor(sg, op, 0)) != _q(m, output_tensor(sg, op, 0)),
              at_invoke=True),
    Condition("sum multiplier", ("CUMSUM", "ADD_N"), I8,
              "output scale above 2 x the input scale / 2^20: an output multiplier of 1 or "
              "more fails a check that stops the program", _sum_multiplier),
    Condition("fully_connected bias", ("FULLY_CONNECTED",), Q,
              "with a per-tensor filter and a bias: the bias scale within 2% of the output "
              "scale of the input scale x the filter scale", _fc_bias),
    # Pools print the same failed check but go on (TFLM loads them); the runtime refuses.
    Condition("fused activation range", ACTIVATION_CHECKED, Q,
              "a fused RELU6 or RELU_N1_TO_1 whose bound (6 or 1) divided by the output scale "
              "fits int32", _activation_overflows),
    Condition("concatenation activation", ("CONCATENATION",), (), "no fused activation",
              lambda m, sg, op: _option(m, sg, op, *FUSED["CONCATENATION"], "b") != 0),
    Condition("svdf bias", ("SVDF",), I8,
              "a bias scale within 1e-5 of the state scale times the time weights' scale",
              _svdf_bias),
    Condition("hard_swish multiplier", ("HARD_SWISH",), I8,
              "output scale above the input scale / 128 (a multiplier below 1)",
              _hard_swish_multiplier),
    Condition("comparison scales", COMPARISON_OPS, ("INT8", "UINT8"),
              "input scales below 1", _comparison_scales),
    Condition("l2norm", ("L2_NORMALIZATION",), (), "input rank at most 4, no fused activation",
              _l2norm),
    Condition("resize flags", ("RESIZE_BILINEAR",), (),
              "not both align_corners and half_pixel_centers", _resize_flags),
    Condition("quantize one scale", ("QUANTIZE",), (), "one output scale (per tensor)",
              _one_scale),
    Condition("channel scales", ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"), Q,
              "filter scales: one, or one per channel of its quantized dimension",
              _channel_scales),
    Condition("gather dims", ("GATHER",), (),
              "0 <= batch_dims <= axis < input rank, batch_dims <= index rank, the first "
              "batch_dims dimensions of input and indices equal", _gather_dims),
    Condition("same shape", ("CUMSUM", "LOG_SOFTMAX"), (), "the output of the input's shape",
              _same_shape),
    Condition("add_n shapes", ("ADD_N",), (), "inputs of one shape", _inputs_differ_in_shape),
    Condition("embedding zero point", ("EMBEDDING_LOOKUP",), (),
              "an int8 table read as float32 with zero point 0", _embedding_zero_point),
    Condition("dequantize output", ("DEQUANTIZE",), (), "a float32 output", _not_float_output),
    Condition("same type", SAME_TYPE_OPS, (), "the output of input 0's type", _types_differ),
]  # fmt: skip


def broken_conditions(model: Model, sg: Subgraph, op: Operator) -> list[Condition]:
    """The rows of CONDITIONS this operator breaks."""
    x = input_tensor(sg, op, 0)
    kind = x.type_name if x is not None else ""
    return [
        c
        for c in CONDITIONS
        if op.name in c.ops and (not c.types or kind in c.types) and c.broken(model, sg, op)
    ]


def prepare_refusals(model: Model) -> list[str]:
    """Each operator that breaks a condition, with the conditions it breaks."""
    out = []
    for sg in model.subgraphs:
        for op in sg.operators:
            broken = broken_conditions(model, sg, op)
            if broken:
                why = "; ".join(c.says() for c in broken)
                out.append(f"subgraph {sg.index} op {op.index} {op.name} (TFLM wants {why})")
    return out
