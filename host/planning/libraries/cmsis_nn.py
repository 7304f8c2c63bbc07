"""CMSIS-NN: TFLM built with OPTIMIZED_KERNEL_DIR=cmsis_nn (the kernels Cortex-M users deploy).

Facts read from TFLM's tensorflow/lite/micro/kernels/cmsis_nn/*.cc at 90b983c2 and from
CMSIS-NN at the commit TFLM pins there (4ab83cc3, its Source/*/arm_*_get_buffer_sizes_s8.c),
built with GCC (arm-none-eabi-gcc, as TFLM's Makefile does) and TFLM's default
KERNELS_OPTIMIZED_FOR_SPEED:
- CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D keep TFLM's reference OpData plus
  a scratch-buffer index (4 bytes); FULLY_CONNECTED adds two indices, a kernel-sums pointer and
  three int32 sizes (24 bytes); SOFTMAX adds the row count and size (8 bytes). Their Prepare
  allocates what the reference kernels' does.
- Their scratch (RequestScratchBufferInArena in Prepare) is what arm_*_get_buffer_size returns
  on the CPU's code path: no DSP (Cortex-M0/M0+/M3), DSP (M4, M7, M33) or MVE (M55, M85).
- SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM (with CMSIS-NN's LSTM parameters and, for int8/int16
  activations, eight precomputed kernel sums instead of a fourth scratch buffer), BATCH_MATMUL
  and TRANSPOSE_CONV have their own OpData and requests, stated below.
- ADD, MUL, PAD, TRANSPOSE, MAXIMUM and MINIMUM allocate as the reference kernels do; every other
  operator runs TFLM's reference kernel.
- int16 activations (int8 weights): CONV_2D requests arm_convolve_s16_get_buffer_size where
  CMSIS-NN runs it (a 64-bit bias or none; a 32-bit bias runs TFLM's reference code, no
  request), AVERAGE_POOL_2D arm_avgpool_s16_get_buffer_size; DEPTHWISE_CONV_2D and
  FULLY_CONNECTED request nothing (TFLM asks only for int8, CMSIS-NN's s16 size is 0). int4
  weights are not modelled: reports name them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from host.planning.libraries import loops, reference
from host.planning.libraries.base import KernelsError, OpAllocations
from host.planning.model.operands import (
    FLOAT32,
    INT4,
    INT8,
    INT16,
    INT64,
    builtin_options,
    input_tensor,
    output_tensor,
)
from host.planning.tflm.structs import Abi, sizeof
from host.tflite.model import Model, Operator, Subgraph

NO_DSP, DSP, MVE = "no DSP", "DSP", "MVE"
# The code path CMSIS-NN compiles for each CPU (ARM_MATH_DSP / ARM_MATH_MVEI).
DEFAULT_CPU = "cortex-m4"  # --cpu unless told: its DSP path is also the M7's and M33's
PATHS = {
    "cortex-m0": NO_DSP,
    "cortex-m0plus": NO_DSP,
    "cortex-m3": NO_DSP,
    "cortex-m4": DSP,
    "cortex-m7": DSP,
    "cortex-m33": DSP,
    "cortex-m55": MVE,
}
CH_IN_BLOCK_MVE = 124  # arm_nnsupportfunctions.h
TRANSPOSE_CONV_OPTIONS = 49  # BuiltinOptions type of TransposeConvOptions
# Depthwise with one input channel becomes a convolution on MVE above this many output
# channels (arm_nnsupportfunctions.h: 8 with Arm Compiler 6, 1 with GCC).
DW_TO_CONV_THRESHOLD = 1

# cmsis_nn_lstm_gate: multipliers and shifts, weights and effective biases, bias, activation.
LSTM_GATE = ("int", "int", "ptr", "ptr", "int", "int", "ptr", "ptr", "ptr", "enum")
LSTM_PARAMS = ("int",) * 15 + (LSTM_GATE,) * 4  # cmsis_nn_lstm_params
# OpData that is not the reference one plus fields: CmsisNnOpDataSvdf (KERNELS_OPTIMIZED_FOR_
# SPEED: no scratch_weight_tensor_index), transpose_conv.cc's (ConvParams, three buffer
# indices, the per-channel arrays).
OP_DATA_OWN: dict[str, tuple] = {
    "SVDF": ("int",) * 9 + ("ptr",),
    "TRANSPOSE_CONV": (reference.CONV_PARAMS, "int", "int", "int", "ptr", "ptr"),
}
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16  # arm_nnsupportfunctions.h
# Extra fields after the reference OpData, per operator.
OP_DATA_EXTRA: dict[str, tuple] = {
    "CONV_2D": ("int",),  # buffer_idx
    "DEPTHWISE_CONV_2D": ("int",),
    "AVERAGE_POOL_2D": ("int",),
    "MAX_POOL_2D": ("int",),
    # buffer_conv_1x1_idx, buffer_idx, kernel_sums, batches, accum_depth, output_depth
    "FULLY_CONNECTED": ("int", "int", "ptr", "int", "int", "int"),
    "SOFTMAX": ("int", "int"),  # num_rows, row_size
    "BATCH_MATMUL": ("int",) * 5,  # output_shape (cmsis_nn_dims), buffer_idx
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (LSTM_PARAMS,),
}
NO_SCRATCH = frozenset({"MAX_POOL_2D", "SOFTMAX", "ADD", "MUL", "PAD", "PADV2", "TRANSPOSE"})


# --------------------------------------------------------------------------- shapes


def _conv_geometry(model: Model, sg: Subgraph, op: Operator, kind: int, slots: tuple):
    """(input, filter, output, stride, dilation, padding) of a convolution, padding as TFLM's
    ComputePaddingHeightWidth gives it; None when the shapes are not 4-D."""
    x, w, out = input_tensor(sg, op, 0), input_tensor(sg, op, 1), output_tensor(sg, op, 0)
    if x is None or w is None or out is None:
        return None
    if len(x.shape) != 4 or len(w.shape) != 4 or len(out.shape) != 4:
        return None
    opts = builtin_options(model, sg.index, op.index, kind)
    kernel = (w.shape[1], w.shape[2])
    stride, dilation, pad = loops.window(opts, x.shape, out.shape, kernel, slots)
    return x, w, out, stride, dilation, pad


def _im2col(in_c: int, kh: int, kw: int, path: str) -> int:
    """arm_convolve_s8_get_buffer_size."""
    cols = kw * kh * in_c
    if path == MVE:
        return 4 * ((cols + 15) // 16) * 16
    return 2 * (cols + (-cols) % 4) * 2


@dataclass(frozen=True)
class ConvDims:
    """What arm_convolve_wrapper_s8_get_buffer_size reads: input (h, w, c), filter (h, w, c),
    output width, and (y, x) stride, dilation and padding."""

    in_h: int
    in_w: int
    in_c: int
    kh: int
    kw: int
    filter_c: int
    out_w: int
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int]


def _conv_1_x_n_mve(d: ConvDims) -> int:
    """arm_convolve_1_x_n_s8_get_buffer_size_mve (the input is one row)."""
    stride, pad = d.stride[1], d.pad[1]
    asym = ((d.out_w - 1) * stride + d.kw - d.in_w) % 2
    right = max(1, (pad + asym + stride - 1) // stride) if pad + asym else 0
    left = max(1, (pad + stride - 1) // stride) if pad else 0
    if right + max(d.out_w - (right + left), 0) + left != d.out_w:
        return _im2col(d.in_c, d.kh, d.kw, MVE)
    pad_left = pad * d.in_c
    pad_right = right * d.in_c if asym else pad_left
    left_elems = d.kw * d.in_c
    return max(left_elems + pad_left, left_elems - d.in_c + pad_right)


def _conv_buffer(d: ConvDims, path: str) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size on the CPU's path (GCC)."""
    same_c = d.in_c == d.filter_c  # else grouped: arm_convolve_s8
    if same_c and d.pad == (0, 0) and (d.kh, d.kw) == (1, 1) and d.dilation == (1, 1):
        return 0  # 1x1: arm_convolve_1x1_s8_fast needs scratch only with Arm Compiler 6
    one_by_n = d.in_h == 1 and d.dilation[1] == 1 and d.kh == 1 and same_c
    if one_by_n and (d.stride[1] * d.in_c) % 4 == 0 and path == MVE:
        return _conv_1_x_n_mve(d)
    return _im2col(d.in_c, d.kh, d.kw, path)


