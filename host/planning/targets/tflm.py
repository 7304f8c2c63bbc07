"""TFLM's arena tail and minimum arena size, replayed allocation by allocation.

TFLM's RecordingMicroAllocator (what `PrintAllocations()` reports) sits on one
SingleArenaBufferAllocator: persistent objects grow down from the arena's end (the tail), each
aligned *down* to its alignment; the head grows up from the start; kernels borrow temporary
memory above the head while they prepare. This module replays every allocation
`MicroInterpreter::AllocateTensors()` makes, in TFLM's order, with each object's size for the
chosen ABI (host/planning/tflm/structs.py) and each kernel's requests (the kernel library's,
host/planning/libraries/), and so predicts:
- the tail and each category line of the report, to the byte (alignment padding depends on
  where the arena ends, so the replay works on real offsets);
- the smallest arena that succeeds: the set-up also needs room for the scratch-request list,
  the kernels' temporary TfLiteTensors and, during planning, the greedy planner's per-buffer
  working arrays (40 bytes per buffer) between head and tail; for small models that, not
  head + tail, is the minimum.
The arena is assumed 16-byte aligned (`alignas(16)` on a board; glibc's malloc, which the pip
interpreter's `new uint8_t[]` uses, returns 16-byte aligned blocks on x86-64).
The sequence follows TFLM at commit 90b983c2: recording_micro_allocator.cc, micro_allocator.cc,
micro_interpreter.cc, micro_interpreter_graph.cc, micro_allocation_info.cc,
single_arena_buffer_allocator.cc and python/tflite_micro/interpreter_wrapper.cc.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from host.planning.libraries.base import KernelLibrary, OpAllocations
from host.planning.libraries.reference import REFERENCE, scale_count
from host.planning.model.operands import operator_table
from host.planning.scratch import predict_tflm_head, scratch_requests
from host.planning.tflm import structs
from host.planning.tflm.categories import CATEGORIES
from host.planning.tflm.structs import ARENA_ALIGNMENT, Abi, layout, sizeof
from host.tflite import schema as S
from host.tflite.model import Model, ModelError, Operator, Subgraph, Tensor

EVAL, TENSOR, QUANT, BUFFER, VARIABLE, NODES, _OP_DATA = (c for c, _ in CATEGORIES)
# The rest of the tail, which TFLM's report counts in no category.
ALLOCATORS = "allocator, planner and subgraph objects"
OPTIONS = "operator options structs"
HANDLES = "scratch buffer handles"
UNCATEGORIZED = (ALLOCATORS, OPTIONS, HANDLES)


# What an arena one byte smaller than the minimum runs out of (TflmArena.limited_by).
ALLOCATOR = "allocator objects"
INIT = "kernel options and Init"
PREPARE = "kernel Prepare (temporary tensors above the scratch-request list)"
PLANNING = "memory planning (the greedy planner's 40 bytes per buffer)"
IO = "head + tail (input/output tensors allocated last)"


EXACT, BOUND = "(exactly)", "(an upper bound)"  # how well a Prepare shortfall is known


class ArenaTooSmall(Exception):
    """An allocation failed: TFLM would report a failure for this arena size."""


@dataclass
class Recorded:
    requested: int = 0
    used: int = 0
    count: int = 0


def _down(n: int, a: int) -> int:
    return n // a * a


def _up(n: int, a: int) -> int:
    return -(-n // a) * a


class Arena:
    """SingleArenaBufferAllocator over [0, size), with RecordingMicroAllocator's bookkeeping.

    It also writes down, as `trace`, what each step needs of the tail: the head and the
    temporary section never depend on the arena's size (they grow up from its start), so
    whether an arena of another size works depends on the tail alone, and `Trace.fits`
    answers it from the trace without repeating the replay."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.head = self.temp = 0
        self.tail = size
        self.recorded: dict[str, Recorded] = {}
        self.category = ALLOCATORS  # where persistent allocations are being recorded
        self.log: list[str] | None = None  # "P size align", "T ...", "R ...": for debugging
        self.trace = Trace()

    def persistent(self, size: int, align: int) -> None:
        if self.log is not None:
            self.log.append(f"P {size} {align}")
        self.trace.persistent(size, align, self.head)
        at = _down(self.tail - size, align)
        if at < self.head:
            raise ArenaTooSmall(f"tail allocation of {size} bytes")
        r = self.recorded.setdefault(self.category, Recorded())
        r.requested += size
        r.used += self.tail - at
        r.count += 1
        self.tail = at

    def temporary(self, size: int, align: int) -> int:
        if self.log is not None:
            self.log.append(f"T {size} {align}")
        at = _up(self.temp, align)
        self.trace.below_tail(at + size)
        if self.tail - at < size:
            raise ArenaTooSmall(f"temporary allocation of {size} bytes")
        self.temp = at + size
        return at

    def resize_head(self, size: int, align: int) -> None:
        if self.log is not None:
            self.log.append(f"R {size} {align}")
        at = _up(0, align)
        self.trace.below_tail(at + size)
        if self.tail - at < size:
            raise ArenaTooSmall(f"head of {size} bytes")
        self.head = self.temp = at + size

    def reset_temporary(self) -> None:
        self.temp = self.head

    def record(self, category: str) -> None:
        self.category = category


