""".ci/setup says what it is doing: one line per step, in order, and nothing else.

The script runs in a scratch copy of the checkout with stand-ins for every program it calls
(apt-get, python3, the venv's pip and python, the toolchain), so the test is fast and touches
neither this machine nor the network.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

from host.paths import REPO

SCRIPT = REPO / ".ci" / "setup"
VENV_STUB = '#!/bin/sh\necho "$(basename "$0") $*" >> "$LOG"\n'
# python3 -m venv .venv makes a venv whose python and pip only record their calls.
PYTHON3 = f"""#!/bin/sh
mkdir -p .venv/bin
for tool in python pip; do
  printf '%s' '{VENV_STUB}' > .venv/bin/$tool
  chmod +x .venv/bin/$tool
done
"""
STEPS_WITH_APT = [
    "checking system tools",
    "apt-get update",
    "installing apt packages",
    "creating .venv",
    "pip install",
    "preparing PlatformIO offline",
    "building the demo model",
    "done",
]


def _tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run(tmp_path: Path, prepared: bool) -> tuple[list[str], str]:
    """Run the script on a fresh machine, or on one with the toolchain and .venv in place."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(SCRIPT, checkout / ".ci" / "setup")
    tools = tmp_path / "bin"
    tools.mkdir()
    for real in ("dirname", "id", "rm", "mkdir", "chmod", "basename", "sh"):
        (tools / real).symlink_to(shutil.which(real) or f"/bin/{real}")
    for name in ("apt-get", "sudo"):
        _tool(tools, name, '#!/bin/sh\n[ "$(basename "$0")" = sudo ] && exec "$@"\nexit 0\n')
    _tool(tools, "python3", PYTHON3)
    if prepared:
        subprocess.run(["/bin/sh", str(tools / "python3")], cwd=checkout, check=True)
        for name in ("qemu-system-arm", "clang", "gcc", "make"):
            _tool(tools, name, "#!/bin/sh\nexit 0\n")
        _tool(tools, "arm-none-eabi-gcc", "#!/bin/sh\necho /usr/lib/arm-none-eabi/lib/libc.a\n")
    log = tmp_path / "calls.log"
    env = {"PATH": str(tools), "LOG": str(log), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(checkout / ".ci" / "setup")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines(), log.read_text() if log.exists() else ""


def _in_order(lines: list[str], steps: list[str]) -> bool:
    at = 0
    for line in lines:
        if at < len(steps) and steps[at] in line:
            at += 1
    return at == len(steps)


def test_fresh_machine_shows_every_step(tmp_path: Path) -> None:
    lines, calls = _run(tmp_path, prepared=False)
    assert _in_order(lines, STEPS_WITH_APT), lines
    assert all(line.startswith("setup: ") for line in lines), lines
    assert len(lines) <= len(STEPS_WITH_APT) + 1, "the CI log should stay short"
    assert "pip install" in calls and "tools/pio_setup.py" in calls and "modelgen" in calls


def test_prepared_machine_skips_apt_and_venv_quietly(tmp_path: Path) -> None:
    lines, _ = _run(tmp_path, prepared=True)
    steps = [s for s in STEPS_WITH_APT if "apt" not in s and "venv" not in s]
    assert _in_order(lines, steps), lines
    assert not any("apt" in line or "creating .venv" in line for line in lines), lines
