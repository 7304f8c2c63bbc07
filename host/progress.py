"""Progress lines for slow steps: on stderr, so stdout (tables, --json) stays clean."""

from __future__ import annotations

import sys
from collections.abc import Callable


def say(text: str) -> None:
    print(f"  ... {text}", file=sys.stderr, flush=True)


def percent_steps(what: str, step: int = 10) -> Callable[[int, int], None]:
    """A progress(done, total) callback: says `what: N%` each time N passes a step."""
    shown = [-1]

    def progress(done: int, total: int) -> None:
        pct = 100 * done // total if total else 100
        if pct // step > shown[0]:
            shown[0] = pct // step
            say(f"{what}: {pct}%")

    return progress
