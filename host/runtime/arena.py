"""Exact Python model of the microarena runtime's arena: head, tail, temporary, total.

`predict(model_bytes)` replays, step by step, what firmware/src does while loading a model:
the same tail allocations (interpreter, subgraph table, per-tensor data pointers, operator
records, variables, model I/O descriptors, kernel data), the same temporary allocations
(call-graph check, scratch requests, planner working memory), TFLM's lifetimes and greedy
placement with the model's OfflineMemoryAllocation plan. Struct sizes come from `ABIS`
(checked against the compilers by tests/runtime/test_runtime_layout.py).

What the kernels allocate (op data, scratch, resource variables) is their own business: it is
taken from the host build's request log (`host.runtime.kernel_requests`). For "host" the
prediction is therefore exact (tests compare it with the C runtime on every model); for
"cortex-m" the core's part is exact and the kernels' part uses the host sizes. The kernels keep
no pointers in their op data (fixed-width fields only), so those sizes are the same on both
ABIs and the Cortex-M prediction is exact too (checked on QEMU by
tests/device/test_boards_models.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from host.planning.model import lifetimes, metadata
from host.planning.packing import Buffer, plan_greedy
from host.planning.packing.problem import align_up
from host.runtime.binding import REC_COUNT, categories, kernel_requests
from host.tflite.model import Model, read_model
from host.tflite.ops import BUILTIN_CODES

ALIGN = 16  # MA_ALIGN
PLANNER_BUF = 28  # planner.c `buf`: 7 int32
OP_VAR_HANDLE = BUILTIN_CODES["VAR_HANDLE"]
LOG_PERSISTENT, LOG_SCRATCH, LOG_RESOURCE = 0, 1, 2
EVAL, TENSOR, _QUANT, PERSISTENT, VARIABLE, NODES, _OPDATA = range(7)


@dataclass(frozen=True)
class RuntimeStructs:
    """sizeof / _Alignof of the runtime's internal structs on one target."""

    ctx: int
    subgraph: int
    inode: int
    tensor: int
    resource: int
    scratch_req: int
    ptr: int
    align_ptr: int  # all pointer-holding structs align like a pointer


ABIS = {
    "host": RuntimeStructs(
        ctx=384, subgraph=56, inode=24, tensor=80, resource=48, scratch_req=16, ptr=8, align_ptr=8
    ),
    "cortex-m": RuntimeStructs(
        ctx=224, subgraph=44, inode=16, tensor=60, resource=24, scratch_req=12, ptr=4, align_ptr=4
    ),
}


class _Arena:
    """Offsets-only arena: tail bytes used from the end, temp bytes from the start."""

    def __init__(self) -> None:
        self.tail = 0
        self.temp = 0
        self.required = 0
        self.temp_peak = 0
        self.used = [0] * REC_COUNT
        self.requested = [0] * REC_COUNT
        self.count = [0] * REC_COUNT

    def _note(self) -> None:
        self.required = max(self.required, self.temp + self.tail)
        self.temp_peak = max(self.temp_peak, self.temp)

    def tail_alloc(self, nbytes: int, align: int, cat: int) -> None:
        new = align_up(self.tail + nbytes, align)
        self.used[cat] += new - self.tail
        self.requested[cat] += nbytes
        if cat not in (EVAL, NODES, TENSOR):
            self.count[cat] += 1
        self.tail = new
        self._note()

    def temp_alloc(self, nbytes: int, align: int) -> None:
        self.temp = align_up(self.temp, align) + nbytes
        self._note()


def _greedy(bufs: list[dict]) -> int:
    """planner.c greedy() is TFLM's GreedyMemoryPlanner: offsets written into bufs."""
    problem = [
        Buffer(i, b["first"], b["last"] + 1, b["size"], b["offline"] if b["offline"] >= 0 else None)
        for i, b in enumerate(bufs)
    ]
    for i, offset in plan_greedy(problem, ALIGN).items():
        bufs[i]["offset"] = offset
    return max((b["offset"] + b["size"] for b in bufs), default=0)


