"""Every command on hostile and careless files (issue 18, "keep it so"): special files, endless
files and pipes, folders, missing folders, read-only and full targets, huge declared sizes.

Each command runs in a child process with bounded address space and time (tests/support/
hostile.py): it must end in seconds with exit status 2 and a message naming what is wrong,
never a traceback or a hang, and every file it was given must be byte-identical afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli_fuzz import check_case, make_case
from support.hostile import clean_refusal, run_bounded

from host.device import record, wire
from host.planning.packing import csvio
from host.tflite import modelgen
from host.tflite.model import MAX_MODEL_BYTES
from host.tflite.modelgen import build_demo_model

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="FIFOs, /dev/zero and /dev/full: Linux"
)

MODEL_COMMANDS = [  # (module, arguments before the model)
    ("host.plan", ["-q"]),
    ("host.plan", ["-q", "--check"]),
    ("host.scratch", []),
    ("host.run", []),
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("demo") / "demo.tflite"
    assert modelgen.main([str(p)]) == 0
    return p


@pytest.fixture
def fed_fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO a writer feeds for as long as anyone reads it."""
    fifo = tmp_path / "fed.fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed() -> None:
        while not stop.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                stop.wait(0.01)
                continue
            try:
                while not stop.is_set():
                    os.write(fd, b"\0" * 65536)
            except OSError:  # the reader left, or the pipe is full
                stop.wait(0.01)
            finally:
                os.close(fd)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    yield fifo
    stop.set()
    t.join(5)


def _special_inputs(tmp_path: Path, fed: Path) -> list[tuple[str, str]]:
    """(path, words the refusal names) for inputs that are not files to read whole."""
    fifo = tmp_path / "silent.fifo"
    os.mkfifo(fifo)
    sparse = tmp_path / "huge.tflite"  # declares 3 GiB, holds nothing: must not be read
    with open(sparse, "wb") as f:
        f.truncate(MAX_MODEL_BYTES + (1 << 30))
    return [
        ("/dev/zero", "not a regular file (a character device)"),
        (str(fifo), "not a regular file (a FIFO"),
        (str(fed), "not a regular file (a FIFO"),
        (str(tmp_path), "not a regular file (a folder)"),
        (str(tmp_path / "missing" / "m.tflite"), "No such file"),
        (str(sparse), "limit of"),
    ]


@pytest.mark.parametrize(("module", "before"), MODEL_COMMANDS)
def test_model_commands_refuse_special_and_endless_files(
    module: str, before: list[str], tmp_path: Path, fed_fifo: Path
) -> None:
    for path, words in _special_inputs(tmp_path, fed_fifo):
        clean_refusal(run_bounded(module, *before, path), path, words)


@pytest.mark.parametrize(("module", "before"), MODEL_COMMANDS)
def test_model_from_an_endless_pipe_is_refused(module: str, before: list[str]) -> None:
    """/dev/stdin fed by a process that never stops writing."""
    with subprocess.Popen(["yes"], stdout=subprocess.PIPE) as endless:
        try:
            r = run_bounded(module, *before, "/dev/stdin", stdin=endless.stdout.fileno())  # type: ignore[union-attr]
        finally:
            endless.kill()
    clean_refusal(r, "/dev/stdin", "not a regular file (a FIFO")


def test_run_refuses_special_input_arrays(demo: Path, tmp_path: Path, fed_fifo: Path) -> None:
    """host.run --input reads at most what the input tensor can hold (plus numpy's header)."""
    big = tmp_path / "big.npy"
    with open(big, "wb") as f:
        f.write(b"\x93NUMPY")
        f.truncate(64 << 20)
    for path, words in [
        ("/dev/zero", "not a regular file"),
        (str(fed_fifo), "not a regular file"),
        (str(big), "larger than the input limit"),
    ]:
        clean_refusal(run_bounded("host.run", str(demo), "--input", path), path, words)


