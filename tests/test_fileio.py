"""host.fileio.write_atomic, and that every tool writes its files through it."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from host import fileio
from host.fileio import Output, read_file, write_atomic, write_outputs
from host.planning import cli as plan_cli
from host.tflite import modelgen

ROOT = Path(__file__).resolve().parents[1]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def test_new_file_gets_the_umask_mode_not_0600(tmp_path: Path) -> None:
    write_atomic(tmp_path / "new.bin", b"x")
    assert mode(tmp_path / "new.bin") == umask_mode()


@pytest.mark.parametrize("old", [0o644, 0o640, 0o600, 0o755])
def test_replaced_file_keeps_its_mode(tmp_path: Path, old: int) -> None:
    f = tmp_path / "f.bin"
    f.write_bytes(b"old")
    f.chmod(old)
    write_atomic(f, b"new")
    assert f.read_bytes() == b"new" and mode(f) == old


def test_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "real.bin"
    target.write_bytes(b"old")
    target.chmod(0o644)
    link = tmp_path / "link.bin"
    link.symlink_to(target.name)
    write_atomic(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new" and mode(target) == 0o644


def test_streams_are_written_in_place(tmp_path: Path) -> None:
    """/dev/stdout may point at a file (a shell redirection): write to it, never replace it."""
    out = tmp_path / "redirected.txt"
    with open(out, "wb") as f:
        f.write(b"before\n")
        f.flush()
        if not os.path.exists(f"/dev/fd/{f.fileno()}"):
            pytest.skip("no /dev/fd on this system")
        write_atomic(f"/dev/fd/{f.fileno()}", b"after\n")  # as /dev/stdout when redirected
    assert out.read_bytes() == b"before\nafter\n"
    write_atomic("/dev/null", b"x")  # no temporary file in /dev, no error


def test_dev_stdout_writes_in_order_with_print(tmp_path: Path) -> None:
    """`--out-csv /dev/stdout > f`: the file gets the CSV, then what is printed after it."""
    code = "from host.fileio import write_atomic; print('a'); write_atomic('/dev/stdout', b'b\\n')"
    with open(tmp_path / "f", "wb") as f:
        subprocess.run(
            [sys.executable, "-c", code + "; print('c')"], stdout=f, cwd=ROOT, check=True
        )
    assert (tmp_path / "f").read_text() == "a\nb\nc\n"


def test_errors_name_the_users_path_and_leave_no_temporary(tmp_path: Path) -> None:
    cases = [tmp_path / "missing" / "x.tflite", tmp_path]  # no such folder; a directory
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if not os.access(ro, os.W_OK):  # root writes anywhere
        cases.append(ro / "o.csv")
    for path in cases:
        with pytest.raises(OSError) as e:
            write_atomic(path, b"x")
        assert e.value.filename == str(path) and ".tmp" not in str(e.value), e.value
    assert not list(tmp_path.rglob("*.tmp")) and not (tmp_path / "missing").exists()


def test_outputs_land_all_or_none(tmp_path: Path, monkeypatch) -> None:
    """A failure while the second output lands puts the first file back as it was."""
    a, b, new = tmp_path / "a", tmp_path / "b", tmp_path / "new"
    a.write_bytes(b"old a")
    b.write_bytes(b"old b")
    real_replace, calls = os.replace, []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 3:  # a and new landed, b fails
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(fileio.os, "replace", failing_replace)
    with pytest.raises(OSError) as e:
        write_outputs([Output(a, b"new a"), Output(new, b"n"), Output(b, b"new b")])
    assert e.value.filename == str(b)
    assert a.read_bytes() == b"old a" and b.read_bytes() == b"old b" and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_a_failed_check_writes_nothing(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"old a")

    def refuse(data: bytes) -> None:
        raise ValueError(f"bad {data!r}")

    with pytest.raises(ValueError, match="bad b'new b'"):
        write_outputs([Output(a, b"new a"), Output(b, b"new b", refuse)])
    assert a.read_bytes() == b"old a" and sorted(p.name for p in tmp_path.iterdir()) == ["a"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_read_file_refuses_what_is_not_a_bounded_regular_file(tmp_path: Path) -> None:
    """A FIFO (no writer: it would block), /dev/zero (endless), a folder, a file over the limit."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    for path, words in [
        (fifo, "FIFO"),
        (Path("/dev/zero"), "character device"),
        (tmp_path, "folder"),
        (big, "limit of 10 bytes"),
    ]:
        with pytest.raises(OSError, match=words) as e:
            read_file(path, 10)
        assert e.value.filename == str(path)
    assert read_file(big, 11) == b"x" * 11


