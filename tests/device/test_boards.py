"""Offline PlatformIO: set-up, warning-free builds of every board, size/upload/test targets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from host.device import pio_core
from host.device.boards import all_boards, build_image, pio_executable
from host.device.firmware import object_cache
from host.paths import SHARED_MODELS
from host.runtime.sources import runtime_build

REPO = Path(__file__).resolve().parents[2]

needs_toolchain = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc (bash .ci/setup)"
)
needs_qemu = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm (bash .ci/setup)"
)
ALL_BOARDS = sorted(all_boards())
HELLO_BUILD = REPO / "build" / "pio" / "hello"  # shared with tests/device/test_emulate.py
OBJECT_CACHE = object_cache()  # the builder's (boards/platform/builder/main.py), "" for none
KERAS_PAIR = ("mlp_int8", "conv1d_audio_int8")


def pio(
    *args: str,
    build_dir: Path | None = None,
    app: str = "hello",
    model: Path | None = None,
    timeout: float = 300,
    cache: Path | None = None,
):
    """`pio` in the checkout; with cache (a new folder) every file compiles into that object
    cache, so that the log shows every compiler warning, and its objects then join the shared
    cache: later builds with the same compile commands (mps2-an386's runtime is nrf52840_dk's)
    need not compile them again."""
    env = dict(os.environ, PLATFORMIO_DISABLE_UPGRADE_CHECK="true", MICROARENA_APP=app)
    if cache is not None:
        assert not cache.exists()
        env["MICROARENA_BUILD_CACHE"] = str(cache)
    if model is not None:
        env["MICROARENA_MODEL"] = str(model)
    if build_dir is not None:
        env["PLATFORMIO_BUILD_DIR"] = str(build_dir)
    proc = subprocess.run(
        [pio_executable(), *args, "-d", str(REPO)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    if cache is not None and proc.returncode == 0 and OBJECT_CACHE:
        # Its objects are keyed by what decides their bytes, as in any object cache.
        for folder in (f for f in cache.iterdir() if f.is_dir()):
            shutil.copytree(folder, Path(OBJECT_CACHE, folder.name), dirs_exist_ok=True)
    return proc


def test_setup_writes_scons_stub_idempotently(tmp_path: Path) -> None:
    from platformio.dependencies import get_core_dependencies

    first = pio_core.write_scons_stub(tmp_path)
    second = pio_core.write_scons_stub(tmp_path)
    assert first == second
    manifest = json.loads((first / "package.json").read_text())
    record = json.loads((first / ".piopm").read_text())
    assert manifest["name"] == "tool-scons" and record["spec"]["owner"] == "platformio"
    assert get_core_dependencies()["tool-scons"].lstrip("~^") == manifest["version"]
    # The stub must really run the installed scons.
    out = subprocess.run(
        [sys.executable, str(first / "scons.py"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "SCons" in out.stdout


def test_setup_removes_only_stale_platform_links(tmp_path: Path) -> None:
    platforms = tmp_path / "platforms"
    platforms.mkdir()
    here = platforms / "microarena.pio-link"
    here.write_text(json.dumps({"cwd": str(REPO), "spec": {"uri": "symlink://boards/platform"}}))
    stale = platforms / "old.pio-link"
    stale.write_text(json.dumps({"cwd": "/elsewhere/checkout", "spec": {}}))
    broken = platforms / "broken.pio-link"
    broken.write_text("{not json")
    removed = pio_core.remove_stale_platform_links(tmp_path, REPO)
    assert sorted(removed) == sorted([stale, broken])
    assert here.exists()


@needs_toolchain
def test_fresh_core_dir_builds_with_no_network(tmp_path: Path) -> None:
    """What CI does on a new machine: setup, then a build, with every download blocked."""
    core = tmp_path / "core"
    env = dict(os.environ, PLATFORMIO_CORE_DIR=str(core))
    setup = subprocess.run(
        [sys.executable, str(REPO / "tools" / "pio_setup.py")], env=env, capture_output=True
    )
    assert setup.returncode == 0, setup.stderr
    env.pop("PLATFORMIO_DISABLE_UPGRADE_CHECK", None)  # the settings written by setup suffice
    env.update(
        MICROARENA_APP="hello",
        PLATFORMIO_BUILD_DIR=str(tmp_path / "build"),
        # A fresh clone has no build/ folder for the object cache to go in.
        MICROARENA_BUILD_CACHE=str(tmp_path / "clone" / "build" / "objects"),
        HTTP_PROXY="http://127.0.0.1:9",  # nothing listens there: any download fails at once
        HTTPS_PROXY="http://127.0.0.1:9",
    )
    proc = subprocess.run(
        [pio_executable(), "run", "-e", "mps2-an385", "-d", str(REPO)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "build" / "mps2-an385" / "firmware.elf").is_file()
    settings = json.loads((core / "appstate.json").read_text())["settings"]
    assert settings["enable_telemetry"] is False


@pytest.fixture(scope="module")
def fresh_builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """All boards built from scratch in verbose mode, so compiler warnings are visible."""
    build_dir = tmp_path_factory.mktemp("pio-build")
    args = ["run", "-v"]
    for board in ALL_BOARDS:
        args += ["-e", board]
    proc = pio(*args, build_dir=build_dir, cache=build_dir / "objects")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return build_dir, proc.stdout + proc.stderr


@needs_toolchain
def test_every_board_builds_without_warnings(fresh_builds: tuple[Path, str]) -> None:
    build_dir, log = fresh_builds
    warnings = [ln for ln in log.splitlines() if re.search(r"warning", ln, re.IGNORECASE)]
    assert warnings == []
    for board in ALL_BOARDS:
        assert (build_dir / board / "firmware.elf").is_file()
        assert (build_dir / board / "firmware.bin").is_file()
    # The same -Wall -Wextra and CPU flags reach every compile.
    assert log.count("-Wextra") >= len(ALL_BOARDS)


@needs_toolchain
def test_real_boards_build_the_model_application_without_warnings(tmp_path: Path) -> None:
    """The runtime and kernels too, with the real boards' CPU flags (they cannot run here)."""
    model = SHARED_MODELS / "tflm_micro_speech_int8.tflite"
    if not model.exists():
        pytest.skip(f"shared model {model} is absent (tests read ../shared/models)")
    real = [b for b, spec in all_boards().items() if not spec.emulated]
    args = ["run", "-v"] + [arg for board in real for arg in ("-e", board)]
    proc = pio(*args, build_dir=tmp_path, app="model", model=model, cache=tmp_path / "objects")
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert [ln for ln in log.splitlines() if re.search(r"warning", ln, re.IGNORECASE)] == []
    for board in real:
        assert (tmp_path / board / "firmware.elf").is_file()