class Trace:
    """What a replay needs of the tail, step by step: before each persistent allocation the
    tail must be at least `need` (temporaries and heads below it end there), and after it at
    least the head of that moment. An arena of `size` bytes works exactly when every check
    holds with the tail the allocations leave (the same alignment arithmetic as Arena)."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, int, int, int]] = []  # (need, size, align, head)
        self.need = 0  # needed since the last persistent allocation

    def below_tail(self, end: int) -> None:
        self.need = max(self.need, end)

    def persistent(self, size: int, align: int, head: int) -> None:
        self.steps.append((self.need, size, align, head))
        self.need = 0

    def tail_left(self, size: int) -> int | None:
        """Where the tail ends in an arena of `size` bytes, or None if the set-up fails."""
        tail = size
        for need, n, align, head in self.steps:
            if tail < need:
                return None
            tail = (tail - n) // align * align
            if tail < head:
                return None
        return tail if tail >= self.need else None


@dataclass
class TflmArena:
    """TFLM's arena report for a model, as predicted for one ABI."""

    abi: Abi
    arena_size: int  # the arena the replay used
    head: int
    tail: int
    categories: dict[str, Recorded] = field(default_factory=dict)
    min_arena: int = 0  # smallest arena_size for which set-up succeeds
    # The tail TFLM reports in an arena of exactly min_arena bytes. The tail's first
    # allocations (the allocators, 4- or 8-byte aligned) sit at the arena's end and the later
    # 16-byte aligned ones below them, so the alignment padding, and the tail, depend on the
    # end's address mod 16: `tail` is for arena_size (16 MiB by default, a multiple of 16).
    min_arena_tail: int = 0
    limited_by: str = ""  # what one byte less runs out of
    limit_exact: bool = True  # False: the minimum is an upper bound (kernel Prepare)
    unknown: list[str] = field(default_factory=list)  # operators not modelled
    operators: list[dict] = field(default_factory=list)  # requested bytes per operator

    @property
    def total(self) -> int:
        return self.head + self.tail

    @property
    def exact(self) -> bool:
        """Every kernel is modelled, and the minimum is not set by kernels' Prepare, whose
        temporary tensors are modelled as all of a node's inputs and outputs at once (an upper
        bound: a kernel may hold fewer)."""
        return not self.unknown and self.limit_exact

    def report_lines(self) -> list[str]:
        """The lines TFLM's PrintAllocations() prints, in its order."""
        tag = "[RecordingMicroAllocator]"
        out = [
            f"{tag} Arena allocation total {self.total} bytes",
            f"{tag} Arena allocation head {self.head} bytes",
            f"{tag} Arena allocation tail {self.tail} bytes",
        ]
        for name, unit in CATEGORIES:
            r = self.categories.get(name)
            if r and (r.used or r.requested):
                out.append(
                    f"{tag} '{name}' used {r.used} bytes with alignment overhead "
                    f"(requested {r.requested} bytes for {r.count} {unit})"
                )
        return out


# --------------------------------------------------------------------------- the replay


