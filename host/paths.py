"""Where things are in a checkout: the one place that works out the repository's folders."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIRMWARE = REPO / "firmware"
BOARDS = REPO / "boards"
BUILD = REPO / "build"
# The read-only corpus beside the checkout (tests and benchmarks skip where it is absent).
# MICROARENA_SHARED_MODELS names another folder: tests/test_without_shared_models.py points it
# at an absent one to prove the suite skips (with its reasons) rather than fails without it.
SHARED_MODELS = Path(os.environ.get("MICROARENA_SHARED_MODELS") or REPO.parent / "shared/models")
# Public model-zoo models made by others for microcontrollers (../shared/zoo/SOURCES.tsv);
# tests skip where the folder is absent.
SHARED_ZOO = Path(os.environ.get("MICROARENA_SHARED_ZOO") or REPO.parent / "shared/zoo")
# The hard buffer-packing problems with peers' results (benchmarks/dsa_bench.py).
DSA_PROBLEMS = REPO.parent / "shared" / "benchmarks" / "dsa_challenging"


def require_models(folder: Path = SHARED_MODELS) -> None:
    """Stop a script with one line where the model corpus it measures is absent."""
    if not folder.is_dir():
        raise SystemExit(
            f"no models at {folder}: the public corpus (../shared/models beside the checkout, "
            "or the folder MICROARENA_SHARED_MODELS names) is not part of the repository"
        )
