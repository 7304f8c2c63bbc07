"""Check the offline plan a model carries: every planned tensor aligned, within what the
runtime addresses, and sharing bytes with another live tensor only where the kernel library's
overlap rules allow it (or where a banded model's CONCATENATION copies bytes onto themselves,
or rows no later band reads); what it cannot judge, and header fields readers may expect.
"""

from __future__ import annotations

from host.planning.aliasing import overlap_pairs
from host.planning.libraries.base import KernelLibrary
from host.planning.libraries.reference import REFERENCE
from host.planning.model.lifetimes import Walk, span_text, tensor_buffers, variable_buffers, walk
from host.planning.model.metadata import MAX_END, ONLINE, RUNTIME_ALIGN, VERSION, decode, read
from host.planning.model.rows import concat_destinations, dead_under, row_pieces
from host.planning.packing.problem import TFLM_ALIGNMENT as ALIGNMENT
from host.planning.packing.problem import Buffer, collisions
from host.planning.tflm.registered import OPERATORS
from host.tflite.model import CUSTOM, OFFLINE_PLAN_NAME, Model, ModelError


def check(model: Model, lib: KernelLibrary = REFERENCE) -> list[str]:
    """Problems with the plan embedded in a model ([] if it is valid; ModelError if none).
    Overlaps are accepted where the overlap rules of the kernel library allow them."""
    plan = read(model)
    if plan is None:
        raise ModelError(f"{model.source}: no OfflineMemoryAllocation metadata to check")
    problems = []
    tensors = model.tensors
    entries = [decode(d) for d in model.metadata_entries(OFFLINE_PLAN_NAME)]
    for k, entry in enumerate(entries):
        if len(entry.offsets) != len(tensors):
            which = f"entry {k + 1} of {len(entries)}" if len(entries) > 1 else "plan"
            problems.append(
                f"{which} has {len(entry.offsets)} offsets, the model has {len(tensors)} "
                "tensors (TFLM and the runtime refuse such a model)"
            )
    if problems:
        return problems
    w = walk(model)
    planned = {lt.tensor.global_index for lt in w.lifetimes}
    variables = {  # placed by the plan (an offset below -1 is refused)
        t.global_index
        for t in tensors
        if t.is_variable and plan.offsets[t.global_index] != ONLINE and t.nbytes() > 0
    }
    planned |= variables
    names = {t.global_index: f"tensor {t.global_index} {t.name!r}" for t in tensors}
    for t, off in zip(tensors, plan.offsets, strict=True):
        if t.global_index not in planned:
            continue  # TFLM and the runtime ignore the entries of tensors they do not plan
        end = off + -(-t.nbytes() // RUNTIME_ALIGN) * RUNTIME_ALIGN
        if off < ONLINE:
            problems.append(f"{names[t.global_index]} has offset {off} (only -1 may be negative)")
        elif off >= 0 and off % ALIGNMENT:
            problems.append(f"{names[t.global_index]} offset {off} is not {ALIGNMENT}-aligned")
        elif off >= 0 and end > MAX_END:
            problems.append(
                f"{names[t.global_index]} at offset {off} ends at {end}, beyond {MAX_END} "
                "(2 GiB less 16: the runtime refuses it)"
            )
    offsets = plan.offsets
    in_place = concat_destinations(model)
    # TFLM checks no plan; this project's runtime refuses a tensor over a live one's bytes.
    pieces = row_pieces(model, w) if lib.runtime == "tflm" else {}
    for a, b, rule in _shared_bytes(model, w, offsets, lib):
        if rule is not None and offsets[rule.input] - offsets[rule.output] >= rule.min_delta:
            continue  # the kernel's rule allows it
        if _copied_onto_itself(in_place, offsets, a.id, b.id):
            continue
        if rule is None and _unjudged_owner(model, w, a, b) is not None:
            continue  # listed by not_judged(): no verdict either way
        if _over_dead_rows(pieces, offsets, a, b):
            continue
        oa, ob = offsets[a.id], offsets[b.id]
        msg = (
            f"{names[a.id]} at [{oa}, {oa + a.size}) live {_span(a)} overlaps {names[b.id]} at "
            f"[{ob}, {ob + b.size}) live {_span(b)} ({_op_at(model, w, b.start - 1)})"
        )
        if a.id in variables or b.id in variables:
            msg += ": one is a variable tensor, whose state must outlive every invocation"
        elif rule is None:
            msg += ": no kernel rule allows these two to share bytes"
        else:
            delta = offsets[rule.input] - offsets[rule.output]
            msg += (
                f": {rule.op_name}'s rule ({lib.label}) needs input offset - "
                f"output offset >= {rule.min_delta}, the plan has {delta}"
            )
        problems.append(msg)
    return problems


def _copied_onto_itself(in_place: dict[tuple[int, int], int], offsets, a: int, b: int) -> bool:
    """A CONCATENATION input placed exactly at its destination inside the output."""
    for x, y in ((a, b), (b, a)):
        delta = in_place.get((x, y))
        if delta is not None and offsets[x] - offsets[y] == delta:
            return True
    return False


def not_judged(model: Model, lib: KernelLibrary = REFERENCE) -> list[str]:
    """Tensors the plan lets share bytes that check() cannot judge: both belong to an
    operator whose kernel is unknown here (a custom operator no kernel set registers, such as
    Vela's ethos-u, which decides itself what its scratch tensors and input/output hold), and
    no other operator uses either while both are live. TFLM runs such a plan as written."""
    plan = read(model)
    if plan is None or len(plan.offsets) != len(model.tensors):
        return []
    w = walk(model)
    out = []
    for a, b, rule in _shared_bytes(model, w, plan.offsets, lib):
        owner = _unjudged_owner(model, w, a, b) if rule is None else None
        if owner is None:
            continue
        oa, ob = plan.offsets[a.id], plan.offsets[b.id]
        shared = f"[{max(oa, ob)}, {min(oa + a.size, ob + b.size)})"
        ta, tb = model.tensors[a.id], model.tensors[b.id]
        out.append(
            f"tensors {a.id} {ta.name!r} and {b.id} {tb.name!r} share bytes {shared} while "
            f"both are live; {owner}, the only operator using either then, and its kernel's "
            "use of them is unknown here: not judged"
        )
    return out


def _unjudged_owner(model: Model, w: Walk, a: Buffer, b: Buffer) -> str | None:
    """The operator that alone uses two sharing tensors while both are live, if no kernel set
    here knows it (its description), else None. A tensor nothing writes (an operator's own
    scratch, such as Vela's) holds nothing between the operators that use it."""
    if model.tensors[a.id].is_variable or model.tensors[b.id].is_variable:
        return None  # a variable's state outlives every operator: judged as such
    unwritten = _unwritten(model)
    first, last = max(a.start, b.start) - 1, min(a.end, b.end) - 2  # undo tensor_buffers' shift
    users = set()
    for scope in range(max(first, 0), last + 1):
        s, k = w.owners[scope]
        if k < 0:
            continue
        sg = model.subgraphs[s]
        op = sg.operators[k]
        base = sg.tensors[0].global_index if sg.tensors else 0
        mine = {base + i for i in op.inputs + op.outputs if i >= 0}
        if any(x in unwritten and x not in mine for x in (a.id, b.id)):
            continue  # one of the two holds nothing during this operator
        if a.id in mine or b.id in mine:
            users.add((s, k, a.id in mine and b.id in mine))
    if len(users) != 1:
        return None
    ((s, k, both),) = users
    op = model.subgraphs[s].operators[k]
    if not both or op.opcode != CUSTOM or op.name in OPERATORS:
        return None
    where = f" of subgraph {s}" if s else ""
    return f"both are tensors of operator {k}{where}, custom operator {op.name!r}"


def _unwritten(model: Model) -> set[int]:
    """Global indices of tensors no operator writes and no caller passes in."""
    out = set()
    for sg in model.subgraphs:
        base = sg.tensors[0].global_index if sg.tensors else 0
        written = set(sg.inputs) | {i for op in sg.operators for i in op.outputs}
        out |= {base + i for i in range(len(sg.tensors)) if i not in written}
    return out


def _over_dead_rows(pieces: dict, offsets, a: Buffer, b: Buffer) -> bool:
    """One tensor over rows of a banded stage's input that no later band reads."""
    for x, y in ((a, b), (b, a)):
        if x.id in pieces:
            lo = max(offsets[x.id], offsets[y.id]) - offsets[x.id]
            hi = min(offsets[x.id] + x.size, offsets[y.id] + y.size) - offsets[x.id]
            return dead_under(pieces[x.id], lo, hi, y.start - 1)
    return False


def notes(model: Model) -> list[str]:
    """Header fields TFLM and the runtime ignore but a reader may expect to match."""
    plan = read(model)
    if plan is None:
        return []
    out = []
    if plan.version != VERSION:
        out.append(
            f"format version {plan.version}, documented {VERSION}: ignored by TFLM and this runtime"
        )
    if plan.num_subgraphs != len(model.subgraphs):
        out.append(
            f"header says {plan.num_subgraphs} subgraphs, the model has {len(model.subgraphs)}: "
            "ignored by TFLM and this runtime (the offsets cover every subgraph's tensors)"
        )
    return out


def allowed_overlaps(model: Model, lib: KernelLibrary = REFERENCE) -> list:
    """The overlaps in a model's embedded plan that kernel rules allow (after check())."""
    plan = read(model)
    if plan is None or len(plan.offsets) != len(model.tensors):
        return []
    offsets = plan.offsets
    return [
        rule
        for _, _, rule in _shared_bytes(model, walk(model), offsets, lib)
        if rule is not None and offsets[rule.input] - offsets[rule.output] >= rule.min_delta
    ]


def _shared_bytes(model: Model, w: Walk, offsets: list[int], lib: KernelLibrary):
    """(earlier buffer, later buffer, the overlap rule of the pair or None) for every two
    planned tensors that are live together and share bytes in the plan."""

    fixed = [b for b in tensor_buffers(w) if offsets[b.id] >= 0]
    fixed += variable_buffers(model, w, offsets)
    shared = collisions(fixed, {b.id: offsets[b.id] for b in fixed})
    if not shared:
        return  # the rules are only needed where tensors share bytes
    rules = {(p.input, p.output): p for p in overlap_pairs(model, w, lib)}
    variables = {b.id for b in fixed} - {b.id for b in tensor_buffers(w)}
    for a, b in shared:
        rule = rules.get((a.id, b.id)) or rules.get((b.id, a.id))
        yield a, b, None if variables & {a.id, b.id} else rule


def _span(b: Buffer) -> str:
    """A tensor_buffers() lifetime in the reports' notation (undoing its one-step shift)."""
    return span_text(b.start - 1, b.end - 2)


def _op_at(model: Model, w: Walk, scope: int) -> str:
    """The operator(s) running at an allocation scope, for messages."""
    ops = [
        f"operator {s.op} {model.subgraphs[s.subgraph].operators[s.op].name}"
        + (f" of subgraph {s.subgraph}" if s.subgraph else "")
        for s in w.op_scopes
        if s.first <= scope <= s.last
    ]
    return ", ".join(ops[-1:]) if ops else "before the first operator"
