"""The parts of TensorFlow Lite's schema (schema.fbs, version 3) this project must know.

Only offset-bearing fields are listed (see host/tflite/flatbuf.py): scalars are copied raw. Slot
numbers are the schema's field indices. Options tables that hold only scalars need no entry.
"""

from __future__ import annotations

from host.tflite.flatbuf import Ref, Schema, UnionRef, Vec

I32 = Vec("int32")

# Options tables (BuiltinOptions / BuiltinOptions2 members) that contain offsets.
_OPTION_TABLES: dict[str, dict[int, object]] = {
    "ConcatEmbeddingsOptions": {1: I32, 2: I32},
    "ReshapeOptions": {0: I32},
    "SqueezeOptions": {0: I32},
    "VarHandleOptions": {0: "string", 1: "string"},
    "BucketizeOptions": {0: Vec("float32")},
    "StablehloBroadcastInDimOptions": {0: Vec("int64")},
    "StablehloSliceOptions": {0: Vec("int64"), 1: Vec("int64"), 2: Vec("int64")},
    "StablehloConvolutionOptions": {
        0: Vec("int64"),
        1: Vec("int64"),
        2: Vec("int64"),
        3: Vec("int64"),
        4: Vec("bool"),
        7: Vec("int64"),
        10: Vec("int64"),
        13: Vec("int64"),
        16: Vec("uint32"),
    },
    "StablehloCustomCallOptions": {0: "string", 2: "string", 4: I32, 5: Vec("uint8")},
    "StablehloReduceOptions": {0: Vec("int64")},
    "StablehloScatterOptions": {1: Vec("int64"), 2: Vec("int64"), 3: Vec("int64")},
    "StablehloDynamicSliceOptions": {0: Vec("int64")},
    "StablehloPadOptions": {0: Vec("int64"), 1: Vec("int64"), 2: Vec("int64")},
    "StablehloDotGeneralOptions": {
        0: Vec("int64"),
        1: Vec("int64"),
        2: Vec("int64"),
        3: Vec("int64"),
        4: Vec("uint32"),
    },
    "StablehloReduceWindowOptions": {i: Vec("int64") for i in range(5)},
    "StablehloGatherOptions": {0: Vec("int64"), 1: Vec("int64"), 2: Vec("int64"), 4: Vec("int64")},
    "StablehloTransposeOptions": {0: Vec("int64")},
    "StableHLOCompositeOptions": {0: "string", 2: Vec("uint8")},
}

# BuiltinOptions type ids whose tables hold offsets; every other id up to the last known one
# is a scalar-only table ("Scalars").
_BUILTIN_OPTIONS_WITH_OFFSETS = {
    3: "ConcatEmbeddingsOptions",
    17: "ReshapeOptions",
    30: "SqueezeOptions",
    111: "VarHandleOptions",
    115: "BucketizeOptions",
}
_BUILTIN_OPTIONS_LAST = 126
_BUILTIN_OPTIONS2_WITH_OFFSETS = {
    2: "StablehloBroadcastInDimOptions",
    3: "StablehloSliceOptions",
    4: "StablehloConvolutionOptions",
    5: "StablehloCustomCallOptions",
    6: "StablehloReduceOptions",
    7: "StablehloScatterOptions",
    9: "StablehloDynamicSliceOptions",
    10: "StablehloPadOptions",
    12: "StablehloDotGeneralOptions",
    13: "StablehloReduceWindowOptions",
    16: "StablehloGatherOptions",
    17: "StablehloTransposeOptions",
    21: "StableHLOCompositeOptions",
}
_BUILTIN_OPTIONS2_LAST = 22


def _union(with_offsets: dict[int, str], last: int) -> dict[int, str]:
    return {i: with_offsets.get(i, "Scalars") for i in range(1, last + 1)}