def _dims(g, filter_c: int | None = None) -> ConvDims:
    x, w, out, stride, dilation, pad = g
    c = w.shape[3] if filter_c is None else filter_c
    return ConvDims(*x.shape[1:4], w.shape[1], w.shape[2], c, out.shape[2], stride, dilation, pad)


def _conv(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    g = _conv_geometry(model, sg, op, loops.CONV_OPTIONS, (1, 2, 4, 5))
    if g is None:
        return None
    x, w = g[0], g[1]
    if x.type == INT16 and w.type == INT8:
        return _conv_s16(sg, op, x.shape[3] * w.shape[1] * w.shape[2], path)
    if x.type != INT8:
        return [] if x.type == FLOAT32 else None  # float: no request
    if w.type == INT4:
        return None
    size = _conv_buffer(_dims(g), path)
    return [size] if size > 0 else []


def _conv_s16(sg: Subgraph, op: Operator, cols: int, path: str) -> list[int]:
    """arm_convolve_s16_get_buffer_size (cols: input channels x filter height x width), asked
    for only where TFLM calls CMSIS-NN: a 64-bit bias or none."""
    bias = input_tensor(sg, op, 2)
    if bias is not None and bias.type != INT64:
        return []
    size = 4 * ((cols + 7) // 8) * 8 * 2 if path == MVE else 2 * cols * 2
    return [size] if size > 0 else []


def _depthwise(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size."""
    g = _conv_geometry(model, sg, op, loops.DEPTHWISE_OPTIONS, (1, 2, 5, 6))
    if g is None:
        return None
    x, w, out, _, dilation, pad = g
    if x.type == INT16 and w.type == INT8:
        return []  # TFLM requests scratch for int8 only
    if x.type != INT8:
        return [] if x.type == FLOAT32 else None
    if w.type == INT4:
        return None
    in_c, out_c, (kh, kw) = x.shape[3], out.shape[3], (w.shape[1], w.shape[2])
    if path == MVE and in_c == 1 and out_c > DW_TO_CONV_THRESHOLD:
        # run as a convolution of out_c one-channel filters, with the filter re-ordered
        return [_conv_buffer(_dims(g, filter_c=1), MVE) + out_c * kh * kw]
    size = 0
    if in_c == out_c and x.shape[0] == 1 and dilation == (1, 1):
        if path == MVE:
            size = 4 * CH_IN_BLOCK_MVE * kw * kh
        elif path == DSP and not ((kh, kw) == (3, 3) and max(pad) <= 1):
            size = in_c * kw * kh * 2
    return [size] if size > 0 else []


def _fully_connected(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    x, w, out = input_tensor(sg, op, 0), input_tensor(sg, op, 1), output_tensor(sg, op, 0)
    if x is None or w is None or out is None or len(out.shape) < 2:
        return None
    if x.type == INT16 and w.type == INT8:
        return []  # arm_fully_connected_s16_get_buffer_size is 0
    if x.type != INT8:
        return [] if x.type == FLOAT32 else None
    if w.type == INT4:
        return None
    depth, units = w.shape[-1], out.shape[-1]
    if len(out.shape) > 2 and depth % 4 == 0:  # as a 1x1 convolution
        per_channel = reference.scale_count(model, w) > 1
        return [] if per_channel else [units * 8]  # fake per-channel multipliers and shifts
    if path == MVE and not _sums_precomputed(sg, op):
        return [units * 4]
    return []


def _sums_precomputed(sg: Subgraph, op: Operator) -> bool:
    """KERNELS_OPTIMIZED_FOR_SPEED: constant weights and bias get their kernel sums computed
    once, in a persistent buffer, instead of scratch."""
    w, bias = input_tensor(sg, op, 1), input_tensor(sg, op, 2)
    return w is not None and w.is_const and (bias is None or bias.is_const)


def _average_pool(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    x, out = input_tensor(sg, op, 0), output_tensor(sg, op, 0)
    if x is None or out is None or len(out.shape) != 4:
        return None
    if x.type not in (INT8, INT16):
        return [] if x.type == FLOAT32 else None
    return [out.shape[3] * 4] if path == DSP else []  # arm_avgpool_s8/s16: the same


def _batch_matmul(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    """int8: arm_fully_connected_s8_get_buffer_size of the output's last dimension."""
    x, out = input_tensor(sg, op, 0), output_tensor(sg, op, 0)
    if x is None or out is None or not out.shape:
        return None
    return [out.shape[-1] * 4] if x.type == INT8 and path == MVE else []


def _lstm_cmsis(sg: Subgraph, op: Operator) -> int:
    """Bytes per kernel sum of CMSIS-NN's own LSTM (int8 or int16 activations with an int16
    cell state: int32 or int64 sums); 0 where the reference LSTM runs."""
    x, cell = input_tensor(sg, op, 0), input_tensor(sg, op, 19)
    if x is None or cell is None or cell.type != INT16:
        return 0
    return {INT8: 4, INT16: 8}.get(x.type, 0)


def _lstm(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    """Three state buffers for CMSIS-NN's LSTM, the reference kernel's four otherwise."""
    buffers = reference.op_scratch(model, sg, op)
    return buffers[:3] if buffers and _lstm_cmsis(sg, op) else buffers


def _transpose_conv(model: Model, sg: Subgraph, op: Operator, path: str) -> list[int] | None:
    """int8: arm_transpose_conv_s8_get_buffer_size and its reverse-convolution buffer (both
    requested, even of 0 bytes); int16 as the reference kernel."""
    out, w, x = output_tensor(sg, op, 0), input_tensor(sg, op, 1), input_tensor(sg, op, 2)
    if out is None or w is None or x is None or len(x.shape) != 4 or len(w.shape) != 4:
        return None
    if x.type != INT8:
        return reference.op_scratch(model, sg, op)
    opts = builtin_options(model, sg.index, op.index, TRANSPOSE_CONV_OPTIONS)
    sw, sh = (opts.scalar(1, "i", 1), opts.scalar(2, "i", 1)) if opts is not None else (1, 1)
    in_c, (kh, kw), out_c = x.shape[3], (w.shape[1], w.shape[2]), out.shape[3]
    if sw <= 2 and sh <= 2 and in_c > REVERSE_TCOL_EFFICIENT_THRESHOLD:
        return [_im2col(in_c, kh, kw, path), in_c * kw * kh * out_c]
    buf_x = ((x.shape[2] - 1) * sw + max(kw, sh)) * out_c
    return [buf_x * max(kh, sh) * 4, 0]


SCRATCH: dict[str, Callable[[Model, Subgraph, Operator, str], list[int] | None]] = {
    "CONV_2D": _conv,
    "DEPTHWISE_CONV_2D": _depthwise,
    "FULLY_CONNECTED": _fully_connected,
    "AVERAGE_POOL_2D": _average_pool,
    "BATCH_MATMUL": _batch_matmul,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    "TRANSPOSE_CONV": _transpose_conv,
}


# --------------------------------------------------------------------------- the library


class CmsisNN(reference.Reference):
    """TFLM with CMSIS-NN's kernels where it has them, the reference kernels elsewhere."""

    name = "cmsis-nn"
    title = "CMSIS-NN kernels"

    def __init__(self, cpu: str = DEFAULT_CPU) -> None:
        if cpu not in PATHS:
            raise KernelsError(f"unknown CPU {cpu!r}; choose from {', '.join(PATHS)}")
        super().__init__(cpu)
        self.path = PATHS[cpu]

    @property
    def label(self) -> str:
        return f"{self.title} ({self.cpu}, {self.path} path)"

    def scratch(self, model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
        if op.name in NO_SCRATCH:
            return []
        rule = SCRATCH.get(op.name)
        return super().scratch(model, sg, op) if rule is None else rule(model, sg, op, self.path)

    def allocations(
        self, model: Model, sg: Subgraph, op: Operator, abi: Abi
    ) -> OpAllocations | None:
        alloc = super().allocations(model, sg, op, abi)
        if alloc is None:
            return None
        if op.name in OP_DATA_OWN:
            alloc.init = [sizeof(OP_DATA_OWN[op.name], abi)]
        elif op.name in OP_DATA_EXTRA:
            alloc.init = [sizeof((reference.op_data(abi)[op.name], *OP_DATA_EXTRA[op.name]), abi)]
        alloc.prepare = [*alloc.prepare, *self._prepare_extra(model, sg, op)]
        return alloc

    def _prepare_extra(self, model: Model, sg: Subgraph, op: Operator) -> list[int]:
        """Persistent buffers CMSIS-NN's Prepare adds to the reference kernel's."""
        if op.name == "FULLY_CONNECTED":
            sums = self._kernel_sums(model, sg, op)
            return [sums] if sums else []
        if op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
            hidden = input_tensor(sg, op, 18)
            size = _lstm_cmsis(sg, op)
            return [size * hidden.shape[-1]] * 8 if size and hidden and hidden.shape else []
        if op.name == "SVDF" and self.path == MVE:
            x, feature = input_tensor(sg, op, 0), input_tensor(sg, op, 1)
            if x is not None and x.type == INT8 and feature is not None and feature.shape:
                return [feature.shape[0] * 4]
        return []

    def _kernel_sums(self, model: Model, sg: Subgraph, op: Operator) -> int:
        """Bytes of FULLY_CONNECTED's persistent kernel sums (MVE, not as a 1x1 convolution)."""
        x, w, out = input_tensor(sg, op, 0), input_tensor(sg, op, 1), output_tensor(sg, op, 0)
        if self.path != MVE or x is None or w is None or out is None or x.type != INT8:
            return 0
        if w.type == INT4 or (len(out.shape) > 2 and w.shape[-1] % 4 == 0):
            return 0
        return out.shape[-1] * 4 if _sums_precomputed(sg, op) else 0

    def borrows_exactly(self, name: str) -> bool:
        return name not in SCRATCH and name not in OP_DATA_EXTRA and super().borrows_exactly(name)

    def overlap_kernel(self, model: Model, sg: Subgraph, op: Operator) -> loops.Kernel | None:
        if self.path != DSP or op.name not in DSP_OVERLAP:
            return None  # no loop order proven on this path: nothing overlaps
        x, w, out = input_tensor(sg, op, 0), input_tensor(sg, op, 1), output_tensor(sg, op, 0)
        if x is None or out is None or x.type != INT8 or out.type != INT8:
            return None  # int16 variants call other functions
        if op.name == "DEPTHWISE_CONV_2D" and (w is None or w.type != INT8):
            return None  # int4 filters call arm_depthwise_conv_wrapper_s4
        k = super().overlap_kernel(model, sg, op)
        return None if k is None else DSP_OVERLAP[op.name](k)


# Overlap on the DSP path (ARM_MATH_DSP without MVE), from CMSIS-NN's loops at 4ab83cc3. Each
# function below reads an output pixel's input window before writing that pixel's channels, in
# the blocks stated (tests/support/overlap_sim.py replays each function). Every other operator
# allows nothing: arm_convolve_1x1_s8_fast (1x1, stride 1) calls arm_nn_mat_mult_nt_t_s8,
# which walks output-channel pairs outermost over all pixels; arm_max_pool_s8 copies the
# window's first tap into the output, then reads the rest of the window; arm_convolve_s8
# (im2col of two output pixels, then both written) and the other functions have no rule yet.


def _dsp_depthwise(k: loops.Kernel) -> loops.Kernel:
    """The function arm_depthwise_conv_wrapper_s8 calls, and its channel block."""
    kernel, _, dilation, pad = k.window
    b, oc, ic = k.out_shape[0], k.out_shape[3], k.in_shapes[0][3]
    plain = b == 1 and dilation == (1, 1)
    if plain and oc == ic and kernel == (3, 3) and max(pad) <= 1:
        # Channels in fours, then the leftover one by one.
        return replace(k, function="arm_depthwise_conv_3x3_s8", block=4, singly=True)
    if plain and oc == ic:  # the window of all channels into an im2col buffer, then the pixel
        return replace(k, function="arm_depthwise_conv_s8_opt", block=oc)
    if plain and (oc // ic) % 4 == 0:  # per input channel, output channels in fours
        return replace(k, function="depthwise_conv_s8_mult_4", block=4)
    return replace(k, function="depthwise_conv_s8_generic", block=1)  # the reference order


def _dsp_average_pool(k: loops.Kernel) -> loops.Kernel:
    """arm_avgpool_s8 sums the window of all channels into a buffer, then writes the pixel."""
    return replace(k, function="arm_avgpool_s8", block=k.out_shape[3])


DSP_OVERLAP: dict[str, Callable[[loops.Kernel], loops.Kernel]] = {
    "DEPTHWISE_CONV_2D": _dsp_depthwise,
    "AVERAGE_POOL_2D": _dsp_average_pool,
}