class _Replay:
    def __init__(
        self, model: Model, abi: Abi, lib: KernelLibrary, head: int, resource_variables: int
    ) -> None:
        self.model, self.abi, self.lib, self.head = model, abi, lib, head
        self.resource_variables = resource_variables
        self.ops = [
            (sg, op, lib.allocations(model, sg, op, abi))
            for sg in model.subgraphs
            for op in sg.operators
        ]
        self.requests = scratch_requests(model, lib)
        self.requests_of: dict[tuple[int, int], int] = {}  # (subgraph, operator) -> count
        for r in self.requests:
            key = (r.subgraph, r.op)
            self.requests_of[key] = self.requests_of.get(key, 0) + 1
        # Every scratch request gets an AllocationInfo marked needs_allocating, reached or not.
        self.planned = _planned_buffer_count(model) + len(self.requests)
        # Scale counts per tensor, the same in every run (the report's and the failing one's).
        self.scales: dict[int, int] = {}

    def run(self, size: int, log: list[str] | None = None) -> Arena:
        a = Arena(size)
        a.log = log
        abi = self.abi
        a.persistent(*layout(structs.RECORDING_SINGLE_ARENA_ALLOCATOR, abi))
        a.persistent(*layout(structs.GREEDY_MEMORY_PLANNER, abi))
        a.persistent(*layout(structs.recording_micro_allocator(abi), abi))
        if self.resource_variables:  # MicroResourceVariables::Create (pip interpreter)
            a.record(BUFFER)
            a.persistent(sizeof(structs.MICRO_RESOURCE_VARIABLES, abi), ARENA_ALIGNMENT)
            a.persistent(
                sizeof(structs.MICRO_RESOURCE_VARIABLE, abi) * self.resource_variables,
                ARENA_ALIGNMENT,
            )
            a.record(ALLOCATORS)
        for phase, step in (
            (ALLOCATOR, self._start_model_allocation),
            (INIT, self._parse_and_init),
            (PREPARE, self._prepare),
            (PLANNING, self._finish_model_allocation),
            (IO, self._io_tensors),
        ):
            try:
                step(a)
            except ArenaTooSmall as e:
                raise ArenaTooSmall(f"{phase}: {e}") from None
        return a

    def _start_model_allocation(self, a: Arena) -> None:
        abi, subgraphs = self.abi, self.model.subgraphs
        a.persistent(*layout(structs.BUILTIN_DATA_ALLOCATOR, abi))
        request_size, request_align = layout(structs.SCRATCH_BUFFER_REQUEST, abi)
        a.resize_head(request_size * structs.MAX_SCRATCH_BUFFERS_PER_OP, request_align)
        size, align = layout(structs.subgraph_allocations(abi), abi)
        a.persistent(size * len(subgraphs), align)
        size, align = layout(structs.EVAL_TENSOR, abi)
        a.record(EVAL)
        for sg in subgraphs:
            a.persistent(size * len(sg.tensors), align)
        a.recorded[EVAL].count = sum(len(sg.tensors) for sg in subgraphs)
        size, align = layout(structs.NODE_AND_REGISTRATION, abi)
        a.record(NODES)
        for sg in subgraphs:
            a.persistent(size * len(sg.operators), align)
        a.recorded[NODES].count = sum(len(sg.operators) for sg in subgraphs)
        a.record(OPTIONS)

    def _parse_and_init(self, a: Arena) -> None:
        for _, _, alloc in self.ops:  # PrepareNodeAndRegistrationDataFromFlatbuffer
            if alloc is not None and alloc.params is not None:
                a.persistent(*alloc.params)
        a.record(BUFFER)
        for _, _, alloc in self.ops:  # InitSubgraphs
            for n in alloc.init if alloc else []:
                a.persistent(n, ARENA_ALIGNMENT)

    def _prepare(self, a: Arena) -> None:
        abi = self.abi
        requests = 0
        resources = _ResourceIds(self.model)
        for sg, op, alloc in self.ops:
            a.record(BUFFER)
            persistent = (alloc.prepare if alloc else []) + resources.prepare(sg, op)
            for n in persistent:
                a.persistent(n, ARENA_ALIGNMENT)
            # Checked against the tail after the node's own persistent buffers: an upper bound,
            # exact for a kernel that borrows each tensor exactly once and allocates nothing.
            exact = self.lib.borrows_exactly(op.name) and not persistent
            try:
                self._borrow_temporaries(a, sg, self.lib.borrowed(op))
            except ArenaTooSmall as e:
                raise ArenaTooSmall(f"{EXACT if exact else BOUND} {e}") from None
            requests += self.requests_of.get((sg.index, op.index), 0)
            a.reset_temporary()  # FinishPrepareNodeAllocations
            size, align = layout(structs.SCRATCH_BUFFER_REQUEST, abi)
            a.resize_head(size * (requests + structs.MAX_SCRATCH_BUFFERS_PER_OP), align)
        self.request_count = requests

    def _borrow_temporaries(self, a: Arena, sg: Subgraph, indices: list[int]) -> None:
        """TfLiteTensors (and their quantization) a kernel's Prepare borrows; the temporary
        section only grows until the node is done, released or not."""
        size, align = layout(structs.TFLITE_TENSOR, self.abi)
        for i in indices:
            if i < 0:
                continue
            a.temporary(size, align)
            self._quantization(a, sg.tensors[i], temporary=True)

    def _quantization(self, a: Arena, t: Tensor, temporary: bool) -> None:
        channels = self.scales.get(id(t))
        if channels is None:
            channels = self.scales[id(t)] = scale_count(self.model, t)
        if not channels:
            return
        q_size, q_align = layout(structs.AFFINE_QUANTIZATION, self.abi)
        zero_points = structs.INT_ARRAY_HEADER + 4 * channels
        if temporary:
            a.temporary(q_size, q_align)
            a.temporary(zero_points, 4)
        else:
            a.persistent(q_size, q_align)
            a.persistent(zero_points, 4)

    def _finish_model_allocation(self, a: Arena) -> None:
        abi, model = self.abi, self.model
        if self.request_count:
            a.record(HANDLES)
            size, align = layout(structs.SCRATCH_BUFFER_HANDLE, abi)
            a.persistent(size * self.request_count, align)
        # CommitStaticMemoryPlan: AllocationInfo array in temporary memory.
        a.temporary(abi.pointer * len(model.subgraphs), abi.pointer)
        size, align = layout(structs.ALLOCATION_INFO, abi)
        a.temporary(size * (len(model.tensors) + self.request_count), align)
        a.record(VARIABLE)
        for t in model.tensors:
            if t.is_variable:
                a.persistent(t.nbytes(), ARENA_ALIGNMENT)
        # The greedy planner gets all memory left between temporaries and tail.
        available = _down(a.tail, ARENA_ALIGNMENT) - _up(a.temp, ARENA_ALIGNMENT)
        if a.log is not None:
            a.log.append(f"T {available} {ARENA_ALIGNMENT}")
        # The same check on the tail alone: a multiple of 16 at or below it leaves room.
        need = _up(a.temp, ARENA_ALIGNMENT) + structs.GREEDY_BYTES_PER_BUFFER * self.planned
        a.trace.below_tail(_up(need, ARENA_ALIGNMENT))
        if available < 0 or available // structs.GREEDY_BYTES_PER_BUFFER < self.planned:
            raise ArenaTooSmall("greedy planner working memory")
        a.reset_temporary()
        a.resize_head(0, 1)
        a.resize_head(self.head, ARENA_ALIGNMENT)

    def _io_tensors(self, a: Arena) -> None:
        abi, sg = self.abi, self.model.subgraphs[0]
        size, align = layout(structs.TFLITE_TENSOR, abi)
        for indices in (sg.inputs, sg.outputs):
            a.record(BUFFER)
            a.persistent(abi.pointer * len(indices), ARENA_ALIGNMENT)
            for i in indices:
                a.record(TENSOR)
                a.persistent(size, align)
                a.record(QUANT)
                self._quantization(a, sg.tensors[i], temporary=False)


