"""Where an operator's output may overlap its inputs, exact to the byte, from a kernel's loops.

A kernel reads its inputs and writes its output in a fixed loop order. With the output at arena
offset o and an input at offset i, the input bytes are intact when read iff no byte is written
before its last read. For the kernels below that holds for every i - o >= d, with d computed
here in closed form from the operator's shapes and options ("the rule"). Each rule is derived
from the loop nest of TFLM's reference kernel, checked against a byte-level simulation of that
loop nest (tests/support/overlap_sim.py) and, in the tests, against the real TFLM at d and 16
bytes below.

Derivation: elements are written in increasing output index P; when element P is computed,
elements 0..P-1 are written. A read of input element q while output bytes up to P * out_bytes
- 1 are written is safe iff i + q * in_bytes > o + P * out_bytes - 1, so
d = max over (P >= 1, q read for P) of P * out_bytes - q * in_bytes, and only the smallest q
read for each P matters. No read after a write: every offset is safe (d = None).

Operators not listed never overlap. RESHAPE copies with memcpy unless input and output share
one address, so its only overlap is the exact same offset (SAME_OFFSET).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from host.planning.model.operands import builtin_options
from host.tflite.model import Model, Operator, Subgraph, Tensor
from host.tflite.schema import TYPE_SIZES

CONV_OPTIONS, DEPTHWISE_OPTIONS, POOL_OPTIONS = 1, 2, 5
SAME = 0
BINARY = ("ADD", "MUL")
SAME_OFFSET = "same offset"  # rule of ops that alias input and output or copy with memcpy
# The rules build index arrays as large as an operator's output (in pixels or elements). A
# model may declare any shape in a few bytes, so an operator needing more than this many
# indices gets no rule (it does not overlap) rather than gigabytes of memory: 4 Mi indices,
# about 32 MiB per array, beyond any microcontroller's activations.
MAX_RULE_INDICES = 1 << 22


@dataclass(frozen=True)
class OverlapStyle:
    """How a kernel library's loops differ from TFLM's reference loops, as far as the rules
    below are concerned (each library module states its own)."""

    unary: tuple[str, ...]  # elementwise unary operators with a rule
    depthwise_block: int = 1  # output channels a depthwise kernel reads for, then writes
    element_bytes: tuple[int, ...] | None = None  # element sizes with rules (None: any)
    broadcast: bool = True  # rules for elementwise operators with broadcast inputs
    gather: bool = True  # rules for TRANSPOSE and PAD


# TFLM's reference kernels.
REFERENCE_STYLE = OverlapStyle(
    unary=("RELU", "RELU6", "LOGISTIC", "TANH", "QUANTIZE", "DEQUANTIZE")
)


@dataclass(frozen=True)
class Rule:
    """Input `slot` of an operator may share bytes with its output when
    input_offset - output_offset >= min_delta (None: at any offset)."""

    slot: int
    min_delta: int | None


# ------------------------------------------------------------------ closed-form rules


def _worst(p: np.ndarray, q: np.ndarray, in_bytes: int, out_bytes: int) -> int | None:
    """max of P * out_bytes - q * in_bytes over the elements with P >= 1 (None if none)."""
    keep = p >= 1
    if not keep.any():
        return None
    return int((p[keep] * out_bytes - q[keep] * in_bytes).max())


def _first_valid(out_size: int, in_size: int, k: int, stride: int, dil: int, pad: int):
    """Per output coordinate: the lowest input coordinate of its window inside the image
    (-1 where the window misses the image)."""
    o = np.arange(out_size, dtype=np.int64)[:, None]
    taps = o * stride - pad + np.arange(k, dtype=np.int64)[None, :] * dil
    inside = (taps >= 0) & (taps < in_size)
    first = np.where(inside, taps, np.iinfo(np.int64).max).min(axis=1)
    return np.where(inside.any(axis=1), first, -1)


def _pixels(in_shape, out_shape, kernel, stride, dilation, pad):
    """(output pixel index, lowest input pixel index read for it) of every output pixel whose
    window reads anything, as flat arrays in output order."""
    b, oh, ow = out_shape[:3]
    ih, iw = in_shape[1:3]
    fy = _first_valid(oh, ih, kernel[0], stride[0], dilation[0], pad[0])
    fx = _first_valid(ow, iw, kernel[1], stride[1], dilation[1], pad[1])
    bb, yy, xx = np.meshgrid(np.arange(b), np.arange(oh), np.arange(ow), indexing="ij")
    out_pix = ((bb * oh + yy) * ow + xx).ravel()
    iy, ix = fy[yy].ravel(), fx[xx].ravel()
    reads = (iy >= 0) & (ix >= 0)
    in_pix = (bb.ravel() * ih + iy) * iw + ix
    return out_pix[reads], in_pix[reads]


def conv_rule(in_shape, out_shape, kernel, stride, dilation, pad, in_bytes, out_bytes):
    """CONV_2D: each output channel of a pixel re-reads the whole window (all input channels),
    so the last channel's write position against the window's first byte decides."""
    out_pix, in_pix = _pixels(in_shape, out_shape, kernel, stride, dilation, pad)
    oc, ic = out_shape[3], in_shape[3]
    return _worst(out_pix * oc + oc - 1, in_pix * ic, in_bytes, out_bytes)


def depthwise_rule(
    in_shape, out_shape, kernel, stride, dilation, pad, in_bytes, out_bytes, block=1, singly=False
):
    """DEPTHWISE_CONV_2D (and pooling, multiplier 1): output channel oc reads input channel
    oc // multiplier of the window only. block > 1 (this project's kernel, CMSIS-NN's): a block
    of output channels is read for first, then written, so the block's first channel decides;
    singly: the channels after the last whole block go one by one (else as one last block)."""
    out_pix, in_pix = _pixels(in_shape, out_shape, kernel, stride, dilation, pad)
    ic, oc = in_shape[3], out_shape[3]
    mult = oc // ic
    whole = oc - oc % block if singly else oc
    starts = np.r_[np.arange(0, whole, block), np.arange(whole, oc)]
    c0 = starts.astype(np.int64)[None, :]
    # With block 1 this is TFLM's per-element order: channel c0 computed after c0 - 1 written.
    p = out_pix[:, None] * oc + c0
    q = in_pix[:, None] * ic + c0 // mult
    return _worst(p.ravel(), q.ravel(), in_bytes, out_bytes)


def fully_connected_rule(batches, depth, out_depth, in_bytes, out_bytes):
    """FULLY_CONNECTED: every output unit of a batch re-reads the batch's whole input row."""
    b = np.arange(batches, dtype=np.int64)
    return _worst(b * out_depth + out_depth - 1, b * depth, in_bytes, out_bytes)


