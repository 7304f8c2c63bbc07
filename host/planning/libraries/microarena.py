"""This project's kernels (firmware/src/kernels/), run by this project's runtime.

Their persistent memory is the runtime's own allocator, modelled whole by host/runtime/arena.py
(its per-tensor and per-operator records), so this library states no TFLM allocations. Their
scratch requests (ma_request_scratch) and their loops are stated here; the runtime's request log
checks the scratch on every model the tests run (tests/runtime/test_kernels.py,
test_conformance_detection.py): a kernel that starts requesting scratch adds its rule here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from host.planning.libraries import loops
from host.planning.libraries.base import KernelLibrary
from host.planning.model.lifetimes import align_up
from host.planning.model.operands import DETECTION, detection_sizes
from host.tflite.model import Model, Operator, Subgraph

DW_BLOCK = 32  # output channels per block of the depthwise kernel (MAK_DW_BLOCK, kernel_util.h)
# The int8 CONV_2D and FULLY_CONNECTED fast paths (fast_s8.c), for --fastest plans:
PAIR_CHUNK = 16  # channels a pixel pair reads for, then writes (MAK_PAIR_CHUNK, overlap.h)
COL_MAX = 128  # windows of several runs and at most this many bytes are copied, then computed
MAX_RUNS = 32  # windows of more runs (rows, or taps when dilated) take the reference loop
# Their Helium forms (fast_mve_s8.c, MAK_MVE_* in overlap.h): pixels of a 1x1 convolution read
# in place at once, their output channels per step; depthwise pairs' channel lanes.
MVE_ROWS, MVE_CHANNELS, MVE_DW_LANES = 4, 4, 8
# FULLY_CONNECTED's batches go MVE_ROWS at a time too, but for rows of at most this many values
# (fast_mve_s8.c SHORT_ROW: one batch after the other, in order).
MVE_SHORT_ROW = 8


def _detection_microarena(model: Model, sg: Subgraph, op: Operator) -> list[int]:
    # firmware/src/kernels/detection_postprocess.c scratch_layout: one buffer of decoded boxes,
    # scores, kept indices and their sort copy (4 bytes each per box), the selected boxes of
    # one NMS run, regular NMS's two top lists (12-byte entries) or fast NMS's class order of
    # one box, and a flag byte per box.
    d = detection_sizes(model, sg, op)
    if d is None:
        return []
    n = d.boxes
    limit = d.per_class if d.regular else d.max_detections
    lists = 2 * 12 * d.max_detections if d.regular else 4 * d.num_classes
    return [28 * n + 4 * min(limit, n) + lists + align_up(n, 4)]


SCRATCH_RULES: dict[str, Callable[[Model, Subgraph, Operator], list[int]]] = {
    DETECTION: _detection_microarena,
}


class Microarena(KernelLibrary):
    """firmware/src/kernels/: they loop as TFLM's reference kernels but for the blocked
    depthwise convolution; firmware/src/kernels/overlap.c states the same overlap rules in C,
    for same-shape elementwise operators and 1- or 4-byte elements only (C may assume int16
    and float never alias)."""

    name = "microarena"
    title = "microarena kernels"
    runtime = "microarena"
    overlap_style = loops.OverlapStyle(
        unary=("RELU", "LEAKY_RELU", "LOGISTIC", "QUANTIZE", "DEQUANTIZE"),
        depthwise_block=DW_BLOCK,
        element_bytes=(1, 4),
        broadcast=False,
        gather=False,
    )

    def __init__(self, cpu: str | None = None, fastest: bool = False, helium: bool = False):
        super().__init__(cpu)
        self.fastest = fastest  # rules that keep every fast path's pairs
        self.helium = helium  # those of the Cortex-M55's paths (fast_mve_s8.c)

    def scratch(self, model: Model, sg: Subgraph, op: Operator) -> list[int]:
        rule = SCRATCH_RULES.get(op.name)
        return [] if rule is None else rule(model, sg, op)

    def overlap_kernel(self, model: Model, sg: Subgraph, op: Operator) -> loops.Kernel | None:
        """With `fastest`, the int8 rules also keep the fast paths' pairs (their out-of-order
        loops run only where the offsets allow them): fast_s8.c's, or fast_mve_s8.c's."""
        k = super().overlap_kernel(model, sg, op)
        if not self.fastest or k is None:
            return k
        return with_helium_pairs(k) if self.helium else with_fast_pairs(k)


def fast_pairs(k: loops.Kernel) -> str:
    """Which of fast_s8.c's paired loops runs for an operator (mak_fast_conv_s8's choice;
    "" where its loops keep the in-order rule or the reference loop runs)."""
    if k.in_bytes != 1 or k.out_bytes != 1:
        return ""
    if k.loop == "fully_connected":
        return loops.FAST_ROWS
    if k.loop != "conv":
        return ""
    if _is_matrix(k):
        return loops.FAST_ROWS
    (kh, kw), _, (_, dil_w), _ = k.window
    runs = kh if dil_w == 1 else kh * kw
    window_bytes = kh * kw * k.in_shapes[0][3]
    if runs > MAX_RUNS or (runs > 1 and window_bytes <= COL_MAX and window_bytes % 4 == 0):
        return ""  # the reference loop, or windows copied before any write
    return loops.FAST_WINDOWS


def _is_matrix(k: loops.Kernel) -> bool:
    """A 1x1 stride-1 convolution that reads every input pixel."""
    (kh, kw), stride, _, pad = k.window
    return (kh, kw, *stride, *pad) == (1, 1, 1, 1, 0, 0) and k.in_shapes[0][1:3] == k.out_shape[1:3]


def with_fast_pairs(k: loops.Kernel) -> loops.Kernel:
    """`k` with fast_s8.c's pairs, where they run for it."""
    function = fast_pairs(k)
    return replace(k, function=function, chunk=PAIR_CHUNK, group=2) if function else k


def with_helium_pairs(k: loops.Kernel) -> loops.Kernel:
    """`k` with fast_mve_s8.c's out-of-order loops, where they run for it (mak_mve_conv_s8's
    and mak_mve_dwconv_s8's choices): 1x1 rows read in place, depthwise pixel pairs."""
    if k.in_bytes != 1 or k.out_bytes != 1:
        return k
    batches, depth, _ = k.fc
    if (k.loop == "conv" and _is_matrix(k)) or (
        k.loop == "fully_connected" and batches > 1 and depth > MVE_SHORT_ROW
    ):
        return replace(k, function=loops.FAST_MVE_ROWS, chunk=MVE_CHANNELS, group=MVE_ROWS)
    mult = k.out_shape[3] // k.in_shapes[0][3] if k.loop == "depthwise" else 0
    if mult and k.out_shape[3] % MVE_DW_LANES == 0 and (8 % mult == 0 or mult % 8 == 0):
        return replace(k, function=loops.FAST_MVE_DEPTHWISE, chunk=MVE_DW_LANES, group=2)
    return k


MICROARENA = Microarena()
MICROARENA_FASTEST = Microarena(fastest=True)
MICROARENA_FASTEST_M55 = Microarena(fastest=True, helium=True)


def fastest_library(cpu: str | None) -> Microarena:
    """The rules keeping every fast path on the CPU (the Cortex-M55's are Helium's)."""
    return MICROARENA_FASTEST_M55 if cpu == "cortex-m55" else MICROARENA_FASTEST
