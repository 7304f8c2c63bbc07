"""The categories of stock TFLM's arena report: the lines RecordingMicroAllocator's
PrintAllocations() prints, each with its unit word. A board's recorded report (host.device),
the wire record and the TFLM target's prediction (host.planning.targets) all carry them."""

from __future__ import annotations

from dataclasses import dataclass

# PrintAllocations() order, with the word each line counts in.
CATEGORIES = (
    ("TfLiteEvalTensor data", "allocations"),
    ("Persistent TfLiteTensor data", "tensors"),
    ("Persistent TfLiteTensor quantization data", "allocations"),
    ("Persistent buffer data", "allocations"),
    ("TfLiteTensor variable buffer data", "allocations"),
    ("NodeAndRegistration struct", "NodeAndRegistration structs"),
    ("Operator runtime data", "OpData structs"),
)


@dataclass
class Category:
    """One line of the report: bytes used (alignment included) and requested, and how many."""

    name: str
    used: int
    requested: int
    count: int
    unit: str
