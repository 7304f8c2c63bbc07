"""Parser for TFLM's RecordingMicroAllocator text report.

TFLM's `RecordingMicroAllocator::PrintAllocations()` (and the tflite-micro Python interpreter's
`print_allocations()`) prints, and the microarena firmware prints the same lines:

    [RecordingMicroAllocator] Arena allocation total 10032 bytes
    [RecordingMicroAllocator] Arena allocation head 672 bytes
    [RecordingMicroAllocator] Arena allocation tail 9360 bytes
    [RecordingMicroAllocator] 'TfLiteEvalTensor data' used 1296 bytes with alignment overhead
        (requested 1296 bytes for 54 allocations)          <- one line in the real output

Categories with nothing allocated are left out by TFLM. The lines may carry console noise before
the tag (timestamps, a prompt), so the tag is searched anywhere in a line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from host.planning.tflm.categories import Category
from host.terminal import printable
from host.tflite.model import Model

TAG = "[RecordingMicroAllocator]"
MAX_NOTES = 20  # bad lines (and, in the recorder, rejected records) listed; more only counted
# A number of at most 19 digits (any 64-bit count): a longer one makes the line unreadable,
# a clean bad line rather than a huge integer (Python refuses over 4300 digits).
_NUM = r"(-?[0-9]{1,19})"
_REGION = re.compile(
    rf"\[RecordingMicroAllocator\] Arena allocation (total|head|tail) {_NUM} bytes$"
)
_CATEGORY = re.compile(
    rf"\[RecordingMicroAllocator\] '([^']*)' used {_NUM} bytes with alignment overhead "
    rf"\(requested {_NUM} bytes for {_NUM} ([^)]*)\)$"
)


class ReportTextError(ValueError):
    """A text report line that carries the tag but does not parse."""


@dataclass
class TextReport:
    total: int | None = None
    head: int | None = None
    tail: int | None = None
    categories: list[Category] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return None not in (self.total, self.head, self.tail)

    def to_dict(self) -> dict:
        return {
            "total": self.total,
            "head": self.head,
            "tail": self.tail,
            "categories": [vars(c) for c in self.categories],
        }


class TextReportCollector:
    """Collects report lines from a stream; a new 'total' line starts a new report."""

    def __init__(self) -> None:
        self.current: TextReport | None = None
        self.errors: list[str] = []  # the first MAX_NOTES
        self.more_errors = 0  # bad lines beyond those: counted, not kept (a flood of noise)
        self.lines_seen = 0  # report lines so far, to tell when the report has gone quiet

    def line(self, line: str) -> None:
        at = line.find(TAG)
        if at < 0:
            return
        self.lines_seen += 1
        body = line[at:].rstrip("\r\n ")
        m = _REGION.match(body)
        if m:
            which, value = m.group(1), int(m.group(2))
            if which == "total" or self.current is None:
                self.current = TextReport()
            if getattr(self.current, which) is not None:
                self._error(f"duplicate '{which}' line: {body!r}")
            setattr(self.current, which, value)
            return
        m = _CATEGORY.match(body)
        if m:
            if self.current is None:
                self.current = TextReport()
            name, used, requested, count, unit = m.groups()
            self.current.categories.append(
                Category(printable(name), int(used), int(requested), int(count), printable(unit))
            )
            return
        self._error(f"unreadable report line: {body!r}")

    def _error(self, message: str) -> None:
        if len(self.errors) < MAX_NOTES:
            self.errors.append(message)
        else:
            self.more_errors += 1


def parse_text_report(lines: Iterable[str]) -> TextReport:
    """The last complete report in some text; raises ReportTextError if there is none."""
    col = TextReportCollector()
    last_complete: TextReport | None = None
    for line in lines:
        col.line(line)
        if col.current is not None and col.current.complete:
            last_complete = col.current
    if last_complete is None:
        detail = f" ({col.errors[0]})" if col.errors else ""
        raise ReportTextError(f"no complete RecordingMicroAllocator report found{detail}")
    return last_complete


# ---------------------------------------------------------------- prediction


def tflm_prediction(model_path: str, target: str) -> dict:
    """What a TFLM board (target tflm-cortex-m) or the pip interpreter (tflm-x86_64) prints for
    the model as it is (embedded plan included), for an arena whose end is 16-byte aligned. On
    a board: with the kernels host.plan recorded planning it for, else the target's default
    (CMSIS-NN on a Cortex-M4)."""
    # host.planning is imported here: it loads numpy, which host.record's start-up (its
    # importer) does without
    from host.planning.libraries.registry import library
    from host.planning.origin import origin
    from host.planning.targets.target import target_arena

    model = Model.load(model_path)
    o = origin(model)
    recorded = o is not None and o.runtime == "tflm" and bool(o.kernels)
    lib = library(o.kernels, o.cpu) if o and recorded and target == "tflm-cortex-m" else None
    t = target_arena(model, target, lib)
    doc = t.to_json()
    doc["total"] = t.head + t.tail
    doc["categories"] = [vars(c) for c in t.categories]
    return doc


def category_differences(recorded: list[Category], predicted: list[dict]) -> list[str]:
    """Report lines that differ, by category name: used, requested and count must all agree."""
    got = {c.name: (c.used, c.requested, c.count) for c in recorded}
    want = {c["name"]: (c["used"], c["requested"], c["count"]) for c in predicted}
    diffs = []
    for name in [c["name"] for c in predicted] + [n for n in got if n not in want]:
        g, w = got.get(name), want.get(name)
        if g != w:
            diffs.append(f"'{name}': recorded {_describe(g)}, predicted {_describe(w)}")
    return diffs


def _describe(v: tuple[int, int, int] | None) -> str:
    return "no line" if v is None else f"used {v[0]} (requested {v[1]} in {v[2]})"
