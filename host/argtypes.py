"""Argument types shared by the command-line tools: a bad number is refused by argparse, with
the option's name, before any work starts (never a traceback, never a silent default)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


def number(
    kind: Callable[[str], N], low: N, high: N | None = None, above: bool = False
) -> Callable[[str], N]:
    """A parser for `kind` values >= low (> low with above=True) and <= high."""

    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            word = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"not {word}: {text!r}") from None
        if value != value or (above and value <= low) or value < low:  # NaN is refused too
            relation = "above" if above else ">="
            raise argparse.ArgumentTypeError(f"must be {relation} {low:g}: {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}: {text}")
        return value

    return parse


SECONDS = number(float, 0.0, 1e9, above=True)  # time-outs and budgets: finite, above 0
FRACTION = number(float, 0.0, 1e6)  # a share of a whole: >= 0, finite (0.1 = 10% more)
SEED = number(int, 0)  # numpy's seeds are integers >= 0


def file_path(text: str) -> str:
    """A path option: an empty one is refused (it would quietly mean "the default")."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return text