def predict(
    model_bytes: bytes, abi: str = "cortex-m", requests: list | None = None
) -> dict[str, object]:
    """head/tail/total/temporary/required of the runtime for this model (see module doc)."""
    a = ABIS[abi]
    model = Model(model_bytes)
    if requests is None:
        requests = kernel_requests(model_bytes)
    plan = metadata.read(model)
    offline = plan.offsets if plan is not None else None
    subgraphs = model.subgraphs
    ar = _Arena()
    ar.tail = align_up(a.ctx, ALIGN)
    ar.required = ar.tail

    # ma_parse_model
    ar.tail_alloc(a.subgraph * len(subgraphs), a.align_ptr, PERSISTENT)
    for sg in subgraphs:
        if not sg.tensors:
            continue
        ar.tail_alloc(a.ptr * len(sg.tensors), a.align_ptr, EVAL)
        ar.count[EVAL] += len(sg.tensors)
        if sg.operators:
            ar.tail_alloc(a.inode * len(sg.operators), a.align_ptr, NODES)
            ar.count[NODES] += len(sg.operators)

    def is_offline(g: int) -> bool:
        return offline is not None and offline[g] != -1

    # allocate_variables: variables without an offline offset live in the tail
    in_tail: set[int] = set()
    for sg in subgraphs:
        for t in sg.tensors:
            if t.is_variable and not is_offline(t.global_index) and t.nbytes() > 0:
                ar.tail_alloc(t.nbytes(), ALIGN, VARIABLE)
                in_tail.add(t.global_index)

    # prepare_all
    ar.temp_alloc(4 * len(subgraphs), 4)  # call-graph check: depths, then scopes; reset
    ar.temp_alloc(8 * len(subgraphs), 8)
    ar.temp = 0
    handles = sum(op.opcode == OP_VAR_HANDLE for sg in subgraphs for op in sg.operators)
    if handles:
        ar.tail_alloc(a.resource * handles, a.align_ptr, PERSISTENT)
    by_node: dict[tuple[int, int], list] = {}
    for r in requests:
        by_node.setdefault((r.subgraph, r.node), []).append(r)
    scratch: list[tuple[int, int, int]] = []  # (bytes, subgraph, node)
    not_planned: set[int] = set(in_tail)
    for sg in subgraphs:
        for op in sg.operators:
            if op.opcode == OP_VAR_HANDLE and op.outputs:
                not_planned.add(sg.tensors[op.outputs[0]].global_index)
            for r in by_node.get((sg.index, op.index), []):
                if r.kind == LOG_PERSISTENT:
                    ar.tail_alloc(r.nbytes, ALIGN, PERSISTENT)
                elif r.kind == LOG_SCRATCH:
                    ar.temp_alloc(a.scratch_req, a.align_ptr)
                    scratch.append((r.nbytes, sg.index, op.index))
                else:
                    ar.tail_alloc(max(r.nbytes, 1), ALIGN, VARIABLE)
    n_io = len(subgraphs[0].inputs) + len(subgraphs[0].outputs)
    if n_io:
        ar.tail_alloc(a.tensor * n_io, a.align_ptr, TENSOR)
        ar.count[TENSOR] += n_io
    if scratch:
        ar.tail_alloc(4 * len(scratch), 4, PERSISTENT)

    # ma_plan
    nt = sum(len(sg.tensors) for sg in subgraphs)
    ar.temp_alloc(4 * 2 * (nt + len(scratch)) + 4, 4)
    first, last, spans, end = lifetimes.mark(model, lifetimes.MICROARENA)
    bufs = []
    for sg in subgraphs:
        for t in sg.tensors:
            g = t.global_index
            if t.is_const or t.nbytes() == 0 or g in not_planned:
                continue
            if t.is_variable and not is_offline(g):
                continue
            off = offline[g] if offline is not None else -1
            whole = t.is_variable  # a variable is live for the whole walk (planner.c)
            bufs.append(
                dict(
                    size=align_up(t.nbytes(), ALIGN),
                    first=0 if whole else first.get(g, -1),
                    last=end if whole else last.get(g, -1),
                    offline=off,
                    owner=g,
                )
            )
    for r, (nbytes, s, k) in enumerate(scratch):
        span = spans.get((s, k))
        bufs.append(
            dict(
                size=align_up(nbytes, ALIGN),
                first=span.first if span else -1,
                last=span.last if span else -1,
                offline=-1,
                owner=-1 - r,
            )
        )
    ar.temp_alloc(PLANNER_BUF * len(bufs) + 1, 4)
    ar.temp_alloc(4 * len(bufs) + 1, 4)
    head = _greedy(bufs)
    required = align_up(max(ar.required, head + ar.tail), ALIGN)
    return {
        "abi": abi,
        "head": head,
        "tail": ar.tail,
        "total": head + ar.tail,
        "temp_peak": ar.temp_peak,
        "required": required,
        "tensor_offsets": {b["owner"]: b["offset"] for b in bufs if b["owner"] >= 0},
        "categories": {
            name: (ar.used[c], ar.requested[c], ar.count[c])
            for c, name in enumerate(categories())
            if ar.requested[c]
        },
        "kernel_sizes": "exact",
    }


def predict_model(path: str) -> dict:
    """predict() of a model file as it is (plan included): what the recorder compares a
    board's report with. A bad model gets the reader's clear error first."""
    data = read_model(path)
    Model(data, path)
    return dict(predict(data))