def test_plan_embed_keeps_mode_and_symlink(tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    assert modelgen.main([str(model)]) == 0
    assert mode(model) == umask_mode()
    model.chmod(0o644)
    link = tmp_path / "link.tflite"
    link.symlink_to(model)
    before = model.read_bytes()
    assert plan_cli.main([str(link), "--embed", "-q"]) == 0
    assert link.is_symlink() and model.read_bytes() != before and mode(model) == 0o644


WRITES = re.compile(
    r"NamedTemporaryFile|mkstemp|\.tmp\b|os\.replace|\.write_bytes\(|\.write_text\(|"
    r"open\([^)]*['\"][wa]b?['\"]"
)
# Writers that are not a user's file: QEMU's own log in a private temporary folder.
NOT_USER_FILES = {"host/device/emulate.py"}


def test_every_writer_uses_write_atomic() -> None:
    """No code writes a file by hand: each goes through host.fileio (one behaviour for all)."""
    sources = [
        *ROOT.glob("host/**/*.py"),
        *ROOT.glob("tools/*.py"),
        *ROOT.glob("benchmarks/*.py"),
        *ROOT.glob("boards/platform/builder/*.py"),
        ROOT / "firmware/apps/model/embed_model.py",
    ]
    found = []
    for src in sources:
        rel = src.relative_to(ROOT).as_posix()
        if rel == "host/fileio.py" or rel in NOT_USER_FILES:
            continue
        for n, line in enumerate(src.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if WRITES.search(code):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "write through host.fileio.write_atomic:\n" + "\n".join(found)


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm here")
def test_a_file_under_dev_is_replaced_not_appended_to() -> None:
    """Only devices, pipes and the program's open files are written in place: a file on
    /dev/shm (a tmpfs) is replaced atomically like any other (it was appended to)."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as folder:
        target = Path(folder) / "m.tflite"
        target.write_bytes(b"old")
        write_atomic(target, b"new")
        assert target.read_bytes() == b"new"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_file_changed_since_it_was_read_is_not_replaced(tmp_path: Path) -> None:
    """A lost update (issue 26, class 8): a slow command must not overwrite what another
    program wrote after the command read the file."""
    f = tmp_path / "m.tflite"
    f.write_bytes(b"as read")
    read_file(f, 100)
    f.write_bytes(b"another program's update")
    with pytest.raises(OSError, match="changed since it was read") as e:
        write_atomic(f, b"stale result")
    assert e.value.filename == str(f)
    assert f.read_bytes() == b"another program's update" and not leftovers(tmp_path)
    read_file(f, 100)  # read again: the new contents may be replaced, and then again
    write_atomic(f, b"one")
    write_atomic(f, b"two")
    assert f.read_bytes() == b"two"


@pytest.mark.parametrize("old", [0o444, 0o400])
def test_a_read_only_file_is_refused_not_replaced(tmp_path: Path, old: int) -> None:
    f = tmp_path / "m.tflite"
    f.write_bytes(b"keep me")
    f.chmod(old)
    with pytest.raises(PermissionError, match="read-only"):
        write_atomic(f, b"new")
    assert f.read_bytes() == b"keep me" and mode(f) == old and not leftovers(tmp_path)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file another owner")
def test_a_replaced_file_keeps_its_owner(tmp_path: Path) -> None:
    f = tmp_path / "m.tflite"
    f.write_bytes(b"old")
    os.chown(f, 4321, 4322)
    write_atomic(f, b"new")
    assert (f.stat().st_uid, f.stat().st_gid) == (4321, 4322) and f.read_bytes() == b"new"


def test_plan_embed_refuses_a_model_changed_during_the_run(tmp_path: Path, monkeypatch) -> None:
    """host.plan --embed reads the model, plans, then writes: another writer in between wins,
    and host.plan says so (exit 2) instead of overwriting its update."""
    model = tmp_path / "m.tflite"
    assert modelgen.main([str(model)]) == 0
    update = modelgen.build_demo_model(seed=7)
    real = plan_cli._target

    def meanwhile(*args):  # fault injection: another program writes the model mid-run
        model.write_bytes(update)
        return real(*args)

    monkeypatch.setattr(plan_cli, "_target", meanwhile)
    assert plan_cli.main([str(model), "--embed", "-q"]) == 2
    assert model.read_bytes() == update and not leftovers(tmp_path)
