"""MiniMalloc's CSV problem format: `id,lower,upper,size[,offset]`, lifetime [lower, upper).

Offsets and sizes are bytes with no alignment (MiniMalloc's convention). Every buffer must be
live for some time (lower < upper): an empty lifetime would take space the bound ignores.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence

from host.fileio import read_file, write_atomic

from .problem import Buffer, PlanError, check_buffers

REQUIRED = ("id", "lower", "upper", "size")
OPTIONAL = ("offset",)
MAX_BYTES = 2**32 - 1  # sizes and offsets: a 32-bit address space, as any microcontroller's
MAX_CSV_BYTES = 64 << 20  # a problem file: about two million buffers


def _int_field(row: dict[str, str], name: str, where: str, high: int | None = None) -> int:
    """An integer >= 0 (and <= high)."""
    text = (row.get(name) or "").strip()
    try:
        value = int(text)
    except ValueError:
        raise PlanError(f"{where}: {name} must be an integer, got {text!r}") from None
    if value < 0 or (high is not None and value > high):
        limit = f"0 to {high}" if high is not None else ">= 0"
        raise PlanError(f"{where}: {name} must be {limit}, got {value}")
    return value


def read_csv(path: str | os.PathLike[str]) -> list[Buffer]:
    """Buffers from a MiniMalloc CSV. An `offset` column, if present, fixes those buffers."""
    try:
        text = read_file(path, MAX_CSV_BYTES, "CSV problem").decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a field over csv's limit (128 KiB), a NUL byte
        raise PlanError(f"{path}: not a CSV problem: {e}") from None
    except OSError as e:
        raise PlanError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise PlanError(f"{path}: cannot read: {e}") from None
    if not rows:
        raise PlanError(f"{path}: empty file, expected a header 'id,lower,upper,size'")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    if missing or unknown:
        raise PlanError(
            f"{path}:1: header must have columns {','.join(REQUIRED)} (optionally offset); "
            f"missing {missing}, unsupported {unknown}"
        )
    buffers: list[Buffer] = []
    seen: set[int] = set()
    for lineno, cells in enumerate(rows[1:], start=2):
        if not cells or all(not c.strip() for c in cells):
            continue
        where = f"{path}:{lineno}"
        if len(cells) != len(header):
            raise PlanError(f"{where}: expected {len(header)} fields, got {len(cells)}")
        row = dict(zip(header, cells, strict=True))
        offset = None
        if "offset" in row and row["offset"].strip():
            offset = _int_field(row, "offset", where, MAX_BYTES)
        buf = Buffer(
            id=_int_field(row, "id", where),
            start=_int_field(row, "lower", where),
            end=_int_field(row, "upper", where),
            size=_int_field(row, "size", where, MAX_BYTES),
            offset=offset,
        )
        if buf.id in seen:
            raise PlanError(f"{where}: duplicate buffer id {buf.id}")
        if buf.end <= buf.start:
            raise PlanError(
                f"{where}: lower {buf.start} must be below upper {buf.end} (live [lower, upper))"
            )
        try:
            check_buffers([buf])
        except PlanError as e:
            raise PlanError(f"{where}: {e}") from None
        seen.add(buf.id)
        buffers.append(buf)
    return buffers


def write_csv(
    path: str | os.PathLike[str], buffers: Sequence[Buffer], offsets: Mapping[int, int]
) -> None:
    """Write buffers and their planned offsets as `id,lower,upper,size,offset`."""
    missing = [b.id for b in buffers if b.id not in offsets]
    if missing:
        raise PlanError(f"no offset for buffers {missing[:10]}")
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(REQUIRED + OPTIONAL)
    for b in buffers:
        w.writerow([b.id, b.start, b.end, b.size, offsets[b.id]])
    try:
        write_atomic(path, text.getvalue().encode("utf-8"))
    except OSError as e:
        raise PlanError(f"{path}: cannot write: {e}") from None
