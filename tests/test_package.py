"""The package works anywhere: the wheel and the sdist built from this tree (python -m build),
each installed into a fresh virtual environment in a temporary folder, run from an empty folder
with no checkout on the path. `microarena plan`, `microarena run` (outputs equal to the real
TFLM's) and `python -m host.plan` work there, the host runtime is built into the user's cache,
and nothing is written into the environment or the current folder.

The fresh environments borrow numpy and pyserial from this one (links to those packages only,
so no download and no other package of this environment is visible); the sdist's own build gets
setuptools from the package index, as any pip install of an sdist does.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import oracle, shared_model

from host.entry import version
from host.paths import REPO

DEPENDENCIES = ("numpy", "pyserial")  # pyproject.toml's [project] dependencies
MODEL = "tflm_micro_speech_int8"  # convolution, fully connected, softmax: int8, exact
# What a build of this tree must not copy: git's and the checkout's own outputs.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", ".pio*", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
)


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel built from it, from a copy of this tree (a build in place would
    leave setuptools' build/ and egg-info behind)."""
    root = tmp_path_factory.mktemp("dist")
    shutil.copytree(REPO, root / "src", ignore=NOT_SOURCES, symlinks=True)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(root / "out"), str(root / "src")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = (root / "out").glob("*.tar.gz")
    (wheel,) = (root / "out").glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def _bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def fresh_venv(venv: Path, dist: Path, borrow: tuple[str, ...] = DEPENDENCIES) -> Path:
    """A new environment with `dist` installed (pip of this Python, --python the new one) and
    the distributions `borrow` names linked in from this one; its site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = _bin(venv) / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    borrowed = venv / "borrowed"
    borrowed.mkdir()
    for name in borrow:
        dist_files = importlib.metadata.distribution(name)
        tops = {Path(str(f)).parts[0] for f in dist_files.files or []} - {".."}
        for top in tops - {p.name for p in borrowed.iterdir()}:  # a folder two of them share
            (borrowed / top).symlink_to(dist_files.locate_file(top))
    Path(purelib, "borrowed.pth").write_text(f"{borrowed}\n")
    index = ["--no-index"] if dist.suffix == ".whl" else []  # an sdist's build needs setuptools
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", *index, str(dist)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return Path(purelib)


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` (links not followed) with its size and modification time."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            out[path.relative_to(folder).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's cache folder (XDG_CACHE_HOME), shared: the second install finds the runtime
    the first built for the same sources."""
    return tmp_path_factory.mktemp("cache")


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_installed_commands_work_from_anywhere(
    kind: str, dists: dict[str, Path], cache: Path, tmp_path: Path
) -> None:
    model = shared_model(MODEL)
    runtime = oracle()
    venv = tmp_path / "venv"
    site = fresh_venv(venv, dists[kind])
    work, inputs = tmp_path / "work", tmp_path / "inputs"
    for folder in (work, inputs):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and "MICROARENA" not in k}
    env |= {"PATH": f"{_bin(venv)}{os.pathsep}{env['PATH']}", "XDG_CACHE_HOME": str(cache)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)

    before = snapshot(venv)
    where = run("python", "-c", "from host import paths; print(paths.CHECKOUT, paths.FIRMWARE)")
    assert where.stdout.split() == ["False", str(site / "host" / "_firmware")], where.stderr
    assert run("microarena", "--version").stdout == f"microarena {version()}\n"
    assert run("microarena", "run", "--version").stdout == f"microarena {version()}\n"

    plan = run("microarena", "plan", str(model))
    assert plan.returncode == 0, plan.stderr
    assert "arena head" in plan.stdout and "not checked" not in plan.stdout, plan.stdout
    module = run("python", "-m", "host.plan", str(model), "--json", "-q")
    assert module.returncode == 0, module.stderr
    assert json.loads(module.stdout)["head"] > 0

    interp = runtime.Interpreter.from_bytes(model.read_bytes())
    detail = interp.get_input_details(0)
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, tuple(detail["shape"])).astype(detail["dtype"])
    np.save(inputs / "x.npy", x)
    interp.set_input(x, 0)
    interp.invoke()
    want = np.array(interp.get_output(0))
    ran = run("microarena", "run", str(model), "--input", str(inputs / "x.npy"), "--json")
    assert ran.returncode == 0, ran.stderr
    (got,) = json.loads(ran.stdout)["outputs"]
    assert got["shape"] == list(want.shape) and got["values"] == want.ravel().tolist()
    assert list(cache.glob("microarena/runtime-*/host/libmicroarena.so")), "not in the cache"

    # Without the boards extra: one line saying what to install.
    board = run("microarena", "record", "--board", "mps2-an386", "--model", str(model))
    assert board.returncode != 0 and "microarena[boards]" in board.stderr, board.stderr
    assert "Traceback" not in board.stderr

    # No compiler: one line saying what to install (CC is part of the build's cache key).
    env["CC"] = "no-such-cc"
    refused = run("microarena", "run", str(model))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.count("\n") == 1 and "needs make and a C compiler" in refused.stderr

    assert snapshot(venv) == before, "the commands wrote into the environment"
    assert not list(work.iterdir()), "the commands wrote into the current folder"


@pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="needs arm-none-eabi-gcc and qemu-system-arm (bash .ci/setup)",
)
def test_installed_board_build(dists: dict[str, Path], cache: Path, tmp_path: Path) -> None:
    """With the boards extra (PlatformIO, scons: borrowed with every other package of this
    environment but microarena itself), `microarena record` builds a model for an emulated
    board from a PlatformIO project the package writes in the cache, runs it on QEMU and finds
    the arena the planner predicted; nothing written into the environment or the folder."""
    model = shared_model("tflm_hello_world_int8")
    borrow = {d.metadata["Name"] for d in importlib.metadata.distributions() if d.files}
    borrow -= {"microarena", "pip", "setuptools"}
    venv = tmp_path / "venv"
    fresh_venv(venv, dists["wheel"], tuple(sorted(borrow)))
    pio = _bin(venv) / "pio"  # the console script pip would have written with the extra
    launcher = "import sys\nfrom platformio.__main__ import main\nsys.exit(main())\n"
    pio.write_text(f"#!{_bin(venv) / 'python'}\n{launcher}")
    pio.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and "MICROARENA" not in k}
    env |= {"PATH": f"{_bin(venv)}{os.pathsep}{env['PATH']}", "XDG_CACHE_HOME": str(cache)}
    # The compiled objects other board tests left: the same bytes for the same inputs.
    env["MICROARENA_BUILD_CACHE"] = str(REPO / "build" / "objects")
    before = snapshot(venv)
    args = ["microarena", "record", "--board", "mps2-an386", "--model", str(model), "--plan"]
    proc = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status: ok" in proc.stdout and "predicted" in proc.stdout, proc.stdout
    assert list(cache.glob("microarena/pio-project/platformio.ini"))
    assert snapshot(venv) == before, "the build wrote into the environment"
    assert not list(work.iterdir()), "the build wrote into the current folder"
