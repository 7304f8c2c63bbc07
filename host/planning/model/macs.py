"""The multiply-accumulates of a model's convolutions and fully connected layers."""

from __future__ import annotations

from host.rewrite import bands as rw
from host.tflite.model import Model


def model_macs(model: Model) -> int:
    """Multiply-accumulates of the model's convolutions (the denominator of the budget)."""
    sub = model.subgraphs[0]
    total = 0
    for op in sub.operators:
        if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            s = rw.describe_op(model, sub, op)
            total += s.macs * sub.tensors[op.outputs[0]].shape[1]
        elif op.name == "FULLY_CONNECTED":
            w = sub.tensors[op.inputs[1]]
            out = sub.tensors[op.outputs[0]]
            total += (
                out.nbytes() // max(1, out.shape[-1]) * w.shape[0] * w.shape[1] if out.shape else 0
            )
    return total
