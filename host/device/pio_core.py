"""PlatformIO working offline: a core folder with the one package PlatformIO insists on
downloading, ``tool-scons``, stubbed to run the PyPI ``scons`` already installed next to ``pio``,
with its upgrade check and telemetry off. tools/pio_setup.py prepares the checkout's .pio-core;
host.device.boards prepares the cache's for an installed package.

The project's development platform is referenced with ``symlink://``, whose install record holds
an absolute path: a record left by another project location is removed so it is re-linked.
"""

from __future__ import annotations

import json
from pathlib import Path

from host.fileio import write_text_atomic

SCONS_LAUNCHER = """\
# Stub tool-scons package written by tools/pio_setup.py: runs the PyPI scons of this Python.
import sys

from SCons.Script.Main import main

if __name__ == "__main__":
    sys.exit(main())
"""


def required_scons_version() -> str:
    """The tool-scons version this PlatformIO asks for, e.g. '~4.41101.0' -> '4.41101.0'."""
    from platformio.dependencies import get_core_dependencies

    spec = get_core_dependencies()["tool-scons"]
    return spec.lstrip("~^=<> ")


def write_scons_stub(core_dir: Path) -> Path:
    pkg = core_dir / "packages" / "tool-scons"
    pkg.mkdir(parents=True, exist_ok=True)
    version = required_scons_version()
    manifest = {"name": "tool-scons", "version": version, "description": "stub: PyPI scons"}
    write_text_atomic(pkg / "package.json", json.dumps(manifest, indent=2) + "\n")
    # Without an install record owned by "platformio" the folder is ignored and downloaded again.
    record = {
        "type": "tool",
        "name": "tool-scons",
        "version": version,
        "spec": {"owner": "platformio", "id": None, "name": "tool-scons", "requirements": None},
    }
    write_text_atomic(pkg / ".piopm", json.dumps(record) + "\n")
    write_text_atomic(pkg / "scons.py", SCONS_LAUNCHER)
    return pkg


def remove_stale_platform_links(core_dir: Path, project_dir: Path) -> list[Path]:
    """Delete symlink:// platform records made from another checkout (or unreadable ones).

    A record holds the project folder it was made in ("cwd") and the relative URI of
    platformio.ini; after the checkout moves it would point at the old place.
    """
    removed: list[Path] = []
    platforms = core_dir / "platforms"
    if not platforms.is_dir():
        return removed
    for link in platforms.glob("*.pio-link"):
        try:
            made_in = json.loads(link.read_text()).get("cwd", "")
        except (OSError, ValueError, AttributeError):
            made_in = ""
        if not made_in or Path(made_in).resolve() != project_dir.resolve():
            link.unlink()
            removed.append(link)
    return removed


def quiet_settings(core_dir: Path) -> Path:
    """Settings in the core dir's appstate.json: no weekly upgrade check (offline it stalls 61 s
    then fails; PLATFORMIO_DISABLE_UPGRADE_CHECK=true does the same per process) and no
    telemetry (it would try the network)."""
    path = core_dir / "appstate.json"
    try:
        state = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        state = {}  # PlatformIO itself recreates a damaged state file
    if not isinstance(state, dict):
        state = {}
    settings = state.setdefault("settings", {})
    settings["check_platformio_interval"] = 36500  # days
    settings["enable_telemetry"] = False
    core_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(state, indent=4) + "\n")
    return path


def prepare(core_dir: Path, project_dir: Path) -> tuple[Path, list[Path]]:
    """Everything above for one core folder used by one project: the stub and the stale
    platform records removed."""
    pkg = write_scons_stub(core_dir)
    quiet_settings(core_dir)
    return pkg, remove_stale_platform_links(core_dir, project_dir)
