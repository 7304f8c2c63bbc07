"""A small, schema-driven FlatBuffers codec that preserves what it does not understand.

Why not the `flatbuffers` package's generated builders: they do not honour `force_align`, so
weights lose their 16-byte alignment, and their object API needs a full generated schema.
This codec only needs to know which fields of a table are offsets (strings, vectors, tables,
unions); every scalar field is copied byte for byte from the original inline table, so fields
that this code does not name survive a round trip unchanged.

Layout written: front to back, every child after its parent (uoffsets are unsigned, so they
must point forward), each vtable right before its table. Writing is deterministic, hence
decode(encode(x)) encodes to the same bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

# Scalar element formats used in vectors.
SCALAR_FORMATS = {
    "bool": "B",
    "int8": "b",
    "uint8": "B",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "uint64": "Q",
    "float32": "f",
    "float64": "d",
}


class FlatBufferError(ValueError):
    """The bytes are not a well-formed flatbuffer of the expected schema."""


@dataclass(frozen=True)
class Vec:
    """A vector field: of scalars (`elem` in SCALAR_FORMATS), strings, tables or unions."""

    elem: str
    align: int = 0  # minimum alignment of the element data (force_align); 0 = natural


@dataclass(frozen=True)
class Ref:
    """A table field (`table` names an entry of the schema's tables)."""

    table: str


@dataclass(frozen=True)
class UnionRef:
    """A union value; `type_slot` holds its type and `union` maps type ids to tables."""

    union: str
    type_slot: int


FieldKind = str | Vec | Ref | UnionRef  # "string" or one of the dataclasses


@dataclass
class Schema:
    """Offset-bearing fields of every table: {table: {slot: kind}}; scalars are implicit."""

    tables: dict[str, dict[int, FieldKind]]
    unions: dict[str, dict[int, str]]  # union name -> {type id: table name}
    max_slots: dict[str, int] = field(default_factory=dict)  # known slot count per table
    root: str = ""
    identifier: bytes = b""


@dataclass
class Table:
    """A decoded table: inline bytes (scalars kept raw) plus its decoded offset fields."""

    name: str
    field_offsets: list[int]  # per slot: offset inside the inline table, 0 = absent
    inline: bytearray  # the whole inline table, starting with its soffset to the vtable
    align8: int  # original position modulo 8, so 8-byte scalars stay aligned
    children: dict[int, Any] = field(default_factory=dict)

    def has(self, slot: int) -> bool:
        return slot < len(self.field_offsets) and self.field_offsets[slot] != 0

    def scalar(self, slot: int, fmt: str, default: Any = 0) -> Any:
        if not self.has(slot):
            return default
        off = self.field_offsets[slot]
        return struct.unpack_from("<" + fmt, self.inline, off)[0]

    def get(self, slot: int, default: Any = None) -> Any:
        return self.children.get(slot, default)


# --------------------------------------------------------------------------- reading


# A file decodes to at most its own size unless tables or vectors are shared (referenced from
# several places); sharing beyond this factor is refused rather than unfolded.
EXPANSION = 8


def _aliased(offs: list[int], slot: int) -> bool:
    """Does another field start inside the 4-byte offset of `slot`? (Writers never do this;
    a crafted vtable can, so that a scalar reads the offset's bytes.)"""
    at = offs[slot]
    return any(o and at <= o < at + 4 for i, o in enumerate(offs) if i != slot)


def _own_storage(t: Table, slot: int) -> None:
    """Give an offset field fresh bytes at the table's end, so that writing its new offset
    leaves the bytes another field reads (an aliased scalar keeps its value)."""
    while len(t.inline) % 4:
        t.inline.append(0)
    t.field_offsets[slot] = len(t.inline)
    t.inline += bytes(4)


class _Reader:
    def __init__(self, data: bytes, schema: Schema) -> None:
        self.data = memoryview(data)
        self.n = len(data)
        self.schema = schema
        self.budget = EXPANSION * self.n + 4096

    def _need(self, pos: int, size: int, what: str) -> None:
        if pos < 0 or size < 0 or pos + size > self.n:
            raise FlatBufferError(
                f"{what} at byte {pos} (+{size}) lies outside the {self.n}-byte file"
            )

    def u32(self, pos: int, what: str) -> int:
        self._need(pos, 4, what)
        return struct.unpack_from("<I", self.data, pos)[0]

    def deref(self, pos: int, what: str) -> int:
        target = pos + self.u32(pos, what)
        self._need(target, 4, what)
        return target

    def table(self, pos: int, name: str, depth: int) -> Table:
        if depth > 16:
            raise FlatBufferError(f"{name} table nested too deeply")
        if pos % 4:
            raise FlatBufferError(f"{name} table at byte {pos} is not 4-byte aligned")
        self._need(pos, 4, f"{name} table")
        vt = pos - struct.unpack_from("<i", self.data, pos)[0]
        self._need(vt, 4, f"{name} vtable")
        vt_size, tbl_size = struct.unpack_from("<HH", self.data, vt)
        if vt_size < 4 or vt_size % 2 or tbl_size < 4:
            raise FlatBufferError(f"{name} vtable at byte {vt} has bad sizes")
        self._need(vt, vt_size, f"{name} vtable")
        self._need(pos, tbl_size, f"{name} table")
        nslots = (vt_size - 4) // 2
        offs = list(struct.unpack_from(f"<{nslots}H", self.data, vt + 4))
        for slot, off in enumerate(offs):
            if off and (off < 4 or off >= tbl_size):
                raise FlatBufferError(f"{name} field {slot} points outside its table")
        fields = self.schema.tables.get(name, {})
        known = self.schema.max_slots.get(name)
        if known is not None and any(offs[known:]):
            raise FlatBufferError(
                f"{name} table has fields newer than this tool's schema (slot >= {known})"
            )
        self.spend(tbl_size + vt_size, name)
        t = Table(name, offs, bytearray(self.data[pos : pos + tbl_size]), pos % 8)
        for slot, kind in fields.items():
            if slot < nslots and offs[slot]:
                if isinstance(kind, UnionRef) and t.scalar(kind.type_slot, "B", 0) == 0:
                    t.field_offsets[slot] = 0  # a value under type NONE means nothing: drop it
                    continue
                fpos = pos + offs[slot]
                t.children[slot] = self.value(fpos, kind, t, f"{name}.{slot}", depth)
                if _aliased(offs, slot):
                    _own_storage(t, slot)
        return t

    def spend(self, size: int, what: str) -> None:
        """Counts decoded bytes: tables shared many times (a subgraph's tensors, say) would
        otherwise decode to far more than the file holds."""
        self.budget -= size
        if self.budget < 0:
            raise FlatBufferError(
                f"{what}: the {self.n}-byte file decodes to more than {EXPANSION} times its "
                "size (tables or vectors shared many times)"
            )

    def value(self, fpos: int, kind: FieldKind, parent: Table, what: str, depth: int) -> Any:
        target = self.deref(fpos, what)
        if kind == "string":
            return self.string(target, what)
        if isinstance(kind, Ref):
            return self.table(target, kind.table, depth + 1)
        if isinstance(kind, UnionRef):
            type_id = parent.scalar(kind.type_slot, "B", 0)
            members = self.schema.unions[kind.union]
            if type_id not in members:
                raise FlatBufferError(f"{what}: unknown {kind.union} type {type_id}")
            return self.table(target, members[type_id], depth + 1)
        assert isinstance(kind, Vec)
        return self.vector(target, kind, what, depth)

    def string(self, pos: int, what: str) -> bytes:
        length = self.u32(pos, what)
        self._need(pos + 4, length, what)
        self.spend(4 + length, what)
        return bytes(self.data[pos + 4 : pos + 4 + length])

    def vector(self, pos: int, kind: Vec, what: str, depth: int) -> Any:
        count = self.u32(pos, what)
        if kind.elem in SCALAR_FORMATS:
            size = struct.calcsize(SCALAR_FORMATS[kind.elem])
            self._need(pos + 4, count * size, what)
            self.spend(4 + count * size, what)
            return bytes(self.data[pos + 4 : pos + 4 + count * size])
        self._need(pos + 4, count * 4, what)
        self.spend(4 + count * 4, what)
        items = []
        for i in range(count):
            slot_pos = pos + 4 + 4 * i
            target = self.deref(slot_pos, what)
            if kind.elem == "string":
                items.append(self.string(target, what))
            else:
                items.append(self.table(target, kind.elem, depth + 1))
        return items


def decode(data: bytes, schema: Schema) -> Table:
    """Decode a whole buffer; raises FlatBufferError with a clear reason on malformed input."""
    if len(data) < 8:
        raise FlatBufferError(f"file is {len(data)} bytes, too short to be a flatbuffer")
    reader = _Reader(data, schema)
    return reader.table(reader.deref(0, "root offset"), schema.root, 0)


# --------------------------------------------------------------------------- writing


class _Writer:
    def __init__(self, schema: Schema) -> None:
        self.out = bytearray()
        self.schema = schema

    def pad_to(self, align: int, residue: int = 0) -> None:
        while len(self.out) % align != residue % align:
            self.out.append(0)

    def patch(self, at: int, target: int) -> None:
        assert target > at, "flatbuffer offsets must point forward"
        struct.pack_into("<I", self.out, at, target - at)

    def table(self, t: Table) -> int:
        nslots = len(t.field_offsets)
        self.pad_to(2)
        vt = len(self.out)
        self.out += struct.pack(f"<HH{nslots}H", 4 + 2 * nslots, len(t.inline), *t.field_offsets)
        # Keep the table's original position modulo 8 so its 8-byte scalars stay aligned.
        self.pad_to(8, t.align8)
        pos = len(self.out)
        self.out += t.inline
        struct.pack_into("<i", self.out, pos, pos - vt)
        fields = self.schema.tables.get(t.name, {})
        for slot in sorted(t.children):
            kind = fields[slot]
            at = pos + t.field_offsets[slot]
            self.patch(at, self.value(t.children[slot], kind))
        return pos

    def value(self, v: Any, kind: FieldKind) -> int:
        if kind == "string":
            return self.string(v)
        if isinstance(kind, (Ref, UnionRef)):
            return self.table(v)
        assert isinstance(kind, Vec)
        return self.vector(v, kind)

    def string(self, s: bytes) -> int:
        self.pad_to(4)
        pos = len(self.out)
        self.out += struct.pack("<I", len(s)) + s + b"\0"
        return pos

    def vector(self, v: Any, kind: Vec) -> int:
        if kind.elem in SCALAR_FORMATS:
            elem = struct.calcsize(SCALAR_FORMATS[kind.elem])
            align = max(4, elem, kind.align)
            self.pad_to(align, align - 4)  # the data after the 4-byte length is aligned
            pos = len(self.out)
            self.out += struct.pack("<I", len(v) // elem) + bytes(v)
            return pos
        self.pad_to(4)
        pos = len(self.out)
        self.out += struct.pack("<I", len(v)) + bytes(4 * len(v))
        for i, item in enumerate(v):
            target = self.string(item) if kind.elem == "string" else self.table(item)
            self.patch(pos + 4 + 4 * i, target)
        return pos


def encode(root: Table, schema: Schema) -> bytes:
    """Serialise a decoded (and possibly edited) tree; deterministic."""
    w = _Writer(schema)
    w.out += bytes(4) + schema.identifier
    root_pos = w.table(root)
    w.patch(0, root_pos)
    w.pad_to(16)
    return bytes(w.out)


def new_table(name: str, scalars: dict[int, tuple[str, Any]], nslots: int) -> Table:
    """Build a table from scratch: scalars maps slot -> (struct format, value).

    Offset fields are added afterwards with `set_child`.
    """
    inline = bytearray(4)
    offs = [0] * nslots
    for slot, (fmt, value) in sorted(scalars.items()):
        size = struct.calcsize("<" + fmt)
        while len(inline) % size:
            inline.append(0)
        offs[slot] = len(inline)
        inline += struct.pack("<" + fmt, value)
    return Table(name, offs, inline, 0)


def set_child(t: Table, slot: int, value: Any) -> None:
    """Set (or add) an offset field of a table."""
    if slot >= len(t.field_offsets):
        t.field_offsets += [0] * (slot + 1 - len(t.field_offsets))
    if not t.field_offsets[slot]:
        while len(t.inline) % 4:
            t.inline.append(0)
        t.field_offsets[slot] = len(t.inline)
        t.inline += bytes(4)
    t.children[slot] = value
