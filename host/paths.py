"""Where things are: the one place that knows where the sources are (a checkout, or the data an
installed package carries) and where outputs go (the checkout's build/, else a per-user cache).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

HOST = Path(__file__).resolve().parent
REPO = HOST.parent  # the checkout (meaningful only where CHECKOUT holds)
# In a checkout firmware/ and boards/ sit beside host/; an installed package carries the same
# folders as host/_firmware and host/_boards (pyproject.toml's package-dir: one copy in the repo).
CHECKOUT = (REPO / "pyproject.toml").is_file() and (REPO / "firmware" / "build.mk").is_file()
FIRMWARE = REPO / "firmware" if CHECKOUT else HOST / "_firmware"
BOARDS = REPO / "boards" if CHECKOUT else HOST / "_boards"
# MICROARENA_CACHE names another folder for what an installed package builds.
CACHE_ENV = "MICROARENA_CACHE"


def user_cache() -> Path:
    """The per-user cache folder of this platform, for builds made outside a checkout."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).resolve()
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Caches"
    else:  # XDG: a relative XDG_CACHE_HOME is invalid and ignored
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else home / ".cache"
    return base / "microarena"


# Build outputs: never into site-packages or the current folder.
BUILD = REPO / "build" if CHECKOUT else user_cache()
# The read-only corpus beside the checkout (tests and benchmarks skip where it is absent).
# MICROARENA_SHARED_MODELS names another folder: tests/test_without_shared_models.py points it
# at an absent one to prove the suite skips (with its reasons) rather than fails without it.
SHARED_MODELS = Path(os.environ.get("MICROARENA_SHARED_MODELS") or REPO.parent / "shared/models")
# Public model-zoo models made by others for microcontrollers (../shared/zoo/SOURCES.tsv);
# tests skip where the folder is absent.
SHARED_ZOO = Path(os.environ.get("MICROARENA_SHARED_ZOO") or REPO.parent / "shared/zoo")
# The hard buffer-packing problems with peers' results (benchmarks/dsa_bench.py).
DSA_PROBLEMS = REPO.parent / "shared" / "benchmarks" / "dsa_challenging"


def firmware_digest() -> str:
    """A hash of every firmware source, the build definition and the compiler asked for: a
    package's library builds are kept under it, so a changed source is a new build."""
    h = hashlib.sha256()
    for path in sorted(
        p for p in FIRMWARE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ):
        h.update(path.relative_to(FIRMWARE).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(f"{os.environ.get('CC', '')}\0{sys.platform}".encode())
    return h.hexdigest()[:16]


def runtime_build_root() -> Path:
    """Where `make -C firmware` writes (its BUILD): the checkout's build/ (incremental, by
    make's timestamps), else a cache folder named for the sources' hash (an upgrade's files may
    carry older timestamps than the objects of the version before)."""
    return BUILD if CHECKOUT else BUILD / f"runtime-{firmware_digest()}"


def require_models(folder: Path = SHARED_MODELS) -> None:
    """Stop a script with one line where the model corpus it measures is absent."""
    if not folder.is_dir():
        raise SystemExit(
            f"no models at {folder}: the public corpus (../shared/models beside the checkout, "
            "or the folder MICROARENA_SHARED_MODELS names) is not part of the repository"
        )