def section_addresses(elf: Path) -> dict[str, int]:
    out = subprocess.run(
        ["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    found = re.findall(r"^\s*\d+\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)", out, re.MULTILINE)
    return {name: int(vma, 16) for name, vma in found}


def link_origin(board: str, region: str) -> int:
    text = (REPO / "boards" / board / "link.ld").read_text()
    return int(re.search(rf"{region} \([rwx]+\) : ORIGIN = (0x[0-9A-Fa-f]+)", text).group(1), 16)


@needs_toolchain
@pytest.mark.parametrize("board", ALL_BOARDS)
def test_image_layout_matches_board(fresh_builds: tuple[Path, str], board: str) -> None:
    build_dir, _ = fresh_builds
    sections = section_addresses(build_dir / board / "firmware.elf")
    assert sections[".isr_vector"] == link_origin(board, "FLASH")  # where the core boots
    assert sections[".bss"] >= link_origin(board, "RAM")


@needs_toolchain
def test_size_target_prints_sections() -> None:
    proc = pio("run", "-e", "mps2-an385", "-t", "size", build_dir=HELLO_BUILD)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"text\s+data\s+bss", proc.stdout)


@needs_toolchain
@needs_qemu
def test_upload_runs_on_qemu() -> None:
    proc = pio("run", "-e", "mps2-an386", "-t", "upload", build_dir=HELLO_BUILD)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hello from mps2-an386" in proc.stdout and "status=ok" in proc.stdout


