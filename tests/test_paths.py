"""host/paths.py: the per-user cache of each platform, and the source hash that names an
installed package's runtime build (tests/test_package.py runs the package itself)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from host import paths


@pytest.mark.parametrize(
    ("platform", "env", "want"),
    [
        ("linux", {}, "{home}/.cache/microarena"),
        ("linux", {"XDG_CACHE_HOME": "{tmp}/xdg"}, "{tmp}/xdg/microarena"),
        ("linux", {"XDG_CACHE_HOME": "relative/xdg"}, "{home}/.cache/microarena"),  # invalid
        ("darwin", {"XDG_CACHE_HOME": "{tmp}/xdg"}, "{home}/Library/Caches/microarena"),
        ("win32", {"LOCALAPPDATA": "{tmp}/local"}, "{tmp}/local/microarena"),
        ("win32", {}, "{home}/AppData/Local/microarena"),
        ("linux", {"MICROARENA_CACHE": "{tmp}/mine", "XDG_CACHE_HOME": "{tmp}/x"}, "{tmp}/mine"),
    ],
)
def test_user_cache(
    platform: str, env: dict[str, str], want: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setattr(Path, "home", lambda: home)
    monkeypatch.setattr(sys, "platform", platform)
    for name in ("MICROARENA_CACHE", "XDG_CACHE_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    assert paths.user_cache() == Path(want.format(home=home, tmp=tmp_path))


def test_runtime_build_is_named_for_its_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed source, a new source or another compiler is another build folder."""
    firmware = tmp_path / "firmware"
    shutil.copytree(paths.FIRMWARE, firmware)
    monkeypatch.setattr(paths, "FIRMWARE", firmware)
    monkeypatch.delenv("CC", raising=False)
    seen = [paths.firmware_digest()]
    assert paths.firmware_digest() == seen[0]  # the same sources: the same build
    kernel = firmware / "src" / "kernels" / "conv.c"
    kernel.write_text(kernel.read_text() + "\n")
    seen.append(paths.firmware_digest())
    (firmware / "include" / "new.h").write_text("")
    seen.append(paths.firmware_digest())
    monkeypatch.setenv("CC", "clang")
    seen.append(paths.firmware_digest())
    assert len(set(seen)) == len(seen)


def test_every_host_package_is_in_the_wheel() -> None:
    """pyproject.toml lists the packages by name (package-dir maps firmware/ and boards/ in):
    a new folder of host modules must be listed, or the installed package lacks it."""
    text = (paths.REPO / "pyproject.toml").read_text()
    listed = set(re.findall(r'^\s+"(host[\w.]*)",$', text, re.M))
    folders = {p.parent for p in paths.HOST.rglob("*.py") if "__pycache__" not in p.parts}
    wanted = {".".join(f.relative_to(paths.REPO).parts) for f in folders}
    assert wanted | {"host._firmware", "host._boards"} == listed
