"""Band rewrite: run a model's early stage in horizontal bands so its feature maps are never whole.

The stage is operators 0..cut of subgraph 0: it reads one tensor X (usually the model input) and
hands one tensor T (the cut) to the rest of the model. Each band computes rows [a, b) of T: it
slices the rows of X its receptive field needs (halo included) with STRIDED_SLICE, runs the
stage's operators on them with the same weights and quantization, VALID padding and, where the
original padded (at an image edge, or on the width), an explicit PAD first, so every value
equals the original's. A CONCATENATION on the height axis joins the bands into T, which keeps
its tensor index: the operators after the stage are untouched.

Why this is exact: a convolution skips padded taps, which contributes what a tap at the zero
point contributes (filter * (zero_point - zero_point) = 0), so its padding is the zero point; a
max pool skips them too, and a tap at the type's minimum (int8 -128, int16 -32768, float -inf)
never exceeds the running maximum, which starts at that minimum (every window of a SAME pool
holds at least one real tap), so its padding is that minimum (PADV2). An average pool divides by
the taps inside the image: one that pads is refused. PADDING holds the rule per operator.

Before a rewrite is returned it is checked as a graph (host.rewrite.graph_check): every tensor
non-empty, every shape as its operator infers it, the Prepare conditions TFLM checks for the
operators the rewrite adds. A band whose rows lie only in padding would slice 0 rows: such
bands are merged with a neighbour (merge_empty) or the bounds refused.
"""

from __future__ import annotations

import copy
import struct
from dataclasses import dataclass, field

from host.rewrite import graph_check
from host.rewrite.operators import (
    BAND_TAG,
    BINARY,
    CONV_DIL_H,
    CONV_DIL_W,
    CONV_STRIDE_H,
    CONV_STRIDE_W,
    DW_DIL_H,
    DW_DIL_W,
    FLOAT32,
    INT8,
    INT16,
    INT32,
    OPT_PADDING,
    PADS,
    POOL_FILTER_H,
    POOL_FILTER_W,
    POOL_STRIDE_H,
    POOL_STRIDE_W,
    SAME,
    UNARY,
    VALID,
    WINDOWED,
    _consts_i32,
    _options,
)
from host.tflite import schema as S
from host.tflite.flatbuf import Table, new_table, set_child
from host.tflite.model import Model, ModelError, Operator, Subgraph, Tensor
from host.tflite.ops import BUILTIN_CODES

SUPPORTED = WINDOWED + PADS + UNARY + BINARY
CONCAT_OPTIONS, PAD_OPTIONS, STRIDED_SLICE_OPTIONS, PADV2_OPTIONS = 10, 22, 32, 43
SLICEABLE = (FLOAT32, INT16, INT8)  # map types TFLM's STRIDED_SLICE, PAD and CONCATENATION take
TYPE_MINIMUM = {FLOAT32: struct.pack("<f", float("-inf")), INT16: struct.pack("<h", -32768),
                INT8: struct.pack("<b", -128)}  # fmt: skip
# How a band pads what the original operator pads implicitly (a window at an image edge, or the
# width of a SAME window); docs/bands.md's table is this one (tests/planning/test_band_fuzz.py).
ZERO_POINT, MINIMUM, REFUSED = "the zero point (PAD)", "the type's minimum (PADV2)", "refused"
PADDING = {
    "CONV_2D": ZERO_POINT,
    "DEPTHWISE_CONV_2D": ZERO_POINT,
    "MAX_POOL_2D": MINIMUM,
    "AVERAGE_POOL_2D": REFUSED,
}
MAX_BANDS = 10  # inputs of one CONCATENATION in TFLM (kMaxInputNum): more fail to prepare
OFFLINE_PLAN = b"OfflineMemoryAllocation"


class BandError(ModelError):
    """The stage cannot be split into bands; the message says why."""


class OperatorRefused(BandError):
    """An operator cannot run in bands: no stage containing it can be split."""


