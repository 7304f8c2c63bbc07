"""Reading, editing and atomically writing .tflite models.

`Model` is a thin typed view over the decoded flatbuffer (host/tflite/flatbuf.py): the planner reads
tensors and operators from it, and writes the OfflineMemoryAllocation metadata back.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from host.fileio import read_file, write_atomic
from host.tflite import schema as S
from host.tflite.flatbuf import FlatBufferError, Table, decode, encode, new_table, set_child
from host.tflite.ops import BUILTIN_CODES, BUILTIN_NAMES

OFFLINE_PLAN_NAME = b"OfflineMemoryAllocation"
CUSTOM = BUILTIN_CODES["CUSTOM"]
MAX_MODEL_BYTES = 2**31 - 1  # flatbuffers' 2 GB limit; larger models use external buffers


class ModelError(ValueError):
    """The model cannot be read or is not supported; the message says why."""


def read_model(path: str | os.PathLike[str]) -> bytes:
    """A model file's bytes: a regular file of at most MAX_MODEL_BYTES (see host/fileio.py)."""
    try:
        return read_file(path, MAX_MODEL_BYTES, "model")
    except OSError as e:
        raise ModelError(f"cannot read {path}: {e.strerror}") from None


@dataclass
class Tensor:
    subgraph: int
    index: int  # within its subgraph
    global_index: int  # over all subgraphs, the order OfflineMemoryAllocation uses
    name: str
    type: int
    shape: tuple[int, ...]
    buffer: int
    is_variable: bool
    is_const: bool  # data in the model: never in the arena

    @property
    def type_name(self) -> str:
        known = 0 <= self.type < len(S.TYPE_NAMES)
        return S.TYPE_NAMES[self.type] if known else f"unknown ({self.type})"

    def nbytes(self) -> int:
        """Bytes of the tensor's data; ModelError for what cannot live in a static arena."""
        elem = S.TYPE_SIZES.get(self.type)
        if elem is None:
            raise ModelError(
                f"tensor {self.name!r} (subgraph {self.subgraph}, index {self.index}) has type "
                f"{self.type_name}, which has no fixed size and cannot be planned"
            )
        count = 1
        for d in self.shape:
            if d < 0:
                raise ModelError(
                    f"tensor {self.name!r} (subgraph {self.subgraph}, index {self.index}) has a "
                    f"dynamic shape {list(self.shape)}; only static shapes can be planned"
                )
            count *= d
        if self.type == 17:  # INT4 is packed two per byte
            return (count + 1) // 2
        return count * elem


@dataclass
class Operator:
    index: int
    opcode: int  # builtin operator code (32 = CUSTOM)
    custom_code: str
    inputs: list[int]
    outputs: list[int]
    intermediates: list[int]
    called_subgraphs: list[int] = field(default_factory=list)  # IF/WHILE/CALL_ONCE callees

    @property
    def name(self) -> str:
        return self.custom_code if self.opcode == CUSTOM else builtin_name(self.opcode)


@dataclass
class Subgraph:
    index: int
    name: str
    tensors: list[Tensor]
    inputs: list[int]
    outputs: list[int]
    operators: list[Operator]


def builtin_name(code: int) -> str:
    return BUILTIN_NAMES.get(code, f"BUILTIN_{code}")


def _ints(raw: bytes | None) -> list[int]:
    if not raw:
        return []
    return list(struct.unpack(f"<{len(raw) // 4}i", raw))