def pair_written(out_depth: int, chunk: int) -> int:
    """Channels of each pixel (row) of a pair written before the pair's last reads, in this
    project's fast int8 paths (fast_s8.c rows2: chunks of `chunk` channels of both pixels read
    for, then written; an odd last channel after every even one)."""
    even = out_depth & ~1
    if out_depth & 1:
        return even
    return (even - 1) // chunk * chunk if even > 0 else 0


def _pair_extra(out_depth: int, chunk: int) -> int:
    """Output elements beyond p * out_depth written when pair p's last reads start."""
    w = pair_written(out_depth, chunk)
    return out_depth + w if w > 0 else 0


def _rows_need(
    rows: int, in_row: int, out_row: int, group: int, written: int, partial: bool
) -> int | None:
    """int8 rows computed `group` at a time from row 0: a group's last reads start at its first
    row once the first `written` channels of its rows are written (before any of its writes
    where written = 0); partial: a last group of fewer rows runs so too (else in order)."""
    full = rows // group * group
    starts = np.arange(0, full, group, dtype=np.int64)
    sizes = np.full(starts.size, group, dtype=np.int64)
    if partial and full < rows:
        starts, sizes = np.r_[starts, full], np.r_[sizes, rows - full]
    p = starts * out_row + ((sizes - 1) * out_row + written if written > 0 else 0)
    return _worst(p, starts * in_row, 1, 1)


def rows_pairs_need(rows: int, in_row: int, out_row: int, chunk: int) -> int | None:
    """Rows r, r + 1 (r = 0, 2, ...) computed together (a 1x1 stride-1 convolution's pixels,
    FULLY_CONNECTED's batches: overlap.c's mak_rows_pairs_need): the smallest safe offset of
    their reads, exact; the last row of an odd count goes alone (in order)."""
    return _rows_need(rows, in_row, out_row, 2, pair_written(out_row, chunk), False)


