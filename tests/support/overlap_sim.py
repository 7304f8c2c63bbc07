"""Byte-level simulation of a kernel's memory accesses, the test oracle of the overlap rules
(host.planning.libraries.loops).

Each `*_trace` function replays the loop nest of one of TFLM's reference kernels and yields its
accesses to the arena in program order: ("r", input slot, element index) for a read of an
activation input and ("w", 0, element index) for a write of the output. Weights and biases
live in the model, never in the arena, so they are left out.

An output at arena offset 0 and an input at offset `delta` (bytes) may share bytes safely iff
no read of the input touches a byte the kernel has already written. `corrupted_read` checks
exactly that with a byte map; `min_safe_delta` computes the smallest safe delta directly.
Both are deliberately simple and independent of the closed-form rules they check.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from host.planning.libraries.loops import (
    FAST_MVE_DEPTHWISE,
    FAST_MVE_ROWS,
    FAST_ROWS,
    FAST_WINDOWS,
    Kernel,
)

Access = tuple[str, int, int]  # ("r" | "w", input slot, element index)


def _index(shape: Sequence[int], b: int, y: int, x: int, c: int) -> int:
    return ((b * shape[1] + y) * shape[2] + x) * shape[3] + c


def _window(
    oy: int, ox: int, kernel: tuple[int, int], stride: tuple[int, int],
    dilation: tuple[int, int], pad: tuple[int, int], in_hw: Sequence[int],
) -> Iterator[tuple[int, int]]:  # fmt: skip
    """The input rows and columns a filter window at (oy, ox) reads, in y-then-x order,
    skipping the padding."""
    for fy in range(kernel[0]):
        iy = oy * stride[0] - pad[0] + fy * dilation[0]
        for fx in range(kernel[1]):
            ix = ox * stride[1] - pad[1] + fx * dilation[1]
            if 0 <= iy < in_hw[0] and 0 <= ix < in_hw[1]:
                yield iy, ix


def conv_trace(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    pad: tuple[int, int],
) -> Iterator[Access]:
    """reference(_integer_ops)::Conv(PerChannel): batch, out y, out x, out channel, then the
    filter window (y, x, in channel) is read and the output element written."""
    batches, out_h, out_w, out_c = out_shape
    in_c = in_shape[3]
    for b in range(batches):
        for oy in range(out_h):
            for ox in range(out_w):
                for oc in range(out_c):
                    for iy, ix in _window(oy, ox, kernel, stride, dilation, pad, in_shape[1:3]):
                        for ic in range(in_c):
                            yield ("r", 0, _index(in_shape, b, iy, ix, ic))
                    yield ("w", 0, _index(out_shape, b, oy, ox, oc))


def depthwise_trace(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    pad: tuple[int, int],
    block: int = 1,
) -> Iterator[Access]:
    """reference(_integer_ops)::DepthwiseConv(PerChannel): batch, out y, out x, in channel,
    depth multiplier m; output channel ic * multiplier + m. block > 1: this project's kernel
    (firmware/src/kernels/conv.c), which reads the window for a block of output channels,
    then writes the block."""
    out_c = out_shape[3]
    groups = [range(c0, min(out_c, c0 + block)) for c0 in range(0, out_c, block)]
    return _channel_groups_trace(in_shape, out_shape, (kernel, stride, dilation, pad), groups)


Window = tuple[tuple[int, int], ...]  # kernel, stride, dilation, pad as (y, x)


def _channel_groups_trace(
    in_shape: Sequence[int], out_shape: Sequence[int], window: Window, groups: Sequence[range]
) -> Iterator[Access]:
    """Depthwise-style loops: batch, out y, out x, then for each group of output channels in
    turn, the window of the input channels they read (channel oc // multiplier), then the
    group's writes."""
    kernel, stride, dilation, pad = window
    batches, out_h, out_w, out_c = out_shape
    mult = out_c // in_shape[3]
    for b in range(batches):
        for oy in range(out_h):
            for ox in range(out_w):
                taps = list(_window(oy, ox, kernel, stride, dilation, pad, in_shape[1:3]))
                for chans in groups:
                    for iy, ix in taps:
                        for c in sorted({oc // mult for oc in chans}):
                            yield ("r", 0, _index(in_shape, b, iy, ix, c))
                    for oc in chans:
                        yield ("w", 0, _index(out_shape, b, oy, ox, oc))


def pool_trace(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int],
) -> Iterator[Access]:
    """reference(_integer_ops)::AveragePool / MaxPool: batch, out y, out x, channel, then the
    window clipped to the image."""
    batches, out_h, out_w, depth = out_shape
    for b in range(batches):
        for oy in range(out_h):
            for ox in range(out_w):
                for c in range(depth):
                    for iy, ix in _window(oy, ox, kernel, stride, (1, 1), pad, in_shape[1:3]):
                        yield ("r", 0, _index(in_shape, b, iy, ix, c))
                    yield ("w", 0, _index(out_shape, b, oy, ox, c))


def fully_connected_trace(batches: int, depth: int, out_depth: int) -> Iterator[Access]:
    """reference(_integer_ops)::FullyConnected: batch, output unit, then the whole input row."""
    for b in range(batches):
        for oc in range(out_depth):
            for d in range(depth):
                yield ("r", 0, b * depth + d)
            yield ("w", 0, b * out_depth + oc)


def elementwise_trace(
    out_shape: Sequence[int], in_shapes: Sequence[Sequence[int]]
) -> Iterator[Access]:
    """Unary ops, and binary ops with or without broadcast (BroadcastAdd/Mul4DSlow): output
    elements in row-major order, each input read at its broadcast index, then the write."""
    rank = len(out_shape)
    maps = []
    for shape in in_shapes:
        full = [1] * (rank - len(shape)) + list(shape)
        strides = np.zeros(rank, dtype=np.int64)
        step = 1
        for axis in range(rank - 1, -1, -1):
            strides[axis] = 0 if full[axis] == 1 else step
            step *= full[axis]
        maps.append(strides)
    for p, pos in enumerate(np.ndindex(*out_shape) if rank else [()]):
        for slot, strides in enumerate(maps):
            yield ("r", slot, int(np.dot(pos, strides)) if rank else 0)
        yield ("w", 0, p)


def transpose_trace(in_shape: Sequence[int], perm: Sequence[int]) -> Iterator[Access]:
    """reference_ops::TransposeImpl: output elements in order, each copied from the input
    element at the permuted position."""
    out_shape = [in_shape[i] for i in perm]
    strides = [int(np.prod(in_shape[i + 1 :])) for i in range(len(in_shape))]
    for p, pos in enumerate(np.ndindex(*out_shape)):
        yield ("r", 0, sum(pos[d] * strides[perm[d]] for d in range(len(perm))))
        yield ("w", 0, p)


def pad_trace(in_shape: Sequence[int], paddings: Sequence[tuple[int, int]]) -> Iterator[Access]:
    """reference_ops::PadImpl: output elements in order; inside the padding the pad value is
    written, else the next input element (read in order) is copied."""
    out_shape = [d + a + b for d, (a, b) in zip(in_shape, paddings, strict=True)]
    q = 0
    for p, pos in enumerate(np.ndindex(*out_shape)):
        inside = all(a <= i < a + d for i, d, (a, _) in zip(pos, in_shape, paddings, strict=True))
        if inside:
            yield ("r", 0, q)
            q += 1
        yield ("w", 0, p)


def cmsis_depthwise_trace(
    function: str, in_shape: Sequence[int], out_shape: Sequence[int], window: Window
) -> Iterator[Access]:
    """CMSIS-NN's (4ab83cc3) int8 depthwise functions on the DSP path, by name:
    arm_depthwise_conv_3x3_s8: per pixel, channels in fours (each read over the window, then
    the four written), then the leftover channels one by one; arm_depthwise_conv_s8_opt: per
    pixel, the window of all channels copied into a buffer, then every channel written;
    depthwise_conv_s8_mult_4: per pixel and input channel, output channels in fours;
    depthwise_conv_s8_generic: per batch, pixel, input channel and multiplier."""
    out_c, in_c = out_shape[3], in_shape[3]
    groups: list[range] = []  # output channels read for together, then written, in order
    if function == "arm_depthwise_conv_3x3_s8":
        fours = in_c - in_c % 4
        groups = [range(c, c + 4) for c in range(0, fours, 4)]
        groups += [range(c, c + 1) for c in range(fours, in_c)]
    elif function == "arm_depthwise_conv_s8_opt":
        groups = [range(out_c)]
    elif function == "depthwise_conv_s8_mult_4":
        groups = [range(c, c + 4) for c in range(0, out_c, 4)]
    elif function == "depthwise_conv_s8_generic":
        groups = [range(c, c + 1) for c in range(out_c)]
    else:
        raise ValueError(f"no simulation of CMSIS-NN's {function}")
    return _channel_groups_trace(in_shape, out_shape, window, groups)


def cmsis_avgpool_trace(
    in_shape: Sequence[int], out_shape: Sequence[int], window: Window
) -> Iterator[Access]:
    """CMSIS-NN's arm_avgpool_s8 on the DSP path: per batch and pixel, the window's taps
    (every channel) summed into a buffer, then the pixel's channels written."""
    return _channel_groups_trace(in_shape, out_shape, window, [range(out_shape[3])])


def _pair_accesses(
    reads0: list[int], reads1: list[int], p0: int, p1: int, out_c: int, chunk: int
) -> Iterator[Access]:
    """fast_s8.c's rows2 on pixels (rows) p0 and p1: per chunk of channel pairs both windows
    read, then those channels of both written; an odd last channel read for and written last."""
    even = out_c & ~1
    for oc in range(0, even, chunk):
        yield from (("r", 0, i) for i in reads0 + reads1)
        for c in range(oc, min(oc + chunk, even)):
            yield ("w", 0, p0 * out_c + c)
            yield ("w", 0, p1 * out_c + c)
    if out_c & 1:
        yield from (("r", 0, i) for i in reads0 + reads1)
        yield ("w", 0, p0 * out_c + even)
        yield ("w", 0, p1 * out_c + even)


def _single_accesses(reads: list[int], p: int, out_c: int, slot: int) -> Iterator[Access]:
    """fast_s8.c's conv_pixel: four channels per pass over the window, then one by one."""
    four = out_c // 4 * 4
    for c0, n in [(c, 4) for c in range(0, four, 4)] + [(c, 1) for c in range(four, out_c)]:
        yield from (("r", slot, i) for i in reads)
        for c in range(c0, c0 + n):
            yield ("w", 0, p * out_c + c)


def fast_s8_trace(k: Kernel, single_slot: int = 0) -> Iterator[Access]:
    """This project's int8 CONV_2D / FULLY_CONNECTED fast paths with their pairs allowed
    (fast_s8.c): row pairs (r, r + 1) of a 1x1 stride-1 convolution or of FULLY_CONNECTED's
    batches, or neighbouring pixels whose windows take the same taps, walked in order; the
    rest one pixel at a time (its reads under slot `single_slot`, so a test can tell them
    apart)."""
    if k.loop == "fully_connected":
        rows, depth, out_c = k.fc
        windows = [list(range(r * depth, (r + 1) * depth)) for r in range(rows)]
        taps: list[object] = [None] * rows
    else:
        in_shape, out_shape = k.in_shapes[0], k.out_shape
        kernel, stride, dilation, pad = k.window
        b_n, oh, ow, out_c = out_shape
        windows, taps = [], []
        for b in range(b_n):
            for oy in range(oh):
                for ox in range(ow):
                    win = list(_window(oy, ox, kernel, stride, dilation, pad, in_shape[1:3]))
                    windows.append(
                        [
                            _index(in_shape, b, iy, ix, c)
                            for iy, ix in win
                            for c in range(in_shape[3])
                        ]
                    )
                    # Which filter taps fall inside (mak_window's fy0..fy1, fx0..fx1).
                    y0, x0 = oy * stride[0] - pad[0], ox * stride[1] - pad[1]
                    taps.append(
                        (
                            {(iy - y0) // dilation[0] for iy, _ in win},
                            {(ix - x0) // dilation[1] for _, ix in win},
                        )
                    )
        if k.function == FAST_ROWS:
            taps = [None] * len(windows)
    p = 0
    while p < len(windows):
        if p + 1 < len(windows) and taps[p] == taps[p + 1]:
            yield from _pair_accesses(windows[p], windows[p + 1], p, p + 1, out_c, k.chunk)
            p += 2
        else:
            yield from _single_accesses(windows[p], p, out_c, single_slot)
            p += 1


def gathered_trace(k: Kernel) -> Iterator[Access]:
    """fast_s8.c's conv_gathered: pixel pairs whose windows are both copied (read) before the
    pair's channels are written; the last pixel of an odd count alone, read then written."""
    in_shape, out_shape = k.in_shapes[0], k.out_shape
    kernel, stride, dilation, pad = k.window
    b_n, oh, ow, out_c = out_shape
    windows = [
        [
            _index(in_shape, b, iy, ix, c)
            for iy, ix in _window(oy, ox, kernel, stride, dilation, pad, in_shape[1:3])
            for c in range(in_shape[3])
        ]
        for b in range(b_n)
        for oy in range(oh)
        for ox in range(ow)
    ]
    for p in range(0, len(windows), 2):
        pair = windows[p : p + 2]
        yield from (("r", 0, i) for w in pair for i in w)
        for q in range(p, p + len(pair)):
            yield from (("w", 0, q * out_c + c) for c in range(out_c))


def mve_rows_trace(
    rows: int, in_row: int, out_row: int, group: int, channels: int
) -> Iterator[Access]:
    """fast_mve_s8.c's 1x1 convolution read in place (pixels_times_rows): `group` rows at a
    time, for each `channels` of their output channels every row of the group read, then those
    channels of each row written."""
    for g in range(0, rows, group):
        members = range(g, min(g + group, rows))
        for c in range(0, out_row, channels):
            yield from (("r", 0, r * in_row + i) for r in members for i in range(in_row))
            for r in members:
                yield from (("w", 0, r * out_row + k) for k in range(c, min(c + channels, out_row)))


def _dw_window(in_shape, b, oy, ox, window: Window):
    kernel, stride, dilation, pad = window
    taps = list(_window(oy, ox, kernel, stride, dilation, pad, in_shape[1:3]))
    y0, x0 = oy * stride[0] - pad[0], ox * stride[1] - pad[1]
    sig = (
        {(iy - y0) // dilation[0] for iy, _ in taps},
        {(ix - x0) // dilation[1] for _, ix in taps},
    )
    return [(b, iy, ix) for iy, ix in taps], sig


def mve_depthwise_trace(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    window: Window,
    lanes: int,
    block: int,
    columns: bool,
    single_slot: int = 0,
) -> Iterator[Access]:
    """fast_mve_s8.c's int8 depthwise convolution with its pixel pairs allowed: side by side
    (pixels walked in order, a pixel paired with the next where both take the same taps in one
    output row) or, `columns`, one above the other (dw_columns: rows two at a time, each column's
    pair); a pair reads `lanes` channels of both windows, then writes them. Single pixels: each
    block of `block` channels read, then written (groups of `lanes` with multiplier 1). Their
    reads under slot `single_slot`."""
    b_n, oh, ow, oc = out_shape
    mult = oc // in_shape[3]

    def reads(taps, c0: int, c1: int, slot: int) -> Iterator[Access]:
        for b, iy, ix in taps:
            for c in sorted({c // mult for c in range(c0, c1)}):
                yield ("r", slot, _index(in_shape, b, iy, ix, c))

    def single(b: int, oy: int, ox: int) -> Iterator[Access]:
        taps, _ = _dw_window(in_shape, b, oy, ox, window)
        p = (b * oh + oy) * ow + ox
        step = lanes if mult == 1 else block
        for c0 in range(0, oc, block):
            k = min(block, oc - c0)
            for g0 in range(c0, c0 + k, step if k % lanes == 0 else block):
                g1 = min(g0 + (step if k % lanes == 0 else block), c0 + k)
                yield from reads(taps, g0, g1, single_slot)
                yield from (("w", 0, p * oc + c) for c in range(g0, g1))

    def pair(first: tuple[int, int, int], second: tuple[int, int, int]) -> Iterator[Access]:
        t0, _ = _dw_window(in_shape, *first, window)
        t1, _ = _dw_window(in_shape, *second, window)
        p0, p1 = ((b * oh + y) * ow + x for b, y, x in (first, second))
        for c in range(0, oc, lanes):
            yield from reads(t0, c, c + lanes, 0)
            yield from reads(t1, c, c + lanes, 0)
            yield from (("w", 0, p * oc + k) for p in (p0, p1) for k in range(c, c + lanes))

    def sig(b: int, y: int, x: int):
        return _dw_window(in_shape, b, y, x, window)[1]

    if columns:
        for b in range(b_n):
            for oy in range(0, oh, 2):
                for ox in range(ow):
                    if oy + 1 >= oh:
                        yield from single(b, oy, ox)
                    elif sig(b, oy, ox) != sig(b, oy + 1, ox):
                        yield from single(b, oy, ox)
                        yield from single(b, oy + 1, ox)
                    else:
                        yield from pair((b, oy, ox), (b, oy + 1, ox))
        return
    order = [(b, y, x) for b in range(b_n) for y in range(oh) for x in range(ow)]
    i = 0
    while i < len(order):
        here = order[i]
        nxt = order[i + 1] if i + 1 < len(order) else None
        if nxt is not None and sig(*here) == sig(*nxt) and here[1] == nxt[1]:
            yield from pair(here, nxt)
            i += 2
        else:
            yield from single(*here)
            i += 1


def min_safe_delta(trace: Iterable[Access], slot: int, in_bytes: int, out_bytes: int) -> int | None:
    """Smallest input-minus-output offset (bytes) at which input `slot` is never read after
    the kernel overwrote it; None if no read follows any write (every offset is safe)."""
    top_written = -1  # highest output element written so far
    worst: int | None = None
    for kind, s, index in trace:
        if kind == "w":
            top_written = max(top_written, index)
        elif s == slot and top_written >= 0:
            # The highest written byte minus the lowest byte of this read, plus one.
            need = (top_written + 1) * out_bytes - index * in_bytes
            worst = need if worst is None else max(worst, need)
    return worst


def corrupted_read(
    trace: Iterable[Access], slot: int, delta: int, in_bytes: int, out_bytes: int
) -> tuple[int, int] | None:
    """With the output at byte 0 and input `slot` at byte `delta`: the first read (event number,
    input element) of a byte already overwritten, or None if every read sees original data."""
    written: set[int] = set()
    for n, (kind, s, index) in enumerate(trace):
        if kind == "w":
            written.update(range(index * out_bytes, (index + 1) * out_bytes))
        elif s == slot:
            start = delta + index * in_bytes
            if any(a in written for a in range(start, start + in_bytes)):
                return n, index
    return None


def trace(k: Kernel) -> Iterator[Access]:
    """The access sequence of an operator's kernel as described by host.planning.libraries.loops."""
    if k.function in (FAST_ROWS, FAST_WINDOWS):
        return fast_s8_trace(k)
    if k.function in (FAST_MVE_ROWS, FAST_MVE_DEPTHWISE):
        raise ValueError(f"no whole-kernel replay of {k.function}: see mve_*_trace")
    if k.function == "arm_avgpool_s8":
        return cmsis_avgpool_trace(k.in_shapes[0], k.out_shape, k.window)
    if k.function:
        return cmsis_depthwise_trace(k.function, k.in_shapes[0], k.out_shape, k.window)
    if k.loop == "conv":
        return conv_trace(k.in_shapes[0], k.out_shape, *k.window)
    if k.loop == "depthwise":
        return depthwise_trace(k.in_shapes[0], k.out_shape, *k.window, k.block)
    if k.loop == "pool":
        kernel, stride, _, pad = k.window
        return pool_trace(k.in_shapes[0], k.out_shape, kernel, stride, pad)
    if k.loop == "fully_connected":
        return fully_connected_trace(*k.fc)
    if k.loop == "transpose":
        return transpose_trace(k.in_shapes[0], k.gather[0])
    if k.loop == "pad":
        return pad_trace(k.in_shapes[0], k.gather)  # type: ignore[arg-type]
    return elementwise_trace(k.out_shape, k.in_shapes)