class Model:
    """A parsed .tflite model that can be edited and written back."""

    def __init__(self, data: bytes, source: str = "<bytes>") -> None:
        self.source = source
        self.loaded = data  # the bytes read: a rewrite is compared with them (tflite/compare.py)
        if len(data) >= 8 and data[4:8] != b"TFL3":
            raise ModelError(f"{source}: not a TensorFlow Lite model (no 'TFL3' identifier)")
        try:
            self.root: Table = decode(data, S.SCHEMA)
            self.subgraphs = self._read_subgraphs()
        except FlatBufferError as e:
            raise ModelError(f"{source}: corrupt or truncated model: {e}") from None
        if not self.subgraphs:
            raise ModelError(f"{source}: model has no subgraphs")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Model:
        return cls(read_model(path), str(path))

    # ------------------------------------------------------------------ reading

    @property
    def buffers(self) -> list[Table]:
        return self.root.get(S.MODEL_BUFFERS, [])

    def buffer_data(self, index: int) -> bytes:
        bufs = self.buffers
        if not 0 <= index < len(bufs):
            return b""
        return bufs[index].get(S.BUFFER_DATA, b"")

    def _opcodes(self) -> list[tuple[int, str]]:
        out = []
        for oc in self.root.get(S.MODEL_OPCODES, []):
            code = max(
                oc.scalar(S.OPCODE_BUILTIN, "i", 0), oc.scalar(S.OPCODE_DEPRECATED_BUILTIN, "b", 0)
            )
            out.append((code, oc.get(S.OPCODE_CUSTOM, b"").decode("utf-8", "replace")))
        return out

    def _check_external_buffers(self) -> None:
        for i, b in enumerate(self.buffers):
            if b.scalar(S.BUFFER_OFFSET, "Q", 0) > 1:
                raise ModelError(
                    f"{self.source}: buffer {i} is stored outside the flatbuffer (models over "
                    "2 GB); such models are not supported"
                )

    def _read_subgraphs(self) -> list[Subgraph]:
        self._check_external_buffers()
        opcodes = self._opcodes()
        out: list[Subgraph] = []
        base = 0
        for si, sg in enumerate(self.root.get(S.MODEL_SUBGRAPHS, [])):
            tensors = [self._tensor(t, si, ti, base + ti) for ti, t in enumerate(sg.get(0, []))]
            ops = [self._operator(op, oi, opcodes) for oi, op in enumerate(sg.get(3, []))]
            sub = Subgraph(
                si,
                sg.get(S.SUBGRAPH_NAME, b"").decode("utf-8", "replace"),
                tensors,
                _ints(sg.get(S.SUBGRAPH_INPUTS)),
                _ints(sg.get(S.SUBGRAPH_OUTPUTS)),
                ops,
            )
            self._check_indices(sub)
            out.append(sub)
            base += len(tensors)
        nsub = len(out)
        for sub in out:
            for op in sub.operators:
                for callee in op.called_subgraphs:
                    if not 0 <= callee < nsub:
                        raise FlatBufferError(
                            f"operator {op.index} ({op.name}) of subgraph {sub.index} calls "
                            f"subgraph {callee}, but the model has {nsub}"
                        )
        return out

    def _tensor(self, t: Table, si: int, ti: int, gi: int) -> Tensor:
        buf = t.scalar(S.TENSOR_BUFFER, "I", 0)
        is_var = bool(t.scalar(S.TENSOR_IS_VARIABLE, "B", 0))
        where = f"{self.source}: subgraph {si}, tensor {ti}"
        if buf >= len(self.buffers):  # refused as the runtime (model.c) refuses it
            raise ModelError(f"{where} uses buffer {buf}, but there are {len(self.buffers)}")
        tensor = Tensor(
            subgraph=si,
            index=ti,
            global_index=gi,
            name=t.get(S.TENSOR_NAME, b"").decode("utf-8", "replace"),
            type=t.scalar(S.TENSOR_TYPE, "b", 0),
            shape=tuple(_ints(t.get(S.TENSOR_SHAPE))),
            buffer=buf,
            is_variable=is_var,
            is_const=(not is_var) and len(self.buffer_data(buf)) > 0,
        )
        data = len(self.buffer_data(buf))
        if data and S.TYPE_SIZES.get(tensor.type) and all(d >= 0 for d in tensor.shape):
            if is_var:
                raise ModelError(f"{where} is a variable with constant data")
            if data != tensor.nbytes():  # kernels would read past the data, or misread it
                raise ModelError(
                    f"{where} ({tensor.name!r}) holds {data} bytes of constant data, but its "
                    f"shape {list(tensor.shape)} of {tensor.type_name} needs {tensor.nbytes()}"
                )
        return tensor

    def _operator(self, op: Table, oi: int, opcodes: list[tuple[int, str]]) -> Operator:
        idx = op.scalar(S.OP_OPCODE_INDEX, "I", 0)
        if idx >= len(opcodes):
            raise FlatBufferError(f"operator {oi} uses opcode {idx}, but there are {len(opcodes)}")
        code, custom = opcodes[idx]
        o = Operator(
            oi,
            code,
            custom,
            _ints(op.get(S.OP_INPUTS)),
            _ints(op.get(S.OP_OUTPUTS)),
            _ints(op.get(S.OP_INTERMEDIATES)),
        )
        opts = op.get(S.OP_OPTIONS)
        if code == S.OP_IF or code == S.OP_WHILE:
            o.called_subgraphs = [opts.scalar(0, "i", 0), opts.scalar(1, "i", 0)] if opts else []
        elif code == S.OP_CALL_ONCE:
            o.called_subgraphs = [opts.scalar(0, "i", 0)] if opts else []
        return o

    @staticmethod
    def _check_indices(sub: Subgraph) -> None:
        n = len(sub.tensors)

        def check(indices: list[int], what: str, optional: bool) -> None:
            for i in indices:
                if not (0 <= i < n or (optional and i == -1)):
                    raise FlatBufferError(
                        f"subgraph {sub.index}: {what} refers to tensor {i}, but there are {n}"
                    )

        check(sub.inputs, "input list", False)
        check(sub.outputs, "output list", False)
        for op in sub.operators:
            where = f"operator {op.index} ({op.name})"
            check(op.inputs, where + " input", True)
            check(op.outputs, where + " output", False)
            check(op.intermediates, where + " intermediate", True)

    @property
    def tensors(self) -> list[Tensor]:
        """All tensors of all subgraphs, in global (OfflineMemoryAllocation) order."""
        return [t for sg in self.subgraphs for t in sg.tensors]

    # ------------------------------------------------------------------ metadata

    def metadata(self, name: bytes) -> bytes | None:
        """Data of the LAST metadata entry with this name (TFLM's rule), or None."""
        entries = self.metadata_entries(name)
        return entries[-1] if entries else None

    def metadata_entries(self, name: bytes) -> list[bytes]:
        """Data of every metadata entry with this name, in order."""
        return [
            self.buffer_data(m.scalar(S.METADATA_BUFFER, "I", 0))
            for m in self.root.get(S.MODEL_METADATA, [])
            if m.get(S.METADATA_NAME) == name
        ]

    def set_metadata(self, name: bytes, data: bytes) -> None:
        """Store data under name, replacing every existing entry of that name (one remains)."""
        entries = self.root.get(S.MODEL_METADATA, [])
        same = [m for m in entries if m.get(S.METADATA_NAME) == name]
        buffers = list(self.buffers)
        if same:
            index = same[-1].scalar(S.METADATA_BUFFER, "I", 0)
            keep = [m for m in entries if m.get(S.METADATA_NAME) != name] + [same[-1]]
        else:
            index = len(buffers)
            buffers.append(new_table("Buffer", {}, 1))
            meta = new_table("Metadata", {S.METADATA_BUFFER: ("I", index)}, 2)
            set_child(meta, S.METADATA_NAME, name)
            keep = entries + [meta]
        if not 0 <= index < len(buffers):
            raise ModelError(f"{self.source}: metadata {name!r} points at missing buffer {index}")
        shared = sum(1 for m in entries if m.scalar(S.METADATA_BUFFER, "I", 0) == index) + sum(
            1 for t in self.tensors if t.buffer == index
        )
        if shared > 1 or index == 0:
            # Never overwrite a buffer something else uses: give the entry its own.
            index = len(buffers)
            buffers.append(new_table("Buffer", {}, 1))
            keep[-1] = _with_buffer(keep[-1], index)
        data_holder = buffers[index]
        set_child(data_holder, S.BUFFER_DATA, bytes(data))
        set_child(self.root, S.MODEL_BUFFERS, buffers)
        set_child(self.root, S.MODEL_METADATA, keep)

    # ------------------------------------------------------------------ writing

    def to_bytes(self) -> bytes:
        data = encode(self.root, S.SCHEMA)
        if len(data) > MAX_MODEL_BYTES:
            raise ModelError("model would exceed the 2 GB flatbuffer limit")
        return data

    def save(self, path: str | os.PathLike[str]) -> None:
        write_atomic(Path(path), self.to_bytes())


def _with_buffer(meta: Table, index: int) -> Table:
    out = new_table("Metadata", {S.METADATA_BUFFER: ("I", index)}, 2)
    set_child(out, S.METADATA_NAME, meta.get(S.METADATA_NAME, b""))
    return out