def mve_rows_need(rows: int, in_row: int, out_row: int, group: int, channels: int) -> int | None:
    """The Helium 1x1 stride-1 convolution read in place (fast_mve_s8.c, overlap.c's
    mak_mve_rows_need): `group` pixels at a time, `channels` of theirs read for, then written;
    the last group may be smaller. Exact."""
    written = (out_row - 1) // channels * channels if out_row > 0 else 0
    return _rows_need(rows, in_row, out_row, group, written, True)


def _every_pixel_need(in_shape, out_shape, kernel, stride, dilation, pad, extra) -> int | None:
    """max over every pixel p reading something of p * cout + extra - (its window's first input
    pixel) * cin: a sum of maxima over the batch, the row and the column."""
    b, oh, ow, oc = out_shape
    _, ih, iw, ic = in_shape
    fy = _first_valid(oh, ih, kernel[0], stride[0], dilation[0], pad[0])
    fx = _first_valid(ow, iw, kernel[1], stride[1], dilation[1], pad[1])
    if (fy < 0).all() or (fx < 0).all():
        return None
    y, x = np.arange(oh, dtype=np.int64), np.arange(ow, dtype=np.int64)
    wy = int((y * ow * oc - fy * iw * ic)[fy >= 0].max())
    wx = int((x * oc - fx * ic)[fx >= 0].max())
    return (b - 1) * max(oh * ow * oc - ih * iw * ic, 0) + wy + wx + extra


def window_pairs_need(in_shape, out_shape, kernel, stride, dilation, pad, chunk) -> int | None:
    """int8 neighbouring pixels with the same taps computed together (fast_s8.c's pixel
    pairs, overlap.c's mak_window_pairs_need): an upper bound, every pixel counted as the
    first of a pair (which pixels pair depends on the walk). None: no window reads."""
    extra = _pair_extra(out_shape[3], chunk)
    return _every_pixel_need(in_shape, out_shape, kernel, stride, dilation, pad, extra)


def mve_depthwise_pairs_need(
    in_shape, out_shape, kernel, stride, dilation, pad, lanes: int, columns: bool
) -> int | None:
    """The Helium depthwise pixel pairs (fast_mve_s8.c dw_pair, overlap.c's
    mak_mve_dw_pairs_need), side by side or one above the other (`columns`): groups of `lanes`
    channels of both read, then written. An upper bound, every pixel counted as a pair's first."""
    oc, mult = out_shape[3], out_shape[3] // in_shape[3]
    last = oc - lanes
    within = last - last // mult if last > 0 else 0
    extra = out_shape[2] * oc + within if columns else (oc + within if last > 0 else 0)
    return _every_pixel_need(in_shape, out_shape, kernel, stride, dilation, pad, extra)


def broadcast_index(out_shape: Sequence[int], in_shape: Sequence[int]) -> np.ndarray:
    """The input element each output element reads (row-major, numpy broadcasting)."""
    rank = len(out_shape)
    full = [1] * (rank - len(in_shape)) + list(in_shape)
    idx = np.arange(int(np.prod(full)), dtype=np.int64).reshape(full)
    return np.broadcast_to(idx, tuple(out_shape)).ravel()


def elementwise_rule(out_shape, in_shape, in_bytes, out_bytes):
    """Unary and binary elementwise ops (with broadcast): output element P reads input element
    broadcast_index(P) of each input, then is written."""
    q = broadcast_index(out_shape, in_shape)
    return _worst(np.arange(q.size, dtype=np.int64), q, in_bytes, out_bytes)


def transpose_index(in_shape: Sequence[int], perm: Sequence[int]) -> np.ndarray:
    """The input element each output element of TRANSPOSE reads (output row-major order)."""
    n = int(np.prod(in_shape))
    return np.arange(n, dtype=np.int64).reshape(tuple(in_shape)).transpose(tuple(perm)).ravel()