SCHEMA = Schema(
    root="Model",
    identifier=b"TFL3",
    tables={
        "Model": {
            1: Vec("OperatorCode"),
            2: Vec("SubGraph"),
            3: "string",
            4: Vec("Buffer"),
            5: I32,
            6: Vec("Metadata"),
            7: Vec("SignatureDef"),
        },
        "OperatorCode": {1: "string"},
        "SubGraph": {0: Vec("Tensor"), 1: I32, 2: I32, 3: Vec("Operator"), 4: "string"},
        "Tensor": {
            0: I32,
            3: "string",
            4: Ref("QuantizationParameters"),
            6: Ref("SparsityParameters"),
            7: I32,
            9: Vec("VariantSubType"),
        },
        "QuantizationParameters": {
            0: Vec("float32"),
            1: Vec("float32"),
            2: Vec("float32"),
            3: Vec("int64"),
            5: UnionRef("QuantizationDetails", 4),
        },
        "CustomQuantization": {0: Vec("uint8")},
        "SparsityParameters": {0: I32, 1: I32, 2: Vec("DimensionMetadata")},
        "DimensionMetadata": {
            3: UnionRef("SparseIndexVector", 2),
            5: UnionRef("SparseIndexVector", 4),
        },
        "Int32Vector": {0: I32},
        "Uint16Vector": {0: Vec("uint16")},
        "Uint8Vector": {0: Vec("uint8")},
        "VariantSubType": {0: I32},
        "Operator": {
            1: I32,
            2: I32,
            4: UnionRef("BuiltinOptions", 3),
            5: Vec("uint8"),
            7: Vec("bool"),
            8: I32,
            12: UnionRef("BuiltinOptions2", 11),
        },
        # force_align: 16 in the schema; TFLM kernels read weights in place.
        "Buffer": {0: Vec("uint8", align=16)},
        "Metadata": {0: "string"},
        "SignatureDef": {0: Vec("TensorMap"), 1: Vec("TensorMap"), 2: "string"},
        "TensorMap": {0: "string"},
        "Scalars": {},
        **_OPTION_TABLES,  # type: ignore[dict-item]
    },
    unions={
        "QuantizationDetails": {1: "CustomQuantization"},
        "SparseIndexVector": {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"},
        "BuiltinOptions": _union(_BUILTIN_OPTIONS_WITH_OFFSETS, _BUILTIN_OPTIONS_LAST),
        "BuiltinOptions2": _union(_BUILTIN_OPTIONS2_WITH_OFFSETS, _BUILTIN_OPTIONS2_LAST),
    },
    max_slots={
        "Model": 8,
        "OperatorCode": 4,
        "SubGraph": 6,
        "Tensor": 10,
        "QuantizationParameters": 7,
        "CustomQuantization": 1,
        "SparsityParameters": 3,
        "DimensionMetadata": 6,
        "Int32Vector": 1,
        "Uint16Vector": 1,
        "Uint8Vector": 1,
        "VariantSubType": 3,
        "Operator": 14,
        "Buffer": 3,
        "Metadata": 2,
        "SignatureDef": 5,
        "TensorMap": 2,
    },
)

# Slots of the fields this project reads.
MODEL_VERSION, MODEL_OPCODES, MODEL_SUBGRAPHS, MODEL_DESCRIPTION, MODEL_BUFFERS = 0, 1, 2, 3, 4
MODEL_METADATA = 6
OPCODE_DEPRECATED_BUILTIN, OPCODE_CUSTOM, OPCODE_VERSION, OPCODE_BUILTIN = 0, 1, 2, 3
SUBGRAPH_TENSORS, SUBGRAPH_INPUTS, SUBGRAPH_OUTPUTS, SUBGRAPH_OPERATORS, SUBGRAPH_NAME = range(5)
TENSOR_SHAPE, TENSOR_TYPE, TENSOR_BUFFER, TENSOR_NAME = 0, 1, 2, 3
TENSOR_IS_VARIABLE, TENSOR_SHAPE_SIGNATURE = 5, 7
OP_OPCODE_INDEX, OP_INPUTS, OP_OUTPUTS, OP_OPTIONS_TYPE, OP_OPTIONS = 0, 1, 2, 3, 4
OP_INTERMEDIATES = 8
BUFFER_DATA, BUFFER_OFFSET, BUFFER_SIZE = 0, 1, 2
METADATA_NAME, METADATA_BUFFER = 0, 1

# TensorType -> bytes per element (None: not plannable, e.g. strings).
TYPE_NAMES = [
    "FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16", "COMPLEX64",
    "INT8", "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4",
    "BFLOAT16",
]  # fmt: skip
TYPE_SIZES: dict[int, int | None] = {
    0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 5: None, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8,
    13: 4, 14: None, 15: 4, 16: 2, 17: 1, 18: 2,
}  # fmt: skip

# BuiltinOperator codes the planner treats specially (control flow nests subgraphs).
OP_CALL_ONCE, OP_IF, OP_WHILE = 129, 118, 119
OP_VAR_HANDLE = 142
