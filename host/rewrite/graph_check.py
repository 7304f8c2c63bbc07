"""A band rewrite checked as a graph before it is written, and by `host.plan --check`.

Every tensor an operator of subgraph 0 reads or writes has a shape with no dimension below 1;
and every operator the rewrite wrote (one reading or writing a band's tensor, named
<name>/bandN...; the operators before and after the stage are the original's) has the output
shape its inputs and options give, and the conditions TFLM's Prepare checks for the operators
the rewrite adds hold (STRIDED_SLICE, PAD / PADV2, CONCATENATION), with the quantization
equalities the rewrite relies on (a slice, a pad or a join copies bytes: its input and output
must mean the same values). A model failing this never runs as the original on TFLM or on
this runtime.
"""

from __future__ import annotations

from host.planning.model.operands import quantization
from host.rewrite import operators as ops
from host.tflite.model import Model, Operator, Subgraph, Tensor

MAX_CONCAT_INPUTS = 10  # TFLM's CONCATENATION (kMaxInputNum)
MAX_SLICE_RANK = 4  # TFLM's STRIDED_SLICE
MAX_PAD_RANK = 5  # TFLM's PAD (PadParams)
COPY_TYPES = {ops.FLOAT32, ops.INT16, ops.INT8, 2}  # STRIDED_SLICE / PAD / CONCATENATION (+ int32)
QUANTIZED = (ops.INT16, ops.INT8)


def problems(model: Model) -> list[str]:
    """What keeps the model's subgraph 0 from running as written (empty: nothing found)."""
    if not model.subgraphs:
        return ["the model has no subgraph"]
    sub = model.subgraphs[0]
    out: list[str] = []
    for op in sub.operators:
        where = f"operator {op.index} ({op.name})"
        used = [sub.tensors[i] for i in list(op.inputs) + list(op.outputs) if i >= 0]
        # Shape [0] on a constant is a legacy scalar, which TFLM accepts.
        empty = [t for t in used if not t.is_const and any(d < 1 for d in t.shape)]
        if empty:
            t = empty[0]
            out.append(f"{where}: tensor {t.index} ({t.name}) has shape {list(t.shape)}")
            continue
        if any(ops.band_of(t.name) is not None for t in used):  # the rest is the original's
            out += [f"{where}: {p}" for p in _operator(model, sub, op)]
    return out


def _operator(model: Model, sub: Subgraph, op: Operator) -> list[str]:
    if len(op.outputs) != 1 or op.outputs[0] < 0:
        return []
    y = sub.tensors[op.outputs[0]]
    ins = [sub.tensors[i] if i >= 0 else None for i in op.inputs]
    if op.name == "STRIDED_SLICE":
        return _strided_slice(model, ins, y, ops._options(model, op))
    if op.name in ops.PADS:
        return _pad(model, ins, y)
    if op.name == "CONCATENATION":
        return _concatenation(model, sub, op, ins, y)
    if op.name in ops.WINDOWED:
        return _window(model, sub, op, ins, y)
    if op.name in ops.UNARY + ops.BINARY:
        x = ins[0]
        if x is not None and x.shape != y.shape and op.name in ops.UNARY:
            return [f"output shape {list(y.shape)}, its input's {list(x.shape)}"]
    return []


def _consts(model: Model, t: Tensor | None) -> list[int] | None:
    if t is None or not t.is_const or t.type != ops.INT32:
        return None
    return ops._consts_i32(model, t)


def _same_meaning(model: Model, a: Tensor, b: Tensor, what: str) -> list[str]:
    """A byte copied from a to b means the same value: same type, and for int8/int16 the same
    scale and zero point."""
    if a.type != b.type:
        return [f"{what} is {a.type_name}, the output {b.type_name}"]
    if a.type in QUANTIZED and quantization(model, a) != quantization(model, b):
        return [f"{what} and the output are quantized differently"]
    return []


def _strided_slice(model: Model, ins: list, y: Tensor, opts) -> list[str]:
    if len(ins) != 4 or ins[0] is None:
        return ["needs 4 inputs"]
    x = ins[0]
    args = [_consts(model, t) for t in ins[1:]]
    if any(a is None or len(a) != len(x.shape) for a in args):
        return [f"begin, end and strides must be int32 constants of {len(x.shape)} values"]
    if len(x.shape) > MAX_SLICE_RANK or x.type not in COPY_TYPES:
        return [f"a rank-{len(x.shape)} {x.type_name} input (TFLM: rank <= 4, float32, int8, "
                "int16, int32)"]  # fmt: skip
    if opts is not None and any(opts.scalar(s, "i", 0) for s in range(5)):
        return ["masks set (the rewrite writes none)"]
    begin, end, strides = args  # type: ignore[misc]
    want = []
    for n, a, b, s in zip(x.shape, begin, end, strides, strict=True):
        if s != 1 or not 0 <= a <= b <= n:
            return [f"slice [{a}, {b}) step {s} of an axis of {n} (the rewrite writes steps of 1 "
                    "inside the axis)"]  # fmt: skip
        want.append(b - a)
    problems = _same_meaning(model, x, y, "the input")
    if list(y.shape) != want:
        problems.append(f"output shape {list(y.shape)}, the slice gives {want}")
    return problems