def pad_index(in_shape: Sequence[int], paddings: Sequence[tuple[int, int]]) -> np.ndarray:
    """The input element each output element of PAD reads, -1 for a padding element."""
    out_shape = tuple(d + a + b for d, (a, b) in zip(in_shape, paddings, strict=True))
    q = np.full(out_shape, -1, dtype=np.int64)
    inner = tuple(slice(a, a + d) for d, (a, _) in zip(in_shape, paddings, strict=True))
    q[inner] = np.arange(int(np.prod(in_shape)), dtype=np.int64).reshape(tuple(in_shape))
    return q.ravel()


def gather_rule(q: np.ndarray, in_bytes: int, out_bytes: int) -> int | None:
    """Ops that write each output element right after reading one input element q[P] (or none,
    q = -1), in output order: TRANSPOSE (TransposeImpl), PAD (PadImpl)."""
    p = np.arange(q.size, dtype=np.int64)
    reads = q >= 0
    return _worst(p[reads], q[reads], in_bytes, out_bytes)


# ------------------------------------------------------------------ operators of a model


def _padding(padding: int, in_size: int, out_size: int, k: int, stride: int, dil: int) -> int:
    """TFLM's ComputePaddingWithOffset: the padding before the first row/column."""
    if padding != SAME:
        return 0
    total = (out_size - 1) * stride + (k - 1) * dil + 1 - in_size
    return max(total, 0) // 2


def window(opts, in_shape, out_shape, kernel, slots):
    """(stride, dilation, pad) for (y, x) from options: slots of stride w/h, dilation w/h."""
    sw, sh, dw, dh = (
        opts.scalar(s, "i", 1) if opts is not None and s is not None else 1 for s in slots
    )
    padding = opts.scalar(0, "B", 0) if opts is not None else 0
    pad = (
        _padding(padding, in_shape[1], out_shape[1], kernel[0], sh, dh),
        _padding(padding, in_shape[2], out_shape[2], kernel[1], sw, dw),
    )
    return (sh, sw), (dh, dw), pad


def _bytes(t: Tensor) -> int | None:
    return None if t.type == 17 else TYPE_SIZES.get(t.type)  # int4 is packed: no rule


@dataclass(frozen=True)
class Kernel:
    """What an operator's reference kernel reads and writes: enough to state its rules and to
    replay its loops (tests/support/overlap_sim.py, trace)."""

    loop: str  # "conv", "depthwise", "pool", "fully_connected" or "elementwise"
    in_shapes: tuple[tuple[int, ...], ...]  # activation inputs by slot
    out_shape: tuple[int, ...]
    in_bytes: int
    out_bytes: int
    slots: tuple[int, ...]  # the input slots with a rule
    window: tuple[tuple[int, int], ...] = ()  # kernel, stride, dilation, pad as (y, x)
    gather: tuple[tuple[int, ...], ...] = ()  # transpose: (perm,); pad: the (before, after)s
    fc: tuple[int, int, int] = (0, 0, 0)  # batches, depth, units
    block: int = 1  # depthwise: output channels read for together, then written
    singly: bool = False  # depthwise: the channels after the last whole block one by one
    # The kernel library function whose loop order overlap_sim replays ("": the reference
    # loops, or this project's block loop); the rule above must equal its simulation.
    # FAST_ROWS and FAST_WINDOWS: this project's int8 pairs (fast_s8.c) also run.
    function: str = ""
    chunk: int = 0  # FAST_*: channels a pair (group) reads for, then writes
    group: int = 0  # FAST_*: pixels (rows) computed at once


FAST_ROWS, FAST_WINDOWS = "fast_s8 row pairs", "fast_s8 pixel pairs"
FAST_MVE_ROWS, FAST_MVE_DEPTHWISE = "fast_mve row groups", "fast_mve depthwise pairs"
FAST_FUNCTIONS = (FAST_ROWS, FAST_WINDOWS, FAST_MVE_ROWS, FAST_MVE_DEPTHWISE)


def pairs_need(k: Kernel) -> int | None:
    """The smallest safe offset of this project's int8 pairs (FAST_FUNCTIONS)."""
    if k.function == FAST_MVE_DEPTHWISE:
        return _mve_depthwise_need(k)
    if k.function in (FAST_ROWS, FAST_MVE_ROWS):
        if k.loop == "fully_connected":
            rows, depth, units = k.fc
        else:
            b, oh, ow, units = k.out_shape
            rows, depth = b * oh * ow, k.in_shapes[0][3]
        if k.function == FAST_MVE_ROWS:
            return mve_rows_need(rows, depth, units, k.group, k.chunk)
        return rows_pairs_need(rows, depth, units, k.chunk)
    return window_pairs_need(k.in_shapes[0], k.out_shape, *k.window, k.chunk)


