"""The multiply-accumulates of a model's convolutions and fully connected layers."""

from __future__ import annotations

import math

from host.rewrite import bands as rw
from host.tflite.model import Model, Operator, Subgraph


def op_macs(model: Model, sg: Subgraph, op: Operator) -> int:
    """Multiply-accumulates of one convolution or fully connected layer (0 for other operators)."""
    if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        return rw.describe_op(model, sg, op).macs * sg.tensors[op.outputs[0]].shape[1]
    if op.name == "FULLY_CONNECTED":
        w, out = sg.tensors[op.inputs[1]], sg.tensors[op.outputs[0]]
        rows = math.prod(out.shape[:-1])  # the batches: whatever the output's element size
        return rows * w.shape[0] * w.shape[1] if out.shape else 0
    return 0


def model_macs(model: Model) -> int:
    """Multiply-accumulates of the model's convolutions (the denominator of the budget)."""
    sub = model.subgraphs[0]
    return sum(op_macs(model, sub, op) for op in sub.operators)


def all_macs(model: Model) -> int:
    """Multiply-accumulates of every subgraph's convolutions and fully connected layers."""
    return sum(op_macs(model, sg, op) for sg in model.subgraphs for op in sg.operators)
