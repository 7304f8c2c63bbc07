"""Sizes of the C/C++ objects TFLM keeps in its arena, from their field lists, per target ABI.

Each struct is written down as its fields' C types in declaration order (read from TFLM's
headers and kernel sources at commit 90b983c2), and laid out as a C compiler does: every field
at a multiple of its alignment, the size a multiple of the largest alignment. Only the pointer
size and `size_t` change between the targets (x86-64 and 32-bit Arm EABI both align int64 and
double to 8), plus whether TFLM was built with USE_TFLM_COMPRESSION, which adds fields to some
structs: the pip `tflite-micro` wheel is, a default Cortex-M build is not.

A polymorphic class starts with one vtable pointer per polymorphic base ("vptr").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

Field = str | tuple  # a C type name, ("array", type, n), or a nested struct's field tuple


@dataclass(frozen=True)
class Abi:
    """What decides TFLM's struct sizes on a target."""

    name: str
    pointer: int  # sizeof(void*) == sizeof(size_t) == sizeof(intptr_t)
    enum: int  # sizeof of TFLM's small C enums (TfLiteType, TfLiteFusedActivation, ...)
    compression: bool  # TFLM built with USE_TFLM_COMPRESSION
    pip: bool = False  # the pip tflite-micro wheel and its Python interpreter wrapper

    def scalar(self, c_type: str) -> int:
        if c_type in ("ptr", "size_t", "vptr"):
            return self.pointer
        if c_type == "enum":
            return self.enum
        return _SCALARS[c_type]


# Both targets: int 4, int64/double 8 aligned to 8, bool 1.
_SCALARS = {
    "int8": 1, "bool": 1, "int16": 2, "uint16": 2, "int": 4, "float": 4,
    "int64": 8, "double": 8,
}  # fmt: skip

X86_64_PIP = Abi("x86-64 (pip tflite-micro)", 8, 4, True, pip=True)
# arm-none-eabi-gcc makes enums as small as their values allow (AAPCS "short enums", its
# default; TFLM's cortex_m_generic build does not change it), so TFLM's enums take 1 byte.
CORTEX_M = Abi("32-bit Arm Cortex-M", 4, 1, False)


def layout(fields: tuple[Field, ...], abi: Abi) -> tuple[int, int]:
    """(sizeof, alignof) of a struct with these fields."""
    return _layout(fields, abi)