class _ResourceIds:
    """Resource variables: VAR_HANDLE ids in Prepare order, buffers at the first ASSIGN."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.ids: dict[str, int] = {}
        self.handle_of: dict[tuple[int, int], int] = {}  # (subgraph, tensor) -> id
        self.allocated: set[int] = set()

    def prepare(self, sg: Subgraph, op: Operator) -> list[int]:
        if op.name == "VAR_HANDLE" and op.outputs:
            name = _shared_name(self.model, sg.index, op.index)
            rid = self.ids.setdefault(name, len(self.ids))
            self.handle_of[(sg.index, op.outputs[0])] = rid
        elif op.name == "ASSIGN_VARIABLE" and len(op.inputs) == 2:
            rid = self.handle_of.get((sg.index, op.inputs[0]))
            if rid is not None and rid not in self.allocated:
                self.allocated.add(rid)
                return [sg.tensors[op.inputs[1]].nbytes()]
        return []


def _shared_name(model: Model, subgraph: int, op: int) -> str:
    options = operator_table(model, subgraph, op).get(S.OP_OPTIONS)
    if options is None:
        return ""
    name = options.get(1)
    return bytes(name).decode("utf-8", "replace") if name else ""


def resource_variable_count(model: Model) -> int:
    """What the pip interpreter passes to MicroResourceVariables::Create: unique shared names."""
    return len(
        {
            _shared_name(model, sg.index, op.index)
            for sg in model.subgraphs
            for op in sg.operators
            if op.name == "VAR_HANDLE"
        }
    )


def _planned_buffer_count(model: Model) -> int:
    """Tensors TFLM's planner places: no data yet, not variable, not empty (AllocationInfo)."""
    handles = {
        (sg.index, op.outputs[0])
        for sg in model.subgraphs
        for op in sg.operators
        if op.name == "VAR_HANDLE" and op.outputs
    }
    n = 0
    for t in model.tensors:
        if t.is_const or t.is_variable or (t.subgraph, t.index) in handles:
            continue
        try:
            if t.nbytes():
                n += 1
        except ModelError:
            continue
    return n