@needs_toolchain
def test_upload_to_real_board_fails_clearly() -> None:
    proc = pio("run", "-e", "nrf52840_dk", "-t", "upload", build_dir=HELLO_BUILD)
    assert proc.returncode != 0
    assert "real board" in proc.stdout + proc.stderr


@needs_toolchain
@needs_qemu
@pytest.mark.parametrize("board", sorted(b for b, spec in all_boards().items() if spec.emulated))
def test_pio_test_on_qemu(board: str) -> None:
    proc = pio("test", "-e", board, build_dir=REPO / "build" / "pio" / "pio-test")
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    assert "TEST ticks_monotonic PASS" in log and "FAIL" not in log
    assert re.search(r"4 test cases: 4 succeeded", log)


@needs_toolchain
def test_bad_app_option_is_a_clear_build_error(tmp_path: Path) -> None:
    proc = pio("run", "-e", "mps2-an386", build_dir=tmp_path, app="nonsense")
    assert proc.returncode != 0
    assert "custom_app must be 'model', 'probe' or 'hello'" in proc.stdout + proc.stderr


def _defined_symbols(elf: Path) -> set[str]:
    out = subprocess.run(["arm-none-eabi-nm", "--defined-only", str(elf)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    return {line.split()[-1] for line in out.splitlines()}


def test_image_keeps_only_the_models_kernels() -> None:
    """The default image links the kernels of the model's operators and no other; custom_kernels
    = all links every kernel (and is larger). The demo model has no LSTM, SVDF or TANH."""
    demo = REPO / "build" / "demo_int8.tflite"
    if not demo.exists():
        pytest.skip("build/demo_int8.tflite is absent (bash .ci/setup builds it)")
    only = _defined_symbols(build_image("mps2-an386", demo))
    every = _defined_symbols(build_image("mps2-an386", demo, kernels="all"))
    used = {"mak_conv_2d", "mak_depthwise_conv_2d", "mak_fully_connected", "mak_softmax"}
    unused = {"mak_unidirectional_sequence_lstm", "mak_svdf", "mak_tanh", "mak_signal_rfft"}
    assert used <= only and not (unused & only)
    assert used | unused <= every


def _compiled(log: str) -> set[str]:
    """The C files a verbose build log shows compiled (not taken from the object cache)."""
    return set(re.findall(r"arm-none-eabi-gcc -o \S+\.o -c .* (\S+\.c)$", log, re.MULTILINE))


@needs_toolchain
def test_model_images_share_the_runtime_objects(tmp_path: Path) -> None:
    """A second model's image compiles only what depends on its model: the application (its
    arena size), the kernel registry (its operators) and the model data; the runtime comes
    from the object cache. A wrong hit would show in test_image_keeps_only_the_models_kernels
    and in every board test comparing outputs."""
    first, second = (REPO / "tests" / "data" / "keras" / f"{m}.tflite" for m in KERAS_PAIR)
    logs = []
    for model in (first, second):
        proc = pio("run", "-v", "-e", "mps2-an386", build_dir=tmp_path / model.stem, app="model",
                   model=model)  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:]
        logs.append(proc.stdout + proc.stderr)
    # The cache may already hold this model's own objects too (an earlier run built it).
    assert {Path(c).name for c in _compiled(logs[1])} <= {"main.c", "registry.c", "model_data.c"}
    runtime = {p.name for p in runtime_build().sources} - {"registry.c"}
    retrieved = set(re.findall(r"Retrieved `\S+/runtime/\S+/(\w+)\.o' from cache", logs[1]))
    assert {f"{name}.c" for name in retrieved} >= runtime