def _pad(model: Model, ins: list, y: Tensor) -> list[str]:
    if len(ins) < 2 or ins[0] is None:
        return ["needs an input and paddings"]
    x = ins[0]
    pads = _consts(model, ins[1])
    rank = len(x.shape)
    if pads is None or len(pads) != 2 * rank or ins[1].shape != (rank, 2):
        return [f"paddings must be an int32 constant [{rank}, 2]"]
    if rank > MAX_PAD_RANK or x.type not in COPY_TYPES:
        return [f"a rank-{rank} {x.type_name} input (TFLM: rank <= 5, float32, int8, int16, "
                "int32)"]  # fmt: skip
    problems = _same_meaning(model, x, y, "the input")
    if any(p < 0 for p in pads):
        problems.append(f"negative paddings {pads}")
    want = [n + pads[2 * d] + pads[2 * d + 1] for d, n in enumerate(x.shape)]
    if list(y.shape) != want:
        problems.append(f"output shape {list(y.shape)}, the paddings give {want}")
    value = ins[2] if len(ins) > 2 else None
    if value is not None:
        size = 1
        for d in value.shape:
            size *= d
        if size != 1 or not value.is_const:
            problems.append("its constant value must be one constant element")
        problems += _same_meaning(model, value, y, "the constant value")
    return problems


def _concatenation(model: Model, sub: Subgraph, op: Operator, ins: list, y: Tensor) -> list[str]:
    if not ins or any(t is None for t in ins):
        return ["an input is missing"]
    if len(ins) > MAX_CONCAT_INPUTS:
        return [f"{len(ins)} inputs (TFLM: at most {MAX_CONCAT_INPUTS})"]
    axis = ops.concat_axis(model, sub, op)
    opts = ops._options(model, op)
    if axis is None:
        return ["axis outside the output's rank"]
    if opts is not None and opts.scalar(1, "b", 0):
        return ["a fused activation (the rewrite writes none)"]
    problems = []
    total = 0
    for k, t in enumerate(ins):
        problems += _same_meaning(model, t, y, f"input {k}")
        if len(t.shape) != len(y.shape) or any(
            a != b for d, (a, b) in enumerate(zip(t.shape, y.shape, strict=True)) if d != axis
        ):
            problems.append(f"input {k} shape {list(t.shape)} does not fit {list(y.shape)}")
        else:
            total += t.shape[axis]
    if not problems and total != y.shape[axis]:
        problems.append(f"inputs give {total} along axis {axis}, the output {y.shape[axis]}")
    return problems


def _window(model: Model, sub: Subgraph, op: Operator, ins: list, y: Tensor) -> list[str]:
    """Conv and pool output shapes as TFLM computes them (ComputePaddingHeightWidth), on
    [1, H, W, C] maps (what a stage holds; other shapes are left to the kernels' checks)."""
    x = ins[0] if ins else None
    if x is None or len(x.shape) != 4 or len(y.shape) != 4:
        return []
    opts = ops._options(model, op)
    if opts is None:
        return ["no options"]
    padding = opts.scalar(ops.OPT_PADDING, "B", ops.SAME)
    if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        if len(ins) < 2 or ins[1] is None or len(ins[1].shape) != 4:
            return []
        kh, kw = ins[1].shape[1], ins[1].shape[2]
        depthwise = op.name == "DEPTHWISE_CONV_2D"
        strides = (opts.scalar(ops.CONV_STRIDE_H, "i", 1), opts.scalar(ops.CONV_STRIDE_W, "i", 1))
        dh = opts.scalar(ops.DW_DIL_H if depthwise else ops.CONV_DIL_H, "i", 1)
        dw = opts.scalar(ops.DW_DIL_W if depthwise else ops.CONV_DIL_W, "i", 1)
        channels = ins[1].shape[3] if depthwise else ins[1].shape[0]
    else:
        kh, kw = opts.scalar(ops.POOL_FILTER_H, "i", 1), opts.scalar(ops.POOL_FILTER_W, "i", 1)
        strides = (opts.scalar(ops.POOL_STRIDE_H, "i", 1), opts.scalar(ops.POOL_STRIDE_W, "i", 1))
        dh = dw = 1
        channels = x.shape[3]
    if min(kh, kw, dh, dw, *strides) < 1:
        return [f"filter {kh}x{kw}, strides {list(strides)}, dilations {[dh, dw]}"]
    want = [x.shape[0], _out(x.shape[1], kh, strides[0], dh, padding),
            _out(x.shape[2], kw, strides[1], dw, padding), channels]  # fmt: skip
    if list(y.shape) != want:
        return [f"output shape {list(y.shape)}, its input and options give {want}"]
    return []


def _out(size: int, kernel: int, stride: int, dilation: int, padding: int) -> int:
    if padding == ops.SAME:
        return (size + stride - 1) // stride
    return (size - ((kernel - 1) * dilation + 1) + stride) // stride


def is_banded(model: Model) -> bool:
    """Was the model written by the band rewrite (a tensor of subgraph 0 named for a band)?"""
    return bool(model.subgraphs) and any(
        ops.band_of(t.name) is not None for t in model.subgraphs[0].tensors
    )
