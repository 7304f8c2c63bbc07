"""Where things are in a checkout: the one place that works out the repository's folders."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIRMWARE = REPO / "firmware"
BOARDS = REPO / "boards"
BUILD = REPO / "build"
# The read-only corpus beside the checkout (tests and benchmarks skip where it is absent).
SHARED_MODELS = REPO.parent / "shared" / "models"