def _mve_depthwise_need(k: Kernel) -> int | None:
    """fast_mve_s8.c takes a map and a filter one column wide as one row (as_row), then pairs
    one above the other where the map is narrower than tall, else side by side."""
    (ins, outs), (kernel, stride, dilation, pad) = (k.in_shapes[0], k.out_shape), k.window
    if ins[2] == 1 and outs[2] == 1 and kernel[1] == 1:
        ins, outs = (ins[0], 1, ins[1], ins[3]), (outs[0], 1, outs[1], outs[3])
        kernel, stride, dilation, pad = (t[::-1] for t in (kernel, stride, dilation, pad))
    columns = outs[2] < outs[1]
    return mve_depthwise_pairs_need(ins, outs, kernel, stride, dilation, pad, k.chunk, columns)


def _at_least(a: int | None, b: int | None) -> int | None:
    """The offset safe under both rules (None: any offset)."""
    return b if a is None else a if b is None else max(a, b)


def rule(k: Kernel, slot: int) -> int | None:
    """The smallest safe input-minus-output offset of input `slot` (None: any offset)."""
    if k.function in FAST_FUNCTIONS:
        return _at_least(rule(replace(k, function="", chunk=0, group=0), slot), pairs_need(k))
    args = (k.in_bytes, k.out_bytes)
    if k.loop == "conv":
        return conv_rule(k.in_shapes[0], k.out_shape, *k.window, *args)
    if k.loop in ("depthwise", "pool"):
        return depthwise_rule(k.in_shapes[0], k.out_shape, *k.window, *args, k.block, k.singly)
    if k.loop == "fully_connected":
        return fully_connected_rule(*k.fc, *args)
    if k.loop == "transpose":
        return gather_rule(transpose_index(k.in_shapes[0], k.gather[0]), *args)
    if k.loop == "pad":
        return gather_rule(pad_index(k.in_shapes[0], k.gather), *args)  # type: ignore[arg-type]
    return elementwise_rule(k.out_shape, k.in_shapes[slot], *args)


