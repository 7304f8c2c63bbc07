"""TFLM's reference kernels (the pip `tflite-micro` package's, and TFLM's default build).

What each kernel does to the arena while the interpreter is set up, in TFLM's order:
- its builtin options struct, allocated by the flatbuffer parser (structs.params_layout),
  in the tail, aligned to alignof(T);
- `Init`'s persistent buffers (the kernel's OpData), 16-byte aligned;
- `Prepare`'s persistent buffers (per-channel multiplier and shift arrays, LUTs, copied dims,
  resource variable buffers), 16-byte aligned; and the TfLiteTensor structs it borrows from
  the temporary section while it runs.
Struct field lists come from the kernels at TFLM commit 90b983c2 (reference kernels; CMSIS-NN
and other optimised kernels allocate differently). Operators not listed here are unknown:
`unknown_ops` names them so that a prediction is never silently short.

Then, while it runs: the scratch buffers its Prepare requests (sizes read from TFLM's kernel
sources, checked against the real interpreter by tests/planning/libraries/test_reference.py),
and its loop orders, from which host/planning/libraries/loops.py derives where its output may
overlap an input.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from host.planning.libraries.base import KernelLibrary, OpAllocations
from host.planning.model.operands import (
    DETECTION,
    FLOAT32,
    INT4,
    INT8,
    INT16,
    INT32,
    QUANT_SCALE,
    QUANT_ZERO_POINT,
    UINT8,
    builtin_options,
    custom_options,
    detection_sizes,
    elements,
    flexbuffer_map,
    input_tensor,
    operator_table,
    output_tensor,
    quantization_table,
    type_size,
)
from host.planning.tflm.structs import (
    EVAL_TENSOR,
    PADDING_VALUES,
    Abi,
    params_layout,
    sizeof,
    with_compression,
)
from host.tflite import schema as S
from host.tflite.model import Model, Operator, Subgraph, Tensor

_I = ("int",)

# --------------------------------------------------------------------------- kernel op data

FC_PARAMS = ("int",) * 7 + ("float", "float", "bool", "bool", "int8")  # FullyConnectedParams
ARITHMETIC_PARAMS = (
    ("int8",) + ("int",) * 12 + ("float", "float", "int64", "int64", "int16", "int16")
    + (("array", "int", 5),)
)  # fmt: skip  # ArithmeticParams (BroadcastableOpCategory is a uint8_t enum class)
GATE_PARAMETERS = (FC_PARAMS, FC_PARAMS)
ACTIVATION_PARAMS = ("int8", "int", "int")  # FusedActivationFunctionType : uint8_t
# ConvParams: PaddingType (uint8_t), PaddingValues (four int16), four int16 strides/dilations,
# seven int32, two floats.
CONV_PARAMS = ("int8", ("int16",) * 4) + ("int16",) * 4 + ("int",) * 7 + ("float", "float")


@cache
def op_data(abi: Abi) -> dict[str, tuple]:
    """sizeof(OpData) the kernel's Init allocates, per operator."""
    conv = (PADDING_VALUES,) + _I * 5 + ("ptr", "ptr") + _I * 3
    fc = _I * 9 + ("ptr", "ptr", "bool")
    pooling = (PADDING_VALUES,) + _I * 2 + ("float", "float")
    softmax = ("double",) + _I * 6 + ("float",) + ("ptr",) * 5  # SoftmaxParams
    add = ("bool",) + _I * 12 + ("float", "float")
    comparison = _I * 7 + ("bool",)  # ComparisonParams
    pad = ("int8", ("array", "int", 5), "int8", ("array", "int", 5), "int8", "int")
    concat = ("int", "ptr", "ptr", "int", "int", "float")  # ConcatenationParams
    lstm = (
        ("bool",) + _I * 4,  # LstmSizeInfo
        ("float", "int16", "int"),  # CellStateInfo
        "enum",
        GATE_PARAMETERS, GATE_PARAMETERS, GATE_PARAMETERS, GATE_PARAMETERS,
        (ARITHMETIC_PARAMS,) * 3,  # InterGateParameters
        ("array", "int", 4),
    )  # fmt: skip
    return {
        "CONV_2D": with_compression(abi, conv, _I * 2),
        "DEPTHWISE_CONV_2D": with_compression(abi, conv, _I * 2),
        "FULLY_CONNECTED": with_compression(abi, fc, _I * 2),
        "SOFTMAX": softmax,
        "ADD": add,
        "SUB": add[:-2],
        "MUL": _I * 7 + ("float", "float"),
        "DIV": _I * 7,
        "AVERAGE_POOL_2D": pooling,
        "MAX_POOL_2D": pooling,
        "CONCATENATION": with_compression(abi, (concat,), (("array", "int", 10),)),
        "CALL_ONCE": ("int", "bool"),
        "IF": _I * 2,
        "WHILE": _I * 2,
        "VAR_HANDLE": _I,
        "ASSIGN_VARIABLE": _I,
        "EQUAL": (comparison,),
        "NOT_EQUAL": (comparison,),
        "LESS": (comparison,),
        "LESS_EQUAL": (comparison,),
        "GREATER": (comparison,),
        "GREATER_EQUAL": (comparison,),
        "QUANTIZE": (("int", "double"),) + _I * 3,  # QuantizationParams + 3 ints
        "DEQUANTIZE": (("double", "int"),) + _I * 3,  # DequantizationParams + 3 ints
        "LOGISTIC": _I * 4,
        "TANH": _I * 4,
        "SVDF": _I * 9,
        "PAD": (pad,),
        "PADV2": (pad,),
        "LEAKY_RELU": _I * 6,
        "HARD_SWISH": ("int16",) * 3 + ("int", "int16", "int"),  # HardSwishParams
        "BATCH_MATMUL": ("ptr", "ptr", "ptr", "bool", "bool", "bool"),
        "TRANSPOSE_CONV": with_compression(abi, (CONV_PARAMS, "int"), _I * 2)
        + ("int", "ptr", "ptr"),
        "RELU": (ACTIVATION_PARAMS + _I * 4,),
        "RELU6": _I * 2,  # Relu6OpData: six, zero
        "ELU": (("array", "int8", 256),),  # OpData: a 256-entry int8 table
        "PRELU": _I * 7,  # PreluParams
        "STRIDED_SLICE": (
            "int8",
            ("array", "int", 5),
            "int8",
            ("array", "int", 5),
            "int8",
            ("array", "int", 5),
            ("uint16",) * 5,
            "bool",
        ),  # fmt: skip  # StridedSliceParams
        "UNIDIRECTIONAL_SEQUENCE_LSTM": lstm,
        "SQUARED_DIFFERENCE": ("bool", ARITHMETIC_PARAMS),
        "RSQRT": _I * 4 + ("bool", "enum", "enum"),
        "ABS": _I * 4 + ("bool", "enum", "enum"),
        "MEAN": _I * 6 + ("float", "int", "float", "int", "int"),
        "SUM": _I * 6 + ("float", "int", "float", "int", "int"),
        "REDUCE_MAX": _I * 6 + ("float", "int", "float", "int", "int"),
        "REDUCE_MIN": _I * 6 + ("float", "int", "float", "int", "int"),
        "REDUCE_ALL": _I * 6 + ("float", "int", "float", "int", "int"),
        "SELECT_V2": ("bool",),
        "L2_NORMALIZATION": _I,  # L2NormalizationParams
        "MIRROR_PAD": _I * 5,  # OpDataMirrorPad
        "SPACE_TO_BATCH_ND": _I,  # SpaceToBatchParams
        # detection_postprocess.cc OpData: options, the scales (CenterSizeEncoding), 11 scratch
        # indices, three TfLiteQuantizationParams {float scale; int32_t zero_point}.
        "TFLite_Detection_PostProcess": _I * 3
        + ("float", "float", "int", "bool")
        + (("float",) * 4,)
        + _I * 11
        + (("float", "int"),) * 3,
    }


