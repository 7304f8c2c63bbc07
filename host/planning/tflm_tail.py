"""An estimate of TFLM's arena tail (persistent allocations) for a model.

The head is exact (host/planning/plan.py); the tail depends on the TFLM build, its kernels' op
data and the pointer size, so this is an estimate, fitted to the pip tflite-micro build
(64-bit host, reference kernels) on the shared models: within 10% of the real value on all
but one (the tests allow 20%).
32-bit microcontrollers use somewhat less (smaller pointers in every persistent struct).
"""

from __future__ import annotations

from host.planning.lifetimes import align_up
from host.tflite.model import Model

EVAL_TENSOR = 24  # TfLiteEvalTensor
NODE_AND_REGISTRATION = 64
PERSISTENT_TENSOR = 64  # TfLiteTensor kept for each model input and output
FIXED = 560  # allocator, interpreter and subgraph bookkeeping
PER_TENSOR_FIXED = 4
OP_DATA = 80  # typical kernel op data per operator
PER_CHANNEL = 8  # per-channel multiplier + shift of CONV_2D / DEPTHWISE_CONV_2D
# Operators whose op data is far from typical (measured on the pip build).
OP_DATA_BY_NAME = {"UNIDIRECTIONAL_SEQUENCE_LSTM": 640, "SVDF": 80}
LIGHT_OPS = {
    "CALL_ONCE", "IF", "WHILE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "LESS",
    "EQUAL", "TRANSPOSE", "PAD", "RESHAPE", "LEAKY_RELU", "RELU", "CONCATENATION", "GATHER",
}  # fmt: skip
LIGHT_OP_DATA = 16
CUSTOM_OP_DATA = 300  # e.g. the Signal* audio front-end operators


def _op_data(name: str, opcode: int) -> int:
    if opcode == 32:
        return CUSTOM_OP_DATA
    if name in LIGHT_OPS:
        return LIGHT_OP_DATA
    return OP_DATA_BY_NAME.get(name, OP_DATA)


def estimate_tflm_tail(model: Model) -> int:
    tensors = len(model.tensors)
    ops = [op for sg in model.subgraphs for op in sg.operators]
    sg0 = model.subgraphs[0]
    channels = 0
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D") and op.outputs:
                shape = sg.tensors[op.outputs[0]].shape
                channels += shape[-1] if shape else 0
    variables = sum(align_up(t.nbytes()) for t in model.tensors if t.is_variable)
    return (
        FIXED
        + tensors * (EVAL_TENSOR + PER_TENSOR_FIXED)
        + sum(NODE_AND_REGISTRATION + _op_data(op.name, op.opcode) for op in ops)
        + (len(sg0.inputs) + len(sg0.outputs)) * PERSISTENT_TENSOR
        + channels * PER_CHANNEL
        + variables
    )
