"""Reading an operator's operands and options: what every kernel library's size rules need.

Shared by the kernel libraries (reference, cmsis_nn, microarena) and the overlap rules, so that
how a shape or an option is read from the flatbuffer is stated once.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from host.tflite import schema as S
from host.tflite.flatbuf import Table
from host.tflite.model import Model, ModelError, Operator, Subgraph, Tensor

OP_CUSTOM_OPTIONS = 5  # Operator.custom_options slot

# TensorType values the size rules use.
FLOAT32, INT32, UINT8, INT64, INT16, INT8, INT4 = 0, 2, 3, 4, 7, 9, 17


# --------------------------------------------------------------------------- model access


def operator_table(model: Model, subgraph: int, op: int) -> Table:
    """The raw flatbuffer table of an operator (for its options)."""
    return model.root.get(S.MODEL_SUBGRAPHS)[subgraph].get(S.SUBGRAPH_OPERATORS)[op]


def builtin_options(model: Model, subgraph: int, op: int, kind: int) -> Table | None:
    """The operator's BuiltinOptions table if it is of union type `kind`, else None."""
    table = operator_table(model, subgraph, op)
    if table.scalar(S.OP_OPTIONS_TYPE, "B", 0) != kind:
        return None  # absent or of another type: TFLM then uses the defaults too
    return table.get(S.OP_OPTIONS)


def custom_options(model: Model, subgraph: int, op: int) -> bytes:
    """The operator's custom options bytes (a flexbuffer for TFLM's custom ops)."""
    raw = operator_table(model, subgraph, op).get(OP_CUSTOM_OPTIONS)
    return bytes(raw) if raw else b""


TENSOR_QUANTIZATION = 4  # Tensor.quantization slot
QUANT_SCALE, QUANT_ZERO_POINT = 2, 3  # QuantizationParameters slots


def quantization_table(model: Model, t: Tensor) -> Table | None:
    """The tensor's QuantizationParameters table, or None."""
    table = model.root.get(S.MODEL_SUBGRAPHS)[t.subgraph].get(S.SUBGRAPH_TENSORS)[t.index]
    return table.get(TENSOR_QUANTIZATION)


def quantization(model: Model, t: Tensor) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """The tensor's scales and zero points (both empty when it is not quantized)."""
    q = quantization_table(model, t)
    scale = q.get(QUANT_SCALE) if q is not None else None
    zero = q.get(QUANT_ZERO_POINT) if q is not None else None
    if not scale or not zero:
        return (), ()
    return (
        struct.unpack(f"<{len(scale) // 4}f", bytes(scale)),
        struct.unpack(f"<{len(zero) // 8}q", bytes(zero)),
    )


def input_tensor(sg: Subgraph, op: Operator, i: int) -> Tensor | None:
    """Input i of op, or None when it is absent or optional (-1)."""
    if i >= len(op.inputs) or op.inputs[i] < 0:
        return None
    return sg.tensors[op.inputs[i]]


def output_tensor(sg: Subgraph, op: Operator, i: int) -> Tensor | None:
    return sg.tensors[op.outputs[i]] if i < len(op.outputs) else None


def elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def type_size(t: Tensor) -> int:
    size = S.TYPE_SIZES.get(t.type)
    if size is None:
        raise ModelError(f"tensor {t.name!r} has type {t.type_name}, which has no element size")
    return size


# --------------------------------------------------------------------------- flexbuffers

_FBT_INT, _FBT_UINT, _FBT_FLOAT = 1, 2, 3
_FBT_INDIRECT_INT, _FBT_INDIRECT_UINT, _FBT_INDIRECT_FLOAT = 6, 7, 8
_FBT_MAP, _FBT_BOOL = 9, 26


def flexbuffer_map(data: bytes) -> dict[str, int | float]:
    """The numeric entries of a flexbuffer whose root is a map (TFLM custom options).

    Only scalars are decoded (what the scratch sizes need); other values are skipped.
    Raises ValueError when the bytes are not such a flexbuffer.
    """
    if len(data) < 3:
        raise ValueError("flexbuffer too short")

    def uint(pos: int, width: int) -> int:
        if width not in (1, 2, 4, 8) or pos < 0 or pos + width > len(data):
            raise ValueError(f"flexbuffer read of {width} bytes at {pos} is out of bounds")
        return int.from_bytes(data[pos : pos + width], "little")

    def scalar(pos: int, width: int, ftype: int) -> int | float:
        if ftype in (_FBT_FLOAT, _FBT_INDIRECT_FLOAT):
            if width not in (4, 8):
                raise ValueError(f"flexbuffer float of width {width}")
            return struct.unpack_from("<f" if width == 4 else "<d", data, pos)[0]
        value = uint(pos, width)
        if ftype in (_FBT_INT, _FBT_INDIRECT_INT) and value >= 1 << (8 * width - 1):
            value -= 1 << (8 * width)
        return value

    root_width = data[-1]
    packed = data[-2]
    root_pos = len(data) - 2 - root_width
    if packed >> 2 != _FBT_MAP:
        raise ValueError("flexbuffer root is not a map")
    width = 1 << (packed & 3)
    values = root_pos - uint(root_pos, root_width)
    size = uint(values - width, width)
    keys_width = uint(values - 2 * width, width)
    keys = values - 3 * width - uint(values - 3 * width, width)
    if size > len(data):
        raise ValueError(f"flexbuffer map claims {size} entries")
    out: dict[str, int | float] = {}
    for i in range(size):
        key_pos = keys + i * keys_width - uint(keys + i * keys_width, keys_width)
        end = data.find(b"\0", key_pos)
        if key_pos < 0 or end < 0:
            raise ValueError("flexbuffer key is not a terminated string")
        key = data[key_pos:end].decode("utf-8", "replace")
        vtype = uint(values + size * width + i, 1)
        ftype, vwidth = vtype >> 2, 1 << (vtype & 3)
        pos = values + i * width
        if ftype in (_FBT_INT, _FBT_UINT, _FBT_FLOAT, _FBT_BOOL):
            out[key] = scalar(pos, width, ftype)
        elif ftype in (_FBT_INDIRECT_INT, _FBT_INDIRECT_UINT, _FBT_INDIRECT_FLOAT):
            out[key] = scalar(pos - uint(pos, width), vwidth, ftype)
    return out


# --------------------------------------------------------------------------- detection

DETECTION = "TFLite_Detection_PostProcess"


@dataclass(frozen=True)
class DetectionSizes:
    """What sizes TFLite_Detection_PostProcess's scratch: box count (box encodings' dims[1]),
    class-prediction elements, and options (flexbuffer; TFLM's defaults when absent)."""

    boxes: int
    predictions: int
    num_classes: int
    max_detections: int
    per_class: int
    regular: bool


def detection_sizes(model: Model, sg: Subgraph, op: Operator) -> DetectionSizes | None:
    enc, cls = input_tensor(sg, op, 0), input_tensor(sg, op, 1)
    if enc is None or cls is None or len(enc.shape) != 3:
        return None
    try:
        o = flexbuffer_map(custom_options(model, sg.index, op.index))
    except ValueError:
        return None
    return DetectionSizes(
        boxes=enc.shape[1],
        predictions=elements(cls.shape[1:]),
        num_classes=int(o.get("num_classes", 0)),
        max_detections=int(o.get("max_detections", 0)),
        per_class=int(o.get("detections_per_class", 100)),
        regular=bool(o.get("use_regular_nms", False)),
    )