# Kernels whose Init allocates nothing (registered with a null init).
NO_OP_DATA = frozenset({
    "RESHAPE", "TRANSPOSE", "GATHER", "CAST", "READ_VARIABLE", "MAXIMUM", "MINIMUM",
    "RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "SPLIT", "SPLIT_V", "PACK", "UNPACK",
    "SLICE", "EXP", "SQUEEZE", "EXPAND_DIMS", "SHAPE", "FILL", "ZEROS_LIKE",
    "SignalFftAutoScale", "SignalFilterBankSquareRoot", "LOG", "SQRT", "SQUARE", "NEG", "SIN",
    "COS", "FLOOR", "CEIL", "ROUND", "FLOOR_DIV", "FLOOR_MOD", "LOGICAL_NOT", "LOG_SOFTMAX",
    "LOGICAL_AND", "LOGICAL_OR", "ARG_MAX", "ARG_MIN", "BROADCAST_TO", "BATCH_TO_SPACE_ND",
    "REVERSE_V2", "DYNAMIC_UPDATE_SLICE", "BROADCAST_ARGS", "CUMSUM", "EMBEDDING_LOOKUP",
    "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "GATHER_ND", "L2_POOL_2D", "ADD_N",
})  # fmt: skip


# --------------------------------------------------------------------------- per operator