@dataclass(frozen=True)
class Window:
    """One spatial axis of a windowed operator: output i reads inputs i*stride - pad + j*dil."""

    kernel: int
    stride: int
    dilation: int
    pad_before: int
    pad_after: int

    def reads(self, lo: int, hi: int, size: int) -> tuple[int, int, int, int]:
        """Input rows [a, b) that output rows [lo, hi) read, inside the image, and the padding
        rows (before, after) the band needs outside it."""
        start = lo * self.stride - self.pad_before
        end = (hi - 1) * self.stride - self.pad_before + (self.kernel - 1) * self.dilation + 1
        return max(start, 0), min(end, size), max(0, -start), max(0, end - size)


def same_window(size: int, out: int, kernel: int, stride: int, dil: int, padding: int) -> Window:
    """TFLite's padding arithmetic (TFLM's ComputePaddingHeightWidth)."""
    eff = (kernel - 1) * dil + 1
    total = max((out - 1) * stride + eff - size, 0) if padding == SAME else 0
    return Window(kernel, stride, dil, total // 2, total - total // 2)


@dataclass
class StageOp:
    op: Operator
    kind: str  # "window", "pad" or "elementwise"
    rows: Window | None = None  # height axis (window ops)
    cols: Window | None = None  # width axis
    pads: tuple[tuple[int, int], ...] = ()  # PAD: per dimension (before, after)
    macs: int = 0  # multiply-accumulates per output row
    pad_with: str = ZERO_POINT  # window ops: how a band pads what the operator pads implicitly


@dataclass
class Stage:
    """Operators start..cut of subgraph 0, their one external input X and their output T."""

    sub: Subgraph
    ops: list[StageOp]
    x: int  # tensor index of the stage input
    t: int  # tensor index of the cut
    start: int = 0  # operators before it run whole, before the bands

    @property
    def t_tensor(self) -> Tensor:
        return self.sub.tensors[self.t]

    def produced(self) -> set[int]:
        return {o for s in self.ops for o in s.op.outputs}


def _activation(t: Tensor) -> bool:
    return not t.is_const and len(t.shape) == 4 and t.shape[0] == 1


def describe_op(model: Model, sub: Subgraph, op: Operator) -> StageOp:
    """How a stage operator maps output rows to input rows; BandError for what cannot be split."""
    name = op.name
    if name not in SUPPORTED:
        raise OperatorRefused(
            f"operator {op.index} ({name}) cannot run in bands (supported: {', '.join(SUPPORTED)})"
        )
    if len(op.outputs) != 1 or op.intermediates:
        raise OperatorRefused(f"operator {op.index} ({name}) has {len(op.outputs)} outputs")
    out = sub.tensors[op.outputs[0]]
    x = sub.tensors[op.inputs[0]]
    if not (_activation(out) and _activation(x)):
        raise OperatorRefused(f"operator {op.index} ({name}) is not on a [1, H, W, C] feature map")
    for t in (x, out):
        if t.type not in SLICEABLE:
            raise OperatorRefused(
                f"operator {op.index} ({name}) has a {t.type_name} map: bands slice, pad and "
                "join float32, int16 and int8 maps only"
            )
    if name in WINDOWED:
        return _window_op(model, sub, op, x, out)
    if name in PADS:
        pads_t = sub.tensors[op.inputs[1]]
        if not pads_t.is_const or pads_t.type != INT32:
            raise OperatorRefused(
                f"operator {op.index} (PAD) has paddings that are not int32 constants"
            )
        v = _consts_i32(model, pads_t)
        pads = tuple((v[2 * i], v[2 * i + 1]) for i in range(4))
        if pads[0] != (0, 0) or pads[3] != (0, 0):
            raise OperatorRefused(f"operator {op.index} (PAD) pads the batch or channel axis")
        return StageOp(op, "pad", pads=pads)
    for i in op.inputs[1:]:
        t = sub.tensors[i]
        if not t.is_const and t.shape != out.shape:
            raise OperatorRefused(f"operator {op.index} ({name}) broadcasts a feature map")
        if t.is_const and len(t.shape) == 4 and t.shape[1] not in (1,):
            raise OperatorRefused(f"operator {op.index} ({name}) has a constant varying over rows")
    return StageOp(op, "elementwise")


def _window_op(model: Model, sub: Subgraph, op: Operator, x: Tensor, out: Tensor) -> StageOp:
    opts = _options(model, op)
    if opts is None:
        raise OperatorRefused(f"operator {op.index} ({op.name}) has no options")
    padding = opts.scalar(OPT_PADDING, "B", SAME)
    if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = sub.tensors[op.inputs[1]]
        kh, kw = w.shape[1], w.shape[2]
        dil = DW_DIL_H if op.name == "DEPTHWISE_CONV_2D" else CONV_DIL_H
        dil_w = DW_DIL_W if op.name == "DEPTHWISE_CONV_2D" else CONV_DIL_W
        sh, sw = opts.scalar(CONV_STRIDE_H, "i", 1), opts.scalar(CONV_STRIDE_W, "i", 1)
        dh, dw = opts.scalar(dil, "i", 1), opts.scalar(dil_w, "i", 1)
        taps = kh * kw * (w.shape[3] if op.name == "CONV_2D" else 1)
    else:
        kh, kw = opts.scalar(POOL_FILTER_H, "i", 1), opts.scalar(POOL_FILTER_W, "i", 1)
        sh, sw = opts.scalar(POOL_STRIDE_H, "i", 1), opts.scalar(POOL_STRIDE_W, "i", 1)
        dh = dw = 1
        taps = 0
    rows = same_window(x.shape[1], out.shape[1], kh, sh, dh, padding)
    cols = same_window(x.shape[2], out.shape[2], kw, sw, dw, padding)
    pads = rows.pad_before or rows.pad_after or cols.pad_before or cols.pad_after
    if pads and PADDING[op.name] == REFUSED:
        raise OperatorRefused(
            f"operator {op.index} ({op.name}) pads: its average counts only "
            "taps inside the image, which explicit padding would change"
        )
    macs = out.shape[2] * out.shape[3] * taps
    return StageOp(op, "window", rows, cols, macs=macs, pad_with=PADDING[op.name])


MAX_PREFIX = 3  # operators that may run whole before the stage (a QUANTIZE of a uint8 input)


def find_stage(model: Model, cut: int, start: int | None = None) -> Stage:
    """The stage of operators start..cut of subgraph 0 (start None: the first operator the
    stage can begin with, within MAX_PREFIX); BandError if it cannot run in bands."""
    if len(model.subgraphs) != 1:
        raise BandError("models with more than one subgraph are not split into bands")
    sub = model.subgraphs[0]
    if not 0 <= cut < len(sub.operators) - 1:
        raise BandError(f"cut after operator {cut}: the model has {len(sub.operators)} operators")
    if start is None:
        start = stage_start(model)
    if cut < start:
        raise BandError(f"cut after operator {cut}: the stage starts at operator {start}")
    ops = [describe_op(model, sub, op) for op in sub.operators[start : cut + 1]]
    produced = {o for s in ops for o in s.op.outputs}
    external = {
        i for s in ops for i in s.op.inputs if i >= 0 and not sub.tensors[i].is_const
    } - produced
    if len(external) != 1:
        raise BandError(f"the stage reads {len(external)} feature maps from outside; bands need 1")
    t = ops[-1].op.outputs[0]
    for o in sorted(produced - {t}):
        if o in sub.outputs:
            raise BandError(f"tensor {o} of the stage is also a model output")
        reader = next((op for op in sub.operators[cut + 1 :] if o in op.inputs), None)
        if reader is not None:
            raise BandError(
                f"tensor {o} ({sub.tensors[o].name}) of the stage is also read after the cut, "
                f"by operator {reader.index} ({reader.name}): a residual crossing the cut (cut "
                "before the branch or after the operator joining it)"
            )
    if t in sub.outputs:
        raise BandError("the cut tensor is a model output")
    return Stage(sub, ops, external.pop(), t, start)


def stage_start(model: Model) -> int:
    """The first operator a stage can begin with: 0, or the first after a short prefix whose
    operators cannot run in bands (TFLM slices and pads no uint8 map, so a model quantizing
    its uint8 input starts its stage after that QUANTIZE). OperatorRefused if none."""
    sub = model.subgraphs[0]
    first_error = None
    for start in range(min(MAX_PREFIX + 1, len(sub.operators))):
        try:
            describe_op(model, sub, sub.operators[start])
            return start
        except OperatorRefused as e:
            first_error = first_error or e
    raise first_error or OperatorRefused("the model has no operators")


# ------------------------------------------------------------------ row ranges


Rows = tuple[int, int]


def needs(stage: Stage, lo: int, hi: int) -> dict[int, Rows]:
    """Rows of every stage tensor that rows [lo, hi) of T need (union over its readers)."""
    need: dict[int, Rows] = {stage.t: (lo, hi)}
    for s in reversed(stage.ops):
        out = s.op.outputs[0]
        if out not in need:
            raise BandError(f"operator {s.op.index} ({s.op.name}) does not lead to the cut")
        for i, rows in _input_rows(stage, s, *need[out]).items():
            old = need.get(i)
            need[i] = rows if old is None else (min(old[0], rows[0]), max(old[1], rows[1]))
    return need


def _input_rows(stage: Stage, s: StageOp, lo: int, hi: int) -> dict[int, Rows]:
    x = stage.sub.tensors[s.op.inputs[0]]
    size = x.shape[1]
    if s.kind == "window":
        a, b, _, _ = s.rows.reads(lo, hi, size)  # type: ignore[union-attr]
        return {s.op.inputs[0]: (a, b)}
    if s.kind == "pad":
        top = s.pads[1][0]
        return {s.op.inputs[0]: (min(max(lo - top, 0), size), min(max(hi - top, 0), size))}
    return {i: (lo, hi) for i in s.op.inputs if i >= 0 and not stage.sub.tensors[i].is_const}


def empty_input(stage: Stage, lo: int, hi: int) -> str | None:
    """Why the band of T rows [lo, hi) would give an operator no input rows (its rows lie only
    in padding: a STRIDED_SLICE of 0 rows, which no runtime runs), or None."""
    need = needs(stage, lo, hi)
    for s in stage.ops:
        for i, (a, b) in _input_rows(stage, s, *need[s.op.outputs[0]]).items():
            if b <= a:
                return (
                    f"rows [{lo}, {hi}) of the cut read no row of tensor {i} "
                    f"({stage.sub.tensors[i].name}) through operator {s.op.index} ({s.op.name}): "
                    "they lie in its padding"
                )
    return None


def merge_empty(stage: Stage, bounds: list[int]) -> list[int]:
    """The bounds with every band whose rows lie only in padding merged into its neighbour
    (the one before it; the first band into the second): every band then reads rows."""
    out = list(bounds)
    k = 0
    while k < len(out) - 1 and len(out) > 2:
        if empty_input(stage, out[k], out[k + 1]) is None:
            k += 1
            continue
        del out[k if k > 0 else 1]  # drop the boundary shared with the neighbour
        k = max(k - 1, 0)
    return out


def band_macs(stage: Stage, bounds: list[int]) -> int:
    """Multiply-accumulates of the stage's convolutions computed band by band."""
    total = 0
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        need = needs(stage, lo, hi)
        for s in stage.ops:
            a, b = need[s.op.outputs[0]]
            total += s.macs * (b - a)
    return total


def stage_macs(stage: Stage) -> int:
    return sum(s.macs * stage.sub.tensors[s.op.outputs[0]].shape[1] for s in stage.ops)


# ------------------------------------------------------------------ writing the model


@dataclass
class _Writer:
    """Appends tensors, buffers and operators to a decoded model, keeping every index valid."""

    model: Model
    tensors: list[Table]
    buffers: list[Table]
    free: list[int]  # tensor slots of the stage's old tensors, reused for band tensors
    ops: list[Table] = field(default_factory=list)
    consts: dict[bytes, int] = field(default_factory=dict)

    def opcode(self, name: str) -> int:
        code = BUILTIN_CODES[name]
        codes = self.model.root.get(S.MODEL_OPCODES, [])
        for i, oc in enumerate(codes):
            builtin = max(
                oc.scalar(S.OPCODE_BUILTIN, "i", 0), oc.scalar(S.OPCODE_DEPRECATED_BUILTIN, "b", 0)
            )
            if builtin == code:
                return i
        oc = new_table("OperatorCode", {0: ("b", min(code, 127)), 2: ("i", 1), 3: ("i", code)}, 4)
        set_child(self.model.root, S.MODEL_OPCODES, codes + [oc])
        return len(codes)

    def add_tensor(self, table: Table) -> int:
        if self.free:
            i = self.free.pop(0)
            self.tensors[i] = table
            return i
        self.tensors.append(table)
        return len(self.tensors) - 1

    def like(self, template: Table, rows: int, name: str, extra_cols: int = 0) -> int:
        """A new feature map as `template` (type, quantization) with `rows` rows."""
        t = copy.deepcopy(template)
        shape = list(struct.unpack(f"<{len(t.get(0)) // 4}i", t.get(0)))
        shape[1], shape[2] = rows, shape[2] + extra_cols
        set_child(t, S.TENSOR_SHAPE, struct.pack("<4i", *shape))
        set_child(t, S.TENSOR_NAME, name.encode())
        if t.has(S.TENSOR_SHAPE_SIGNATURE):
            t.field_offsets[S.TENSOR_SHAPE_SIGNATURE] = 0
            t.children.pop(S.TENSOR_SHAPE_SIGNATURE, None)
        if t.has(S.TENSOR_BUFFER):
            struct.pack_into("<I", t.inline, t.field_offsets[S.TENSOR_BUFFER], 0)
        return self.add_tensor(t)

    def const_i32(self, values: list[int], shape: tuple[int, ...], name: str) -> int:
        data = struct.pack(f"<{len(values)}i", *values)
        key = data + struct.pack(f"<{len(shape)}i", *shape)
        if key not in self.consts:
            b = new_table("Buffer", {}, 1)
            set_child(b, S.BUFFER_DATA, data)
            self.buffers.append(b)
            t = new_table("Tensor", {1: ("b", INT32), 2: ("I", len(self.buffers) - 1)}, 10)
            set_child(t, S.TENSOR_SHAPE, struct.pack(f"<{len(shape)}i", *shape))
            set_child(t, S.TENSOR_NAME, name.encode())
            self.consts[key] = self.add_tensor(t)
        return self.consts[key]

    def op(
        self, name: str, inputs: list[int], outputs: list[int], opt_type: int, opts: Table
    ) -> None:
        op = new_table("Operator", {0: ("I", self.opcode(name)), 3: ("B", opt_type)}, 14)
        set_child(op, S.OP_INPUTS, struct.pack(f"<{len(inputs)}i", *inputs))
        set_child(op, S.OP_OUTPUTS, struct.pack(f"<{len(outputs)}i", *outputs))
        set_child(op, S.OP_OPTIONS, opts)
        self.ops.append(op)

    def copy_op(self, original: Table, inputs: list[int], output: int, valid: bool) -> None:
        op = copy.deepcopy(original)
        set_child(op, S.OP_INPUTS, struct.pack(f"<{len(inputs)}i", *inputs))
        set_child(op, S.OP_OUTPUTS, struct.pack("<i", output))
        if valid:
            _set_byte(op.get(S.OP_OPTIONS), OPT_PADDING, VALID)
        self.ops.append(op)

    def rows(self, src: int, have: Rows, want: Rows, name: str) -> int:
        """Tensor src (holding rows `have`) cut down to rows `want` (a STRIDED_SLICE if they
        differ)."""
        if have == want:
            return src
        shape = struct.unpack("<4i", self.tensors[src].get(0))
        a, b = want[0] - have[0], want[1] - have[0]
        begin = self.const_i32([0, a, 0, 0], (4,), "bands/begin")
        end = self.const_i32([1, b, shape[2], shape[3]], (4,), "bands/end")
        strides = self.const_i32([1, 1, 1, 1], (4,), "bands/strides")
        out = self.like(self.tensors[src], b - a, name)
        self.op(
            "STRIDED_SLICE",
            [src, begin, end, strides],
            [out],
            STRIDED_SLICE_OPTIONS,
            new_table("Scalars", {}, 1),
        )
        return out

    def pad(self, src: int, pads: list[tuple[int, int]], name: str, minimum: bool) -> int:
        """src padded by `pads`: with the zero point (PAD), or with the type's minimum (PADV2,
        its constant quantized as src, as TFLM's Prepare requires)."""
        if not any(a or b for a, b in pads):
            return src
        shape = struct.unpack("<4i", self.tensors[src].get(0))
        flat = [v for p in pads for v in p]
        paddings = self.const_i32(flat, (4, 2), "bands/paddings")
        rows = shape[1] + pads[1][0] + pads[1][1]
        out = self.like(self.tensors[src], rows, name, pads[2][0] + pads[2][1])
        if not minimum:
            self.op("PAD", [src, paddings], [out], PAD_OPTIONS, new_table("Scalars", {}, 1))
            return out
        value = self.minimum(src)
        self.op("PADV2", [src, paddings, value], [out], PADV2_OPTIONS, new_table("Scalars", {}, 1))
        return out

    def minimum(self, like: int) -> int:
        """A scalar constant holding the minimum of tensor `like`'s type, quantized as it."""
        t = copy.deepcopy(self.tensors[like])
        data = TYPE_MINIMUM[t.scalar(S.TENSOR_TYPE, "b", 0)]
        b = new_table("Buffer", {}, 1)
        set_child(b, S.BUFFER_DATA, data)
        self.buffers.append(b)
        set_child(t, S.TENSOR_SHAPE, b"")
        set_child(t, S.TENSOR_NAME, b"bands/minimum")
        if t.has(S.TENSOR_SHAPE_SIGNATURE):
            t.field_offsets[S.TENSOR_SHAPE_SIGNATURE] = 0
            t.children.pop(S.TENSOR_SHAPE_SIGNATURE, None)
        _set_scalar(t, S.TENSOR_BUFFER, "I", len(self.buffers) - 1)
        return self.add_tensor(t)


def _set_byte(opts: Table, slot: int, value: int) -> None:
    _set_scalar(opts, slot, "B", value)


def _set_scalar(table: Table, slot: int, fmt: str, value: int) -> None:
    if table.has(slot):
        struct.pack_into(f"<{fmt}", table.inline, table.field_offsets[slot], value)
        return
    if slot >= len(table.field_offsets):
        table.field_offsets += [0] * (slot + 1 - len(table.field_offsets))
    while len(table.inline) % struct.calcsize(fmt):  # a scalar sits at its natural alignment
        table.inline.append(0)
    table.field_offsets[slot] = len(table.inline)
    table.inline += struct.pack(f"<{fmt}", value)


@dataclass
class BandPlan:
    """What a rewrite produced, for the planner: the cut tensor T and the CONCATENATIONs that
    join the bands into it (more than MAX_BANDS bands: groups joined first)."""

    t: int
    bounds: list[int]
    joins: dict[int, list[int]]  # output tensor -> its inputs, in order (tensor indices)


def rewrite(model: Model, cut: int, bounds: list[int]) -> tuple[Model, BandPlan]:
    """The model with operators 0..cut run in bands of T rows [bounds[i], bounds[i+1])."""
    stage = find_stage(model, cut)
    height = stage.t_tensor.shape[1]
    count = len(bounds) - 1
    if (
        bounds[0] != 0
        or bounds[-1] != height
        or any(a >= b for a, b in zip(bounds, bounds[1:], strict=False))
    ):
        raise BandError(f"band bounds {bounds} do not split the cut's {height} rows")
    if count > MAX_BANDS**2:
        raise BandError(f"{count} bands: at most {MAX_BANDS**2} (CONCATENATIONs of {MAX_BANDS})")
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        why = empty_input(stage, lo, hi)
        if why:
            raise BandError(f"band bounds {bounds}: {why} (merge_empty merges such bands)")
    out = Model(model.to_bytes(), model.source)  # a private copy to edit
    root_sg = out.root.get(S.MODEL_SUBGRAPHS)[0]
    raw_ops = root_sg.get(S.SUBGRAPH_OPERATORS)
    tensors = list(root_sg.get(S.SUBGRAPH_TENSORS))
    free = sorted(stage.produced() - {stage.t})
    w = _Writer(out, list(tensors), list(out.buffers), free)
    groups = -(-count // MAX_BANDS)
    size = -(-count // groups)
    joins: dict[int, list[int]] = {}
    group: list[int] = []
    top: list[int] = []
    for band, (lo, hi) in enumerate(zip(bounds, bounds[1:], strict=False)):
        group.append(_emit_band(w, stage, raw_ops, tensors, band, lo, hi))
        if len(group) == size or band == count - 1:
            if groups == 1:
                top = group
                break
            first = bounds[band + 1 - len(group)]
            name = f"{stage.t_tensor.name}/bands{band + 1 - len(group)}-{band}"
            joined = w.like(tensors[stage.t], bounds[band + 1] - first, name)
            _join(w, group, joined, joins)
            top.append(joined)
            group = []
    _join(w, top, stage.t, joins)
    set_child(root_sg, S.SUBGRAPH_TENSORS, w.tensors)
    prefix = list(raw_ops[: stage.start])
    set_child(root_sg, S.SUBGRAPH_OPERATORS, prefix + w.ops + list(raw_ops[cut + 1 :]))
    set_child(out.root, S.MODEL_BUFFERS, w.buffers)
    _drop_offline_plan(out)
    banded = Model(out.to_bytes(), model.source)
    problems = graph_check.problems(banded)
    if problems:  # a bug of ours: never hand on a model that cannot run
        raise BandError(f"the rewrite with bounds {bounds} fails its graph check: {problems[0]}")
    return banded, BandPlan(stage.t, bounds, joins)


def _join(w: _Writer, parts: list[int], output: int, joins: dict[int, list[int]]) -> None:
    """A CONCATENATION of `parts` on the height axis into `output`."""
    opts = new_table("Scalars", {0: ("i", 1), 1: ("b", 0)}, 2)
    w.op("CONCATENATION", parts, [output], CONCAT_OPTIONS, opts)
    joins[output] = list(parts)


def _emit_band(
    w: _Writer,
    stage: Stage,
    raw_ops: list[Table],
    originals: list[Table],
    band: int,
    lo: int,
    hi: int,
) -> int:
    need = needs(stage, lo, hi)
    held: dict[int, tuple[int, Rows]] = {
        stage.x: (stage.x, (0, stage.sub.tensors[stage.x].shape[1]))
    }
    tag = f"{BAND_TAG}{band}"
    for s in stage.ops:
        op, out = s.op, s.op.outputs[0]
        out_rows = need[out]
        name = f"{stage.sub.tensors[out].name}/{tag}"
        ins = list(op.inputs)
        x = stage.sub.tensors[op.inputs[0]]
        if s.kind == "window":
            a, b, top, bottom = s.rows.reads(*out_rows, x.shape[1])  # type: ignore[union-attr]
            src = w.rows(*held[op.inputs[0]], (a, b), f"{name}/rows")
            c = s.cols
            pads = [(0, 0), (top, bottom), (c.pad_before, c.pad_after), (0, 0)]  # type: ignore[union-attr]
            ins[0] = w.pad(src, pads, f"{name}/padded", s.pad_with == MINIMUM)
            valid = True
        elif s.kind == "pad":
            top = s.pads[1][0]
            a, b = _input_rows(stage, s, *out_rows)[op.inputs[0]]
            before = max(0, min(out_rows[1], top) - out_rows[0])
            after = out_rows[1] - out_rows[0] - before - (b - a)
            ins[0] = w.rows(*held[op.inputs[0]], (a, b), f"{name}/rows")
            pads = [(0, 0), (before, after), s.pads[2], (0, 0)]
            flat = [v for p in pads for v in p]
            ins[1] = w.const_i32(flat, (4, 2), "bands/paddings")
            valid = False
        else:
            for k, i in enumerate(op.inputs):
                if i >= 0 and not stage.sub.tensors[i].is_const:
                    ins[k] = w.rows(*held[i], out_rows, f"{name}/in{k}")
            valid = False
        new = w.like(originals[out], out_rows[1] - out_rows[0], name)
        w.copy_op(raw_ops[op.index], ins, new, valid)
        held[out] = (new, out_rows)
    return held[stage.t][0]


def _drop_offline_plan(model: Model) -> None:
    """A plan for the original tensors means nothing after the rewrite: drop it."""
    entries = model.root.get(S.MODEL_METADATA, [])
    keep = [m for m in entries if m.get(S.METADATA_NAME) != OFFLINE_PLAN]
    if len(keep) != len(entries):
        set_child(model.root, S.MODEL_METADATA, keep)