@cache
def _layout(fields: tuple[Field, ...], abi: Abi) -> tuple[int, int]:
    offset, align = 0, 1
    for f in fields:
        size, a = _field(f, abi)
        offset = -(-offset // a) * a + size
        align = max(align, a)
    return -(-offset // align) * align, align


def _field(f: Field, abi: Abi) -> tuple[int, int]:
    if isinstance(f, str):
        n = abi.scalar(f)
        return n, n
    if f[0] == "array":
        size, a = _field(f[1], abi)
        return size * f[2], a
    return _layout(f, abi)


def sizeof(fields: tuple[Field, ...], abi: Abi) -> int:
    return layout(fields, abi)[0]


def with_compression(abi: Abi, base: tuple[Field, ...], extra: tuple[Field, ...]) -> tuple:
    """A struct whose trailing fields exist only under USE_TFLM_COMPRESSION."""
    return base + extra if abi.compression else base


# --------------------------------------------------------------------------- core objects

# tensorflow/lite/c/common.h (TF_LITE_STATIC_MEMORY): TfLiteEvalTensor {data, dims, type}.
EVAL_TENSOR = ("ptr", "ptr", "enum")
# TfLiteTensor, TF_LITE_STATIC_MEMORY form: quantization {type, params}, params {scale,
# zero_point}, data, dims, bytes, type, allocation_type, is_variable (64 B / 32 B).
TFLITE_TENSOR = (("enum", "ptr"), ("float", "int"), "ptr", "ptr", "size_t", "enum", "enum", "bool")
# TfLiteNode (static memory): inputs, outputs, intermediates, user_data, builtin_data,
# custom_initial_data, custom_initial_data_size; NodeAndRegistration adds the registration.
TFLITE_NODE = ("ptr",) * 6 + ("int",)
NODE_AND_REGISTRATION = (TFLITE_NODE, "ptr")
AFFINE_QUANTIZATION = ("ptr", "ptr", "int")  # TfLiteAffineQuantization
INT_ARRAY_HEADER = 4  # TfLiteIntArray {int size; int data[];}

# arena_allocator/single_arena_buffer_allocator.h: two interface bases (two vptrs), five
# pointers, intptr_t checksum, int count; the recording variant adds four size_t counters.
SINGLE_ARENA_ALLOCATOR = ("vptr", "vptr") + ("ptr",) * 5 + ("size_t", "int")
RECORDING_SINGLE_ARENA_ALLOCATOR = (SINGLE_ARENA_ALLOCATOR,) + ("size_t",) * 4
# memory_planner/greedy_memory_planner.h
GREEDY_MEMORY_PLANNER = ("vptr", "int", "int") + ("ptr",) * 4 + ("int", "int", "ptr", "bool")
GREEDY_BYTES_PER_BUFFER = 40  # per_buffer_size(): 4 ints + 2 ints + 3 ints + 1 int, all int
# micro_allocator.h: vptr, two allocator interfaces, builtin-data allocator, planner,
# model_is_allocating_, scratch_buffer_request_count_, scratch_buffer_head_, max_head.
MICRO_ALLOCATOR = ("vptr", "ptr", "ptr", "ptr", "ptr", "bool", "size_t", "ptr", "size_t")
RECORDED_ALLOCATION = ("size_t",) * 3


def recording_micro_allocator(abi: Abi) -> tuple:
    """RecordingMicroAllocator: its base, a pointer and one RecordedAllocation per category."""
    categories = 8 if abi.compression else 7  # kCompressionData exists only with compression
    return (MICRO_ALLOCATOR, "ptr") + (RECORDED_ALLOCATION,) * categories


BUILTIN_DATA_ALLOCATOR = ("vptr", "ptr")  # MicroBuiltinDataAllocator


def subgraph_allocations(abi: Abi) -> tuple:
    """SubgraphAllocations: node_and_registrations, tensors (+ CompressedTensorList)."""
    return with_compression(abi, ("ptr", "ptr"), ("ptr",))


SCRATCH_BUFFER_REQUEST = ("size_t", "int", "int")  # internal::ScratchBufferRequest
SCRATCH_BUFFER_HANDLE = ("ptr",)
MAX_SCRATCH_BUFFERS_PER_OP = 12  # kMaxScratchBuffersPerOp
# micro_allocation_info.h AllocationInfo: bytes, output_ptr, first_created, last_used,
# offline_offset, needs_allocating.
ALLOCATION_INFO = ("size_t", "ptr", "int", "int", "int", "bool")
# micro_resource_variable.h (the pip interpreter creates these when a model has VAR_HANDLE).
MICRO_RESOURCE_VARIABLES = ("ptr", "int", "int")
MICRO_RESOURCE_VARIABLE = ("ptr", "ptr", "ptr", "size_t", "int8")
ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment()


# --------------------------------------------------------------------------- builtin options
# Allocated by TFLM's flatbuffer parser (`safe_allocator.Allocate<T>` in
# tensorflow/lite/core/api/flatbuffer_conversions.cc), whichever kernels run the operator.

PADDING_VALUES = ("int",) * 4  # TfLitePaddingValues
# tensorflow/compiler/mlir/lite/core/c/builtin_op_data.h, for the parsers the micro op
# resolver uses. Operators absent here parse to no struct (ParseQuantize, ParseRelu, ...).
BUILTIN_PARAMS: dict[str, tuple] = {
    "ADD": ("enum",) + ("bool",),
    "SUB": ("enum",) + ("bool",),
    "MUL": ("enum",),
    "DIV": ("enum",),
    "CONV_2D": ("enum",) + ("int",) * 2 + ("enum",) + ("int",) * 2 + ("enum",),
    "DEPTHWISE_CONV_2D": ("enum",) + ("int",) * 3 + ("enum",) + ("int",) * 2,
    "FULLY_CONNECTED": ("enum",) + ("enum",) + ("bool", "bool") + ("enum",),
    "SOFTMAX": ("float",),
    "RESHAPE": (("array", "int", 8), "int"),
    "SQUEEZE": (("array", "int", 8), "int"),
    "AVERAGE_POOL_2D": ("enum",) + ("int",) * 4 + ("enum",) + (PADDING_VALUES,),
    "MAX_POOL_2D": ("enum",) + ("int",) * 4 + ("enum",) + (PADDING_VALUES,),
    "L2_POOL_2D": ("enum",) + ("int",) * 4 + ("enum",) + (PADDING_VALUES,),
    "CONCATENATION": ("int",) + ("enum",),
    "CALL_ONCE": ("int",),
    "IF": ("int",) * 2,
    "WHILE": ("int",) * 2,
    "VAR_HANDLE": ("ptr", "ptr"),
    "GATHER": ("int",) * 2,
    "CAST": ("enum",) * 2,
    "STRIDED_SLICE": ("int",) * 5 + ("bool",),
    "SVDF": ("int",) + ("enum",) + ("bool",),
    "LEAKY_RELU": ("float",),
    "RESIZE_NEAREST_NEIGHBOR": ("bool", "bool"),
    "RESIZE_BILINEAR": ("bool", "bool"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("enum",) + ("float", "float", "bool", "bool", "bool"),
    "BATCH_MATMUL": ("bool",) * 3,
    "MEAN": ("bool",),
    "SUM": ("bool",),
    "REDUCE_MAX": ("bool",),
    "REDUCE_MIN": ("bool",),
    "REDUCE_ALL": ("bool",),
    "SPLIT": ("int",),
    "SPLIT_V": ("int",),
    "PACK": ("int",) * 2,
    "UNPACK": ("int",) * 2,
    "SHAPE": ("enum",),
    "ARG_MAX": ("enum",),
    "ARG_MIN": ("enum",),
    "CUMSUM": ("bool", "bool"),
    "DEPTH_TO_SPACE": ("int",),
    "SPACE_TO_DEPTH": ("int",),
    "L2_NORMALIZATION": ("enum",),
    "MIRROR_PAD": ("enum",),
    "TRANSPOSE_CONV": ("enum",) + ("int",) * 2 + ("enum",) + ("enum",),
}

# The pip wheel is built from TFLM sources newer than 90b983c2 (its kernels live in namespace
# tflite::micro): there ParseFullyConnected allocates a 32-byte, 8-aligned struct (seen in a
# gdb trace of the wheel's allocations; 90b983c2's TfLiteFullyConnectedParams is 16 / 4).
PIP_PARAMS_OVERRIDE: dict[str, tuple[int, int]] = {"FULLY_CONNECTED": (32, 8)}


def params_layout(name: str, abi: Abi) -> tuple[int, int] | None:
    """(sizeof, alignof) of the options struct the operator's parser allocates, if any."""
    if abi.pip and name in PIP_PARAMS_OVERRIDE:
        return PIP_PARAMS_OVERRIDE[name]
    fields = BUILTIN_PARAMS.get(name)
    return layout(fields, abi) if fields else None