def test_plan_outputs_to_bad_targets_leave_every_file_alone(demo: Path, tmp_path: Path) -> None:
    """A missing folder, a folder, /dev/full: exit 2, the model (and any old output) unchanged,
    no temporary file left behind."""
    model = tmp_path / "m.tflite"
    model.write_bytes(demo.read_bytes())
    old_out = tmp_path / "old.tflite"
    old_out.write_bytes(b"old output")
    (tmp_path / "folder.svg").mkdir()
    unread = tmp_path / "unread.fifo"
    os.mkfifo(unread)
    before = {p: p.read_bytes() for p in (model, old_out)}
    targets = [
        (["-o", str(tmp_path / "missing" / "o.tflite")], "No such file"),
        (["-o", str(tmp_path)], "Is a directory"),
        (["-o", "/dev/full"], "No space left"),
        (["-o", str(unread)], "a FIFO that no program reads"),
        (["-o", str(old_out), "--plot", str(tmp_path / "missing" / "p.svg")], "No such file"),
        (["--embed", "--plot", str(tmp_path / "folder.svg")], "Is a directory"),
    ]
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        targets.append((["-o", str(ro / "o.tflite")], "Permission denied"))
    for extra, words in targets:
        clean_refusal(run_bounded("host.plan", str(model), "-q", *extra), words)
        assert {p: p.read_bytes() for p in before} == before, extra
    assert not list(tmp_path.rglob(".*.tmp"))


def test_buffers_csv_refuses_special_and_endless_files(tmp_path: Path, fed_fifo: Path) -> None:
    for path, words in [
        ("/dev/zero", "not a regular file"),
        (str(fed_fifo), "not a regular file"),
        (str(tmp_path), "not a regular file"),
    ]:
        clean_refusal(run_bounded("host.plan", "--buffers", path, "-q"), path, words)


def test_record_refuses_special_logs_and_bounds_stdin(tmp_path: Path, fed_fifo: Path) -> None:
    for path, words in [
        ("/dev/zero", "not a regular file"),
        (str(fed_fifo), "not a regular file"),
        (str(tmp_path / "missing.log"), "No such file"),
    ]:
        clean_refusal(run_bounded("host.record", "--log", path), path, words)
    with subprocess.Popen(["yes"], stdout=subprocess.PIPE) as endless:
        try:
            r = run_bounded("host.record", "--log", "-", stdin=endless.stdout.fileno())  # type: ignore[union-attr]
        finally:
            endless.kill()
    clean_refusal(r, "larger than the log limit")


def test_record_save_to_bad_targets(tmp_path: Path) -> None:
    """--save into a missing folder: the report is still shown, the error named."""
    log = tmp_path / "run.log"
    log.write_bytes(b"noise\r\n")
    r = run_bounded("host.record", "--log", str(log), "--save", str(tmp_path / "no" / "x.log"))
    assert "Traceback" not in r.stderr and r.returncode in (2, 3), r.stderr
    assert log.read_bytes() == b"noise\r\n"


def test_emulate_refuses_special_images(tmp_path: Path, fed_fifo: Path) -> None:
    for path, words in [
        ("/dev/zero", "not a regular file"),
        (str(fed_fifo), "not a regular file"),
        (str(tmp_path / "missing.elf"), "not found"),
    ]:
        clean_refusal(run_bounded("host.emulate", path), path, words)
    for path, words in [("/dev/zero", "not a regular file"), (str(fed_fifo), "not a regular")]:
        clean_refusal(run_bounded("host.emulate", "--model", path), path, words)


def test_readme_names_the_limits_the_code_applies() -> None:
    """The bounds README.md quotes are the constants (one fact, one place: the code)."""
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    quoted = {
        "a model must be a regular file of at most 2 GiB": MAX_MODEL_BYTES == 2**31 - 1,
        "a `--buffers` CSV at most 64 MiB": csvio.MAX_CSV_BYTES == 64 << 20,
        "reads logs of at most 64 MiB": record.MAX_LOG_BYTES == 64 << 20,
        "lines of at most 4096 bytes": wire.MAX_LINE == 4096,
    }
    for words, holds in quoted.items():
        assert words in readme and holds, words


@pytest.mark.parametrize("seed", range(6))
def test_cli_fuzz_short_run(seed: int, tmp_path: Path) -> None:
    """A few seeded cases of the command-line fuzzer (a long run: tools/fuzz_cli.py)."""
    case = make_case(seed, [build_demo_model()])
    assert check_case(case, tmp_path) is None, (case.command, case.damage)