Rule = Callable[[Model, Subgraph, Operator], list[int]]


def scale_count(model: Model, t: Tensor) -> int:
    """Length of a tensor's quantization scale vector (0 if unquantized)."""
    q = quantization_table(model, t)
    if q is None:
        return 0
    scale, zero = q.get(QUANT_SCALE), q.get(QUANT_ZERO_POINT)
    return len(scale) // 4 if scale and zero else 0


def _per_channel_conv(dim: int) -> Rule:
    """CONV_2D / DEPTHWISE_CONV_2D: multiplier and shift arrays of the filter's channels."""

    def rule(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        f = input_tensor(sg, op, 1)
        n = f.shape[dim] if f is not None and len(f.shape) > dim else 0
        return [4 * n, 4 * n]

    return rule


def _fully_connected(model: Model, sg: Subgraph, op: Operator) -> list[int]:
    inp, f = input_tensor(sg, op, 0), input_tensor(sg, op, 1)
    if inp is None or f is None or inp.type == FLOAT32:
        return []
    n = scale_count(model, f)
    return [4 * n, 4 * n] if n > 1 else []


def _softmax(model: Model, sg: Subgraph, op: Operator) -> list[int]:
    inp = input_tensor(sg, op, 0)
    lut = 2 * 513  # sizeof(int16_t) * LUTSize<int16_t>()
    return [lut, lut] if inp is not None and inp.type == INT16 else []


def _dims_copy(model: Model, sg: Subgraph, op: Operator) -> list[int]:
    """CreateWritableTensorDimsWithCopy of the output: a TfLiteIntArray of its rank."""
    out = output_tensor(sg, op, 0)
    return [4 + 4 * len(out.shape)] if out is not None else []


def _log_softmax(abi: Abi) -> Rule:
    """log_softmax.cc Prepare allocates its LogSoftmaxOpData for int8 only (no Init)."""
    op_data = _I * 5 + ("size_t", "size_t")

    def rule(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        inp = input_tensor(sg, op, 0)
        return [sizeof(op_data, abi)] if inp is not None and inp.type == INT8 else []

    return rule


def _prepare_op_data(size: int, int8_only: bool, dims: bool) -> Rule:
    """Kernels that allocate their OpData in Prepare (CUMSUM, ADD_N: for an int8 output only;
    EMBEDDING_LOOKUP: always, and it copies its output's dims)."""

    def rule(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        out = output_tensor(sg, op, 0)
        own = [size] if out is not None and (out.type == INT8 or not int8_only) else []
        return own + (_dims_copy(model, sg, op) if dims else [])

    return rule


def _reshape(model: Model, sg: Subgraph, op: Operator) -> list[int]:
    out = output_tensor(sg, op, 0)
    return _dims_copy(model, sg, op) if out is not None and -1 in out.shape else []


def _option(model: Model, sg: Subgraph, op: Operator, key: str) -> int:
    """An integer from a signal-library custom operator's flexbuffer options."""
    value = flexbuffer_map(custom_options(model, sg.index, op.index)).get(key, 0)
    return value if isinstance(value, int) else 0


def _kiss_fftr_bytes(fft_length: int, cpx: int, abi: Abi) -> int:
    """kiss_fftr_alloc's memory for a real FFT (kissfft, MAXFACTORS 32): kiss_fftr_state (three
    pointers), the half-length complex FFT's state (nfft, inverse, 64 factors, nfft twiddles)
    and 3/2 * nfft complex values of work area."""
    n = fft_length // 2
    kiss_fft_state = 4 + 4 + 4 * 64 + cpx  # ends with twiddles[1]
    return 3 * abi.pointer + kiss_fft_state + cpx * (n - 1) + cpx * (n * 3 // 2)


@cache
def _signal_init(abi: Abi) -> dict[str, Callable[[Model, Subgraph, Operator], list[int]]]:
    """Init allocations of signal/micro/kernels' custom operators (params struct + state)."""
    filterbank_config = ("int",) + ("ptr",) * 5 + ("int", "int")
    subtraction_config = ("int",) * 8 + ("bool",)

    def rfft(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        cpx = {INT16: 4, INT32: 8, FLOAT32: 8}.get(_option(model, sg, op, "T"), 4)
        params = ("int",) * 4 + ("enum", "ptr", "int", "ptr")
        fft_length = _option(model, sg, op, "fft_length")
        return [sizeof(params, abi), _kiss_fftr_bytes(fft_length, cpx, abi)]

    def filter_bank(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        channels = _option(model, sg, op, "num_channels")
        return [sizeof((filterbank_config, "ptr"), abi), 8 * (channels + 1)]

    def subtraction(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        channels = _option(model, sg, op, "num_channels")
        return [sizeof((subtraction_config, "ptr", "size_t"), abi), 4 * channels]

    return {
        "SignalWindow": lambda *_: [8],  # TFLMSignalWindowParams: shift, input_size
        "SignalEnergy": lambda *_: [8],  # TFLMSignalEnergyParams: end_index, start_index
        "SignalPCAN": lambda *_: [4],  # TfLitePcanParams: snr_shift
        "SignalFilterBankLog": lambda *_: [8],  # input_correction_bits, output_scale
        "SignalRfft": rfft,
        "SignalFilterBank": filter_bank,
        "SignalFilterBankSpectralSubtraction": subtraction,
    }


def _batch_matmul(abi: Abi) -> Rule:
    """batch_matmul.cc InitializeTemporaries: quantization data for int8/int16, and a transposed
    copy (TfLiteEvalTensor, dims, data) of LHS if adj_x and of RHS unless adj_y; then
    ReshapeOutputTensor copies the output's dims."""

    def rule(model: Model, sg: Subgraph, op: Operator) -> list[int]:
        options = operator_table(model, sg.index, op.index).get(S.OP_OPTIONS)
        adj_x = bool(options.scalar(0, "B", 0)) if options is not None else False
        adj_y = bool(options.scalar(1, "B", 0)) if options is not None else False
        lhs, rhs = input_tensor(sg, op, 0), input_tensor(sg, op, 1)
        out: list[int] = []
        if lhs is None or rhs is None:
            return out
        if lhs.type in (INT8, INT16):
            out.append(4 * 7)  # QuantizationOpDataBatchMatmul
        for t, transposed in ((lhs, adj_x), (rhs, not adj_y)):
            if transposed:
                out += [sizeof(EVAL_TENSOR, abi), 4 + 4 * len(t.shape), t.nbytes()]
        return out + _dims_copy(model, sg, op)

    return rule


PREPARE_RULES: dict[str, Rule] = {
    "CONV_2D": _per_channel_conv(0),
    "TRANSPOSE_CONV": _per_channel_conv(0),
    "DEPTHWISE_CONV_2D": _per_channel_conv(3),
    "FULLY_CONNECTED": _fully_connected,
    "SOFTMAX": _softmax,
    "GATHER": _dims_copy,
    "GATHER_ND": _dims_copy,
    "DEPTH_TO_SPACE": _dims_copy,
    "SPACE_TO_DEPTH": _dims_copy,
    "L2_POOL_2D": _dims_copy,
    "RESHAPE": _reshape,
}


@cache
def _abi_rules(abi: Abi) -> dict[str, Rule]:
    """Prepare rules whose sizes depend on the ABI."""
    return {
        "BATCH_MATMUL": _batch_matmul(abi),
        "LOG_SOFTMAX": _log_softmax(abi),
        "CUMSUM": _prepare_op_data(sizeof(_I * 9, abi), int8_only=True, dims=False),
        # OpData {float scale; size_t num_columns}
        "EMBEDDING_LOOKUP": _prepare_op_data(sizeof(("float", "size_t"), abi), False, True),
        "ADD_N": _prepare_op_data(sizeof(_I * 10, abi), int8_only=True, dims=False),
    }


def op_allocations(model: Model, sg: Subgraph, op: Operator, abi: Abi) -> OpAllocations | None:
    """The operator's allocations, or None if its kernel is not modelled."""
    name = op.name
    data, signal = op_data(abi), _signal_init(abi)
    if name in signal:
        return OpAllocations(params=None, init=signal[name](model, sg, op))
    if name not in data and name not in NO_OP_DATA:
        return None
    rule = _abi_rules(abi).get(name, PREPARE_RULES.get(name))
    return OpAllocations(
        params=params_layout(name, abi),
        init=[sizeof(data[name], abi)] if name in data else [],
        prepare=rule(model, sg, op) if rule else [],
    )


def unknown_ops(model: Model, abi: Abi) -> list[str]:
    return sorted(
        {op.name for sg in model.subgraphs for op in sg.operators}
        - set(op_data(abi))
        - set(_signal_init(abi))
        - NO_OP_DATA
    )


# Kernels whose Prepare was traced (gdb, pip wheel) borrowing each of its node's tensors at most
# once; every other kernel is counted as borrowing each twice (CONV_2D, DEPTHWISE_CONV_2D,
# TRANSPOSE_CONV, CONCATENATION, MEAN and TANH were seen borrowing some twice). The minimum
# arena uses this as an upper bound and is marked not exact if Prepare ever decides it.
BORROW_ONCE = frozenset({
    "ADD", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D", "BATCH_MATMUL", "CALL_ONCE", "CAST",
    "DEQUANTIZE", "DIV", "EQUAL", "FULLY_CONNECTED", "GATHER", "HARD_SWISH", "LEAKY_RELU", "LESS",
    "LOGISTIC", "MAXIMUM", "MAX_POOL_2D", "MINIMUM", "MUL", "PAD", "QUANTIZE", "READ_VARIABLE",
    "RELU", "RESHAPE", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "RSQRT", "SOFTMAX", "SPLIT",
    "SPLIT_V", "SQUARED_DIFFERENCE", "STRIDED_SLICE", "SUB", "SVDF", "TRANSPOSE",
    "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNPACK", "VAR_HANDLE", "WHILE", "SignalEnergy",
    "SignalFftAutoScale", "SignalFilterBank", "SignalFilterBankLog",
    "SignalFilterBankSpectralSubtraction", "SignalFilterBankSquareRoot", "SignalPCAN",
    "SignalRfft", "SignalWindow",
})  # fmt: skip


# Of those, the kernels seen borrowing every tensor of their node exactly once, and the ones
# without a Prepare (they borrow nothing): for them the count is exact, not a bound.
BORROW_EXACTLY_ONCE = frozenset({
    "ADD", "AVERAGE_POOL_2D", "BATCH_MATMUL", "CAST", "DEQUANTIZE", "DIV", "FULLY_CONNECTED",
    "GATHER", "HARD_SWISH", "LEAKY_RELU", "LOGISTIC", "MAX_POOL_2D", "MUL", "PAD", "QUANTIZE",
    "RELU", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "RSQRT", "SOFTMAX",
    "SQUARED_DIFFERENCE", "STRIDED_SLICE", "SUB", "SVDF", "TRANSPOSE", "SignalEnergy",
    "SignalFilterBank", "SignalFilterBankLog", "SignalRfft", "SignalWindow",
})  # fmt: skip
NO_PREPARE = frozenset({
    "MAXIMUM", "MINIMUM", "PACK", "UNPACK", "NEG", "FLOOR", "LOGICAL_AND", "LOGICAL_OR",
    "ARG_MAX", "ARG_MIN",
})  # fmt: skip


# Kernels whose Prepare borrows each of its inputs once and no output (read in the source).
BORROW_INPUTS_ONCE = frozenset({"TFLite_Detection_PostProcess"})


def borrowed(op: Operator) -> list[int]:
    """Tensor indices the kernel's Prepare borrows (an upper bound unless `borrows_exactly`)."""
    if op.name in BORROW_INPUTS_ONCE:
        return list(op.inputs)
    return (op.inputs + op.outputs) * borrows(op.name)


def borrows(name: str) -> int:
    """How many times, at most, the kernel's Prepare borrows each tensor of its node."""
    if name in NO_PREPARE:
        return 0
    return 1 if name in BORROW_ONCE else 2


def borrows_exactly(name: str) -> bool:
    """Whether `borrows` is exact for this kernel (not only an upper bound)."""
    return name in NO_PREPARE or name in BORROW_EXACTLY_ONCE or name in BORROW_INPUTS_ONCE


# --------------------------------------------------------------------------- scratch

# sizeof(void*) in the pip tflite-micro interpreter (Linux x86_64): ADD_N's scratch holds
# pointers, so its size is the host's, not a Cortex-M's 4.
TFLM_POINTER_BYTES = 8

LSTM_OPTIONS = 71  # BuiltinOptions type of UnidirectionalSequenceLSTMOptions
LSTM_TIME_MAJOR = 3  # its time_major slot


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Builtin operators whose TFLM reference kernels never request scratch in Prepare (from the
# TFLM kernel sources; docs/scratch.md lists which are also proven against the real TFLM).
TFLM_NO_SCRATCH_BUILTINS = _words(
    """
    ABS ADD ARG_MAX ARG_MIN ASSIGN_VARIABLE AVERAGE_POOL_2D BATCH_MATMUL BATCH_TO_SPACE_ND
    BROADCAST_ARGS BROADCAST_TO CALL_ONCE CAST CEIL CONCATENATION COS CUMSUM DEPTH_TO_SPACE
    DEQUANTIZE DIV ELU EMBEDDING_LOOKUP EQUAL EXP EXPAND_DIMS FILL FLOOR FLOOR_DIV FLOOR_MOD
    GATHER GATHER_ND GREATER GREATER_EQUAL HARD_SWISH IF L2_NORMALIZATION L2_POOL_2D
    LEAKY_RELU LESS LESS_EQUAL LOG LOGICAL_AND LOGICAL_NOT LOGICAL_OR LOGISTIC LOG_SOFTMAX
    MAX_POOL_2D MAXIMUM MINIMUM MUL NEG NOT_EQUAL PACK PAD PADV2 PRELU QUANTIZE READ_VARIABLE
    RELU RELU6 RESHAPE RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR
    REVERSE_V2 ROUND RSQRT SELECT_V2 SHAPE SIN SLICE SOFTMAX SPACE_TO_BATCH_ND SPACE_TO_DEPTH
    SPLIT SPLIT_V SQUARE SQUARED_DIFFERENCE SQUEEZE SQRT STRIDED_SLICE SUB TANH TRANSPOSE
    UNPACK VAR_HANDLE WHILE ZEROS_LIKE
    """
)

# TFLM signal-library custom operators that never request scratch.
TFLM_NO_SCRATCH_CUSTOM = frozenset(
    {
        "SignalWindow",
        "SignalEnergy",
        "SignalFilterBank",
        "SignalFilterBankLog",
        "SignalFilterBankSquareRoot",
        "SignalFilterBankSpectralSubtraction",
        "SignalFftAutoScale",
        "SignalPCAN",
        "SignalDelay",
        "SignalIrfft",
        "SignalFramer",
        "SignalStacker",
        "SignalOverlapAdd",
    }
)


# A kernel model: the byte sizes the op requests, in request order; None = not modelled for
# this operator's types (it then counts as an unknown scratch op).
KernelModel = Callable[[Model, Subgraph, Operator], list[int] | None]


def _svdf(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # svdf_common.cc PrepareSvdf: int32 scratch [batch, filters]; int8 also [batch, units].
    inp, feat, out = input_tensor(sg, op, 0), input_tensor(sg, op, 1), output_tensor(sg, op, 0)
    if inp is None or feat is None or out is None or len(inp.shape) != 2 or not feat.shape:
        return None
    batch, filters = inp.shape[0], feat.shape[0]
    if inp.type == INT8:
        units = out.shape[1] if len(out.shape) == 2 else 0
        return [batch * filters * 4, batch * units * 4]
    if inp.type == FLOAT32:
        return [batch * filters * 4]
    return None


def _lstm(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # unidirectional_sequence_lstm.cc Prepare: four buffers of batch x state_dimension cells.
    inp, hidden, cell = input_tensor(sg, op, 0), input_tensor(sg, op, 18), input_tensor(sg, op, 19)
    if inp is None or hidden is None or cell is None or len(inp.shape) != 3:
        return None
    opts = builtin_options(model, sg.index, op.index, LSTM_OPTIONS)
    time_major = bool(opts.scalar(LSTM_TIME_MAJOR, "B", 0)) if opts is not None else False
    batch = inp.shape[1] if time_major else inp.shape[0]
    state_dim = hidden.shape[-1] if hidden.shape else 0
    return [batch * state_dim * type_size(cell)] * 4


def _int4_filter(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # conv/depthwise/fully-connected Prepare: an int4 filter is unpacked into int8 scratch.
    flt = input_tensor(sg, op, 1)
    if flt is not None and flt.type == INT4:
        return [elements(flt.shape)]
    return []


def _transpose_conv(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # transpose_conv.cc Prepare: int8 accumulates in int32 scratch, int16 in int64, one value
    # per output element; an int16 bias is then widened into an int64 scratch copy. Inputs:
    # output shape, filter, input, optional bias.
    out, inp, bias = output_tensor(sg, op, 0), input_tensor(sg, op, 2), input_tensor(sg, op, 3)
    if out is None or inp is None:
        return None
    if inp.type == FLOAT32:
        return []
    if inp.type == INT8:
        return [elements(out.shape) * 4]
    if inp.type == INT16:
        widened = [elements(bias.shape) * 8] if bias is not None and bias.type == INT16 else []
        return [elements(out.shape) * 8, *widened]
    return None


def _mirror_pad(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # mirror_pad.cc Prepare: element counts per dimension of the output, then of the input.
    inp = input_tensor(sg, op, 0)
    return None if inp is None else [4 * len(inp.shape)] * 2


def _rfft(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # signal/micro/kernels/rfft.cc RfftPrepare: a work area of fft_length input elements.
    inp = input_tensor(sg, op, 0)
    if inp is None:
        return None
    try:
        fft_length = flexbuffer_map(custom_options(model, sg.index, op.index)).get("fft_length")
    except ValueError:
        return None
    if not isinstance(fft_length, int):
        return None
    return [fft_length * type_size(inp)]


def _add_n(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # add_n.cc Prepare: an array of one data pointer per input (pointers of the host TFLM).
    out = output_tensor(sg, op, 0)
    if out is None or out.type not in (FLOAT32, INT8):
        return None
    return [TFLM_POINTER_BYTES * len(op.inputs)]


def _reduce_indices(inp: Tensor, axis: Tensor) -> list[int]:
    # reduce_common.cc: an int per input dimension (iteration index) and per axis entry.
    return [4 * len(inp.shape), 4 * elements(axis.shape)]


def _reduce_max(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # REDUCE_MAX / REDUCE_MIN / REDUCE_ALL: only the index buffers.
    inp, axis = input_tensor(sg, op, 0), input_tensor(sg, op, 1)
    if inp is None or axis is None:
        return None
    return _reduce_indices(inp, axis)


def _mean_or_sum(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # MEAN / SUM: quantized types first sum in int32, one per output element; then the index
    # buffers (the pip TFLM requests them for every type, as measured by
    # tests/planning/libraries/test_reference.py).
    inp, axis, out = input_tensor(sg, op, 0), input_tensor(sg, op, 1), output_tensor(sg, op, 0)
    if inp is None or axis is None or out is None:
        return None
    sums = [4 * elements(out.shape)] if inp.type in (INT8, INT16, UINT8) else []
    return sums + _reduce_indices(inp, axis)


def _detection_tflm(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    # detection_postprocess.cc Prepare: active flags (bytes), decoded boxes, a copy of the
    # scores, two per-box float buffers, then by max_detections x boxes: NMS scores, sorted
    # values, (keep indices: per box), sorted indices, box indices (max(classes, detections)
    # rows), selected (min(boxes, detections) rows).
    d = detection_sizes(model, sg, op)
    if d is None:
        return None
    n, m = d.boxes, d.max_detections
    return [n, 16 * n, 4 * d.predictions, 4 * n, 4 * n, 4 * m * n, 4 * m * n, 4 * n, 4 * m * n,
            4 * max(d.num_classes, m) * n, 4 * min(n, m) * n]  # fmt: skip


SCRATCH_RULES: dict[str, KernelModel] = {
    "SVDF": _svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    "CONV_2D": _int4_filter,
    "DEPTHWISE_CONV_2D": _int4_filter,
    "FULLY_CONNECTED": _int4_filter,
    "TRANSPOSE_CONV": _transpose_conv,
    "ADD_N": _add_n,
    "MIRROR_PAD": _mirror_pad,
    "REDUCE_MAX": _reduce_max,
    "REDUCE_MIN": _reduce_max,
    "REDUCE_ALL": _reduce_max,
    "MEAN": _mean_or_sum,
    "SUM": _mean_or_sum,
    "SignalRfft": _rfft,
    DETECTION: _detection_tflm,
}


def op_scratch(model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
    """Requests of one operator; None if its scratch behaviour is unknown."""
    if op.name in TFLM_NO_SCRATCH_BUILTINS or op.name in TFLM_NO_SCRATCH_CUSTOM:
        return []
    kernel = SCRATCH_RULES.get(op.name)
    return None if kernel is None else kernel(model, sg, op)


# --------------------------------------------------------------------------- the library


class Reference(KernelLibrary):
    """TFLM's reference kernels (tensorflow/lite/micro/kernels/*.cc at 90b983c2)."""

    name = "reference"
    title = "TFLM reference kernels"

    def scratch(self, model: Model, sg: Subgraph, op: Operator) -> list[int] | None:
        return op_scratch(model, sg, op)

    def allocations(
        self, model: Model, sg: Subgraph, op: Operator, abi: Abi
    ) -> OpAllocations | None:
        return op_allocations(model, sg, op, abi)

    def unknown_ops(self, model: Model, abi: Abi) -> list[str]:
        return unknown_ops(model, abi)

    def borrowed(self, op: Operator) -> list[int]:
        """Tensor indices the kernel's Prepare borrows (an upper bound unless exact)."""
        return borrowed(op)

    def borrows_exactly(self, name: str) -> bool:
        return borrows_exactly(name)


REFERENCE = Reference()
