"""Field-by-field comparison of a model with its rewrite.

A rewrite (`host.plan --embed`) may only add or replace the OfflineMemoryAllocation metadata
(and metadata of the other names the caller gives, such as host.plan's marker) and their
buffers. `rewrite_differences` decodes both files and compares every other field of
every table: offset fields by what they point at, scalars by their bytes (each scalar's width is
bounded by where the next field of its table starts, so padding and neighbours stay out).
"""

from __future__ import annotations

from host.tflite import schema as S
from host.tflite.flatbuf import Table, Vec, decode
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

MAX_REPORTED = 10
SKIP = (S.MODEL_BUFFERS, S.MODEL_METADATA)  # compared apart: the plan lives there


def _scalar(t: Table, slot: int, width_from: Table) -> bytes | None:
    """The bytes of scalar `slot` (None if absent), as wide as `width_from` lays it out."""
    if not t.has(slot) or not width_from.has(slot):
        return None
    at = width_from.field_offsets[slot]
    later = [o for o in width_from.field_offsets if o > at] + [len(width_from.inline)]
    width = min(8, min(later) - at)
    start = t.field_offsets[slot]
    return bytes(t.inline[start : start + width])


def _tables(a: Table, b: Table, where: str, out: list[str]) -> None:
    if a.name != b.name:
        out.append(f"{where}: {a.name} became {b.name}")
        return
    fields = S.SCHEMA.tables.get(a.name, {})
    for slot in range(max(len(a.field_offsets), len(b.field_offsets))):
        at = f"{where}.{slot}"
        if slot in fields:
            _values(a.get(slot), b.get(slot), fields[slot], at, out)
        elif a.has(slot) != b.has(slot) or _scalar(a, slot, a) != _scalar(b, slot, a):
            out.append(f"{at}: scalar {_scalar(a, slot, a)!r} became {_scalar(b, slot, a)!r}")


def _values(a, b, kind, where: str, out: list[str]) -> None:
    if (a is None) != (b is None):
        out.append(f"{where}: {'added' if a is None else 'removed'}")
    elif a is None:
        return
    elif isinstance(kind, Vec) and not isinstance(a, bytes):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} entries became {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if isinstance(x, Table):
                _tables(x, y, f"{where}[{i}]", out)
            elif x != y:
                out.append(f"{where}[{i}]: {x!r} became {y!r}")
    elif isinstance(a, Table):
        _tables(a, b, where, out)
    elif a != b:
        out.append(f"{where}: {len(a)} bytes changed")


def _metadata(root: Table, names: tuple[bytes, ...], added: bool) -> list[Table]:
    """Metadata entries of the given names (added=True) or of other names."""
    entries = root.get(S.MODEL_METADATA, [])
    return [m for m in entries if (m.get(S.METADATA_NAME) in names) == added]


def _metadata_buffers(root: Table, names: tuple[bytes, ...], added: bool) -> set[int]:
    return {m.scalar(S.METADATA_BUFFER, "I", 0) for m in _metadata(root, names, added)}


def _tensor_buffers(root: Table) -> set[int]:
    return {
        t.scalar(S.TENSOR_BUFFER, "I", 0)
        for sg in root.get(S.MODEL_SUBGRAPHS, [])
        for t in sg.get(S.SUBGRAPH_TENSORS, [])
    }


def _without(root: Table, slots: tuple[int, ...]) -> Table:
    out = Table(root.name, root.field_offsets, root.inline, root.align8)
    out.children = {k: v for k, v in root.children.items() if k not in slots}
    return out


def rewrite_differences(
    original: bytes, written: bytes, names: tuple[bytes, ...] = (OFFLINE_PLAN_NAME,)
) -> list[str]:
    """How `written` differs from `original` beyond its metadata entries of `names` (one
    OfflineMemoryAllocation among them): [] if it does not; fields as `Table.slot[index]`
    paths from the model root."""
    a, b = decode(original, S.SCHEMA), decode(written, S.SCHEMA)
    out: list[str] = []
    _tables(_without(a, SKIP), _without(b, SKIP), "Model", out)
    added = _metadata_buffers(a, names, True) | _metadata_buffers(b, names, True)
    added -= _tensor_buffers(a) | _metadata_buffers(a, names, False)  # only these may change
    for name in names:
        count = sum(m.get(S.METADATA_NAME) == name for m in _metadata(b, names, True))
        if count != 1 and (count or name == OFFLINE_PLAN_NAME):
            out.append(f"Model.metadata: {count} {name.decode()} entries, not 1")
    others = [_metadata(root, names, False) for root in (a, b)]
    _values(others[0], others[1], Vec("Metadata"), "Model.metadata (other entries)", out)
    bufs_a, bufs_b = a.get(S.MODEL_BUFFERS, []), b.get(S.MODEL_BUFFERS, [])
    if len(bufs_b) < len(bufs_a):
        out.append(f"Model.buffers: {len(bufs_a)} entries became {len(bufs_b)}")
    for i, (x, y) in enumerate(zip(bufs_a, bufs_b, strict=False)):
        if i not in added:
            _tables(x, y, f"Model.buffers[{i}]", out)
    extra = set(range(len(bufs_a), len(bufs_b))) - _metadata_buffers(b, names, True)
    if extra:
        out.append(f"Model.buffers: added buffers {sorted(extra)} that no new entry uses")
    return out[:MAX_REPORTED]


def check_rewrite(model: Model, names: tuple[bytes, ...] = (OFFLINE_PLAN_NAME,)) -> bytes:
    """The model's bytes with its new plan (metadata `names`), after checking that they mean
    what the loaded bytes meant; ModelError (before anything is written) if a field would."""
    written = model.to_bytes()
    changed = rewrite_differences(model.loaded, written, names)
    if changed:
        raise ModelError(
            f"{model.source}: rewriting the model would change it beyond its plan "
            f"({'; '.join(changed)}); nothing written"
        )
    return written
