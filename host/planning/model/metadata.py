"""TFLM's OfflineMemoryAllocation metadata: encode, decode, read and embed it, and the marker
host.plan writes beside it.

The metadata buffer holds int32 values [version, num_subgraphs, n, offset_0 .. offset_{n-1}],
n being the tensor count of all subgraphs together (subgraph 0's tensors first). -1 means
"plan at run time"; TFLM ignores the entries of constant tensors. Of several entries of that
name the last counts, and each must hold one offset per tensor (TFLM's rule, followed by the
runtime, `--check` and `--embed`, which leaves one entry).
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

from host.planning.packing.problem import PlanError
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

ONLINE = -1
VERSION = 0  # TFLM's documented format version; TFLM and this runtime ignore the field
# The runtime refuses a planned tensor that ends beyond this (offsets are int32 and the head
# must stay addressable: planner.c, "offset %d is beyond 2 GiB"); sizes count in 16-byte units.
RUNTIME_ALIGN = 16
MAX_END = 2**31 - 1 - RUNTIME_ALIGN
MARKER = b"microarena_plan"  # metadata entry beside the plan: what host.plan planned for (JSON)


@dataclass
class OfflinePlan:
    version: int
    num_subgraphs: int
    offsets: list[int]  # one per tensor of all subgraphs


def encode(offsets: list[int], num_subgraphs: int) -> bytes:
    return struct.pack(f"<3i{len(offsets)}i", VERSION, num_subgraphs, len(offsets), *offsets)


def decode(data: bytes) -> OfflinePlan:
    """Parse a metadata buffer; ModelError if it is not a well-formed offset table."""
    if len(data) < 12 or len(data) % 4:
        raise ModelError(
            f"OfflineMemoryAllocation buffer is {len(data)} bytes: expected 12 + 4 per tensor"
        )
    version, nsub, n = struct.unpack_from("<3i", data)
    if n < 0 or len(data) != 12 + 4 * n:
        raise ModelError(
            f"OfflineMemoryAllocation declares {n} offsets but holds {(len(data) - 12) // 4}"
        )
    return OfflinePlan(version, nsub, list(struct.unpack_from(f"<{n}i", data, 12)))


def read(model: Model) -> OfflinePlan | None:
    data = model.metadata(OFFLINE_PLAN_NAME)
    return None if data is None else decode(data)


def marker(
    plan: bytes, runtime: str, overlap: bool, kernels: str = "", cpu: str | None = None
) -> bytes:
    """The metadata host.plan --embed writes beside its plan: what it planned for (the
    runtime, and the kernel library and CPU whose scratch and overlap rules it holds to), and
    the plan's CRC, so that a plan another tool writes over it later is not taken for ours."""
    info = {"by": "host.plan", "runtime": runtime, "overlap": overlap, "crc32": zlib.crc32(plan)}
    if kernels:
        info |= {"kernels": kernels, "cpu": cpu}
    return json.dumps(info).encode()


def embed(
    model: Model,
    tensor_offsets: dict[int, int],
    planned_for: str | None = None,
    kernels: str = "",
    cpu: str | None = None,
) -> None:
    """Write offsets (by global tensor index) into the model; other tensors get -1. With
    planned_for (a runtime, "+overlap" for an overlapping plan) a marker records beside the
    plan that host.plan wrote it, and for what (origin.py): also the kernel library and CPU,
    (names, as --kernels and --cpu spell them) whose overlap rules an overlapping plan holds to."""
    offsets = [ONLINE] * len(model.tensors)
    for gi, off in tensor_offsets.items():
        end = off + model.tensors[gi].nbytes()
        if end > MAX_END:  # offsets are int32: no plan can place it, no runtime could run it
            raise PlanError(
                f"{model.tensors[gi].name} would end at byte {end} of the arena, beyond the "
                f"{MAX_END} (2 GiB) an offline plan can address"
            )
        offsets[gi] = off
    data = encode(offsets, len(model.subgraphs))
    model.set_metadata(OFFLINE_PLAN_NAME, data)
    if planned_for is not None:
        runtime, _, overlap = planned_for.partition("+")
        model.set_metadata(MARKER, marker(data, runtime, bool(overlap), kernels, cpu))
