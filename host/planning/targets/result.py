"""What the arena prediction for a target says: head, tail by category, minimum arena, and the
kernel library and notes behind them (host.planning.targets.target computes it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from host.planning.tflm.categories import Category


@dataclass
class TargetArena:
    target: str
    head: int
    tail: int
    min_arena: int  # the arena size to configure
    # TFLM targets: the tail reported in an arena of exactly min_arena bytes, where `tail` is
    # for an arena whose size is a multiple of 16 (alignment padding at the arena's end)
    min_arena_tail: int | None = None
    categories: list[Category] = field(default_factory=list)
    other: dict[str, int] = field(default_factory=dict)  # the rest of the tail, bytes by kind
    operators: list[dict] = field(default_factory=list)  # per operator: options, Init, Prepare
    library: str = ""  # the kernel library assumed (--kernels)
    cpu: str | None = None  # the CPU it was assumed for, where that matters (CMSIS-NN)
    exact: dict[str, bool] = field(default_factory=dict)  # per figure: head, tail, min_arena
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "head": self.head,
            "tail": self.tail,
            "min_arena": self.min_arena,
            "min_arena_tail": self.min_arena_tail,
            "categories": [vars(c) for c in self.categories],
            "other": self.other,
            "kernels": self.operators,  # the key --json has always had
            "kernel_library": self.library,
            "cpu": self.cpu,
            "exact": self.exact,
            "notes": self.notes,
        }