def predict(
    model: Model,
    abi: Abi = structs.X86_64_PIP,
    arena_size: int = 16 << 20,
    lib: KernelLibrary = REFERENCE,
) -> TflmArena:
    """TFLM's report for the model, run with `lib`, in an arena of `arena_size`, and its
    minimum arena."""
    # The pip interpreter's wrapper creates MicroResourceVariables for the model's VAR_HANDLEs.
    variables = resource_variable_count(model) if abi.pip else 0
    replay = _Replay(model, abi, lib, predict_tflm_head(model, lib), variables)
    a = replay.run(arena_size)
    result = TflmArena(
        abi=abi,
        arena_size=arena_size,
        head=max(a.head, a.temp),
        tail=arena_size - a.tail,
        categories=a.recorded,
        unknown=lib.unknown_ops(model, abi),
        operators=[_kernel_bytes(sg, op, alloc) for sg, op, alloc in replay.ops],
    )
    result.min_arena = _min_arena(a.trace, result.total)
    result.min_arena_tail = result.min_arena - (a.trace.tail_left(result.min_arena) or 0)
    try:  # the one failing run replayed in full, to say what runs out
        replay.run(result.min_arena - 1)
    except ArenaTooSmall as e:
        result.limited_by = str(e).split(":")[0]
        result.limit_exact = BOUND not in str(e)
    return result


def _kernel_bytes(sg: Subgraph, op: Operator, alloc: OpAllocations | None) -> dict:
    """What one operator asks for in the tail (sizes as requested, before alignment)."""
    return {
        "subgraph": sg.index,
        "op": op.index,
        "name": op.name,
        "options": alloc.params[0] if alloc and alloc.params else 0,
        "init": sum(alloc.init) if alloc else None,
        "prepare": sum(alloc.prepare) if alloc else None,
    }


def _min_arena(trace: Trace, total: int) -> int:
    # The minimum is within a few bytes of head + tail when nothing is left unused between them:
    # bisecting from there takes about 9 probes instead of 20.
    return smallest_arena(lambda size: trace.tail_left(size) is not None, total + 4096, near=total)


def smallest_arena(works: Callable[[int], bool], start: int = 1 << 12, near: int = 0) -> int:
    """The smallest arena size for which works(size) holds, searched as one does on a device
    (and as TFLM_BASELINE.tsv's min_arena_size was measured): doubling, then bisection. With
    `near`, bisection starts from [near - 64, near + 64] when that brackets the answer."""
    lo, hi = 0, start
    if near > 64 and not works(near - 64) and works(near + 64):
        lo, hi = near - 64, near + 64
    while not works(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if works(mid):
            hi = mid
        else:
            lo = mid
    return hi