def indices(k: Kernel) -> int:
    """How many indices the rule of `k` builds (0 if a dimension, kernel size, stride or
    dilation is not positive: no rule stands for such shapes)."""
    sizes = [*k.out_shape, *(d for shape in k.in_shapes for d in shape)]
    if k.window:
        kernel, stride, dilation, _ = k.window
        sizes += [*kernel, *stride, *dilation]
    if min(sizes, default=1) <= 0:
        return 0
    if k.loop == "fully_connected":
        return k.fc[0]
    if k.window:  # a row of window taps per output row and column, and the output's pixels
        b, oh, ow, oc = k.out_shape
        channels = 1 if k.loop == "conv" else -(-oc // k.block)
        return b * oh * ow * channels + oh * k.window[0][0] + ow * k.window[0][1]
    return math.prod(k.out_shape) + max(math.prod(s) for s in k.in_shapes)


def describe(model: Model, sg: Subgraph, op: Operator, style: OverlapStyle) -> Kernel | None:
    """The loops of an operator, for kernels that loop as TFLM's reference kernels do but for
    the differences `style` states; None where no rule is proven."""
    name = op.name
    if len(op.outputs) != 1 or op.outputs[0] < 0 or op.intermediates:
        return None
    out = sg.tensors[op.outputs[0]]
    ins = [sg.tensors[i] if i >= 0 else None for i in op.inputs]
    if not ins or ins[0] is None:
        return None
    x = ins[0]
    ib, ob = _bytes(x), _bytes(out)
    if ib is None or ob is None:
        return None
    if style.element_bytes is not None and (
        ib not in style.element_bytes or ob not in style.element_bytes
    ):
        return None
    base = {"in_bytes": ib, "out_bytes": ob, "out_shape": out.shape, "in_shapes": (x.shape,)}

    def opts_of(kind: int):
        return builtin_options(model, sg.index, op.index, kind)

    if name in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"):
        if len(x.shape) != 4 or len(out.shape) != 4 or x.shape[0] != out.shape[0]:
            return None
        w = ins[1] if len(ins) > 1 else None
        if name == "CONV_2D":
            if w is None or len(w.shape) != 4 or w.shape[3] != x.shape[3]:
                return None  # grouped convolutions are not covered
            kernel = (w.shape[1], w.shape[2])
            win = window(opts_of(CONV_OPTIONS), x.shape, out.shape, kernel, (1, 2, 4, 5))
            return Kernel("conv", slots=(0,), window=(kernel, *win), **base)
        if name == "DEPTHWISE_CONV_2D":
            if w is None or len(w.shape) != 4 or out.shape[3] % x.shape[3]:
                return None
            kernel = (w.shape[1], w.shape[2])
            win = window(opts_of(DEPTHWISE_OPTIONS), x.shape, out.shape, kernel, (1, 2, 5, 6))
            block = style.depthwise_block
            return Kernel("depthwise", slots=(0,), window=(kernel, *win), block=block, **base)
        opts = opts_of(POOL_OPTIONS)
        if opts is None or out.shape[3] != x.shape[3]:
            return None
        kernel = (opts.scalar(4, "i", 1), opts.scalar(3, "i", 1))
        win = window(opts, x.shape, out.shape, kernel, (1, 2, None, None))
        return Kernel("pool", slots=(0,), window=(kernel, *win), **base)
    if name == "FULLY_CONNECTED":
        w = ins[1] if len(ins) > 1 else None
        if w is None or len(w.shape) != 2 or not out.shape:
            return None
        units, depth = w.shape
        n_out = int(np.prod(out.shape))
        if out.shape[-1] != units or n_out % units:
            return None
        batches = n_out // units
        if batches * depth > int(np.prod(x.shape)):
            return None
        return Kernel("fully_connected", slots=(0,), fc=(batches, depth, units), **base)
    if name in ("TRANSPOSE", "PAD", "PADV2") and style.gather:
        return _gather_kernel(model, name, ins, base)
    if name in style.unary or name in BINARY:
        count = 2 if name in BINARY else 1
        args = ins[:count]
        if len(args) < count or any(t is None or not _broadcasts(t.shape, out.shape) for t in args):
            return None
        if not style.broadcast and any(t.shape != out.shape for t in args if t is not None):
            return None
        shapes = tuple(t.shape for t in args if t is not None)
        slots = tuple(
            s for s, t in enumerate(args) if t is not None and not t.is_const and _bytes(t) == ib
        )
        return Kernel("elementwise", **{**base, "in_shapes": shapes}, slots=slots)
    return None


def _gather_kernel(model: Model, name: str, ins: list[Tensor | None], base: dict) -> Kernel | None:
    """TRANSPOSE and PAD with constant permutation / paddings (TFLM's reference kernels; this
    project's have no rule)."""
    x, arg = ins[0], ins[1] if len(ins) > 1 else None
    if x is None or arg is None or not arg.is_const or arg.type != 2:  # int32 only
        return None
    values = np.frombuffer(model.buffer_data(arg.buffer), dtype="<i4")
    rank = len(x.shape)
    if name == "TRANSPOSE":
        perm = tuple(int(v) for v in values)
        if sorted(perm) != list(range(rank)) or rank > 6:
            return None
        if tuple(x.shape[i] for i in perm) != tuple(base["out_shape"]):
            return None
        return Kernel("transpose", slots=(0,), gather=(perm,), **base)
    if values.size != 2 * rank or rank > 5 or (values < 0).any():
        return None
    pads = tuple((int(values[2 * i]), int(values[2 * i + 1])) for i in range(rank))
    if tuple(d + a + b for d, (a, b) in zip(x.shape, pads, strict=True)) != tuple(
        base["out_shape"]
    ):
        return None
    return Kernel("pad", slots=(0,), gather=pads, **base)


def _broadcasts(shape: Sequence[int], out_shape: Sequence[int]) -> bool:
    if len(shape) > len(out_shape):
        return False
    tail = out_shape[len(out_shape) - len(shape) :]
    return all(a == b or a == 1 for a, b in zip(shape, tail, strict=True))
