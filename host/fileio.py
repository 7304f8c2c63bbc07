"""Atomic writes and bounded reads of the files the tools are given.

Every file the tools write goes through write_outputs (or write_atomic for one), so all of them
behave the same way:
- all the outputs of one command land together or none does: each is written completely to a
  hidden temporary file beside its target, read back and checked, and only then renamed into
  place; if one fails, the files already replaced get their old contents back;
- a replaced file keeps its permission mode and owner; a new one gets the usual mode (0666
  less the umask, e.g. 0644), never the 0600 of a private temporary file;
- a file read earlier by this program (read_file) is not replaced if it changed since (its
  size, modification time or inode differ: another program wrote it meanwhile), nor one that
  is read-only, or that replacing would give another owner (a file in a sticky folder such as
  /tmp owned by someone else): each is refused with a message, before anything is written;
- a symlink is followed: its target is rewritten and the link stays a link;
- errors name the user's path, never the hidden temporary file beside it;
- the directory must exist (like any shell redirection): nothing is created on the way;
- a device or pipe (/dev/stdout, /dev/null, a FIFO) is written in place, last: it cannot be
  renamed over (renaming over what /dev/stdout points to would replace the file, not write to
  it), so its bytes are checked in memory, never read back from where they went.

Every file the tools read goes through read_file: a regular file of at most a given size (a
FIFO, a device such as /dev/zero or a folder is refused at once, without waiting for a writer),
or read_stream for standard input, which stops at the same kind of limit.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

NEW_FILE_MODE = 0o666  # less the umask, as open() and the shell create files
CHUNK = 1 << 20  # bytes read at a time from a stream

# What each file read_file read looked like then (by real path): a write refuses to replace a
# file that has changed since, so a slow command cannot undo another program's update. The
# digest catches a rewrite within the file system's timestamp granularity.
Stamp = tuple[int, int, int, int, bytes]  # device, inode, size, modification time, digest
_READ_STAMPS: dict[str, Stamp] = {}


def _stamp(info: os.stat_result, data: bytes) -> Stamp:
    digest = hashlib.blake2b(data, digest_size=16).digest()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, digest)


@dataclass
class Output:
    """One file a command writes: its bytes, and a check they must pass before they land."""

    path: str | os.PathLike[str]
    data: bytes
    check: Callable[[bytes], None] | None = None  # raises if the bytes are wrong


def write_outputs(outputs: Sequence[Output]) -> None:
    """Write every output, or (on any failure) none: the files are as they were before.

    Raises OSError naming the user's path when a file cannot be written, or whatever an
    output's check raises.
    """
    seen: set[str] = set()
    for o in outputs:
        target = os.path.realpath(o.path)
        if target in seen and not _is_stream(o.path):
            raise OSError(errno.EINVAL, "given for two outputs", os.fspath(o.path))
        seen.add(target)
    staged: list[_Staged] = []
    try:
        for out in outputs:
            staged.append(_stage(out))
        _commit(staged)
    finally:
        for s in staged:
            s.discard()


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """write_outputs for one file with no check."""
    write_outputs([Output(path, data)])


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """write_atomic for UTF-8 text."""
    write_atomic(path, text.encode("utf-8"))


def is_stdout(path: str | os.PathLike[str]) -> bool:
    """Whether writing to `path` writes to this program's standard output."""
    return os.path.abspath(path) in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def read_file(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The whole of a regular file of at most `limit` bytes.

    Raises OSError naming `path` for anything else: a FIFO, device or folder (refused before
    any read: /dev/zero would never end, a FIFO would wait for a writer), or a larger file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)  # non-blocking: a FIFO opens at once rather than wait for a writer
    try:
        info = os.fstat(fd)
        _check_regular(info, path, limit, what)
    except OSError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as f:
        data = read_stream(f, limit, path, what)  # on to the limit: a file may grow as it is read
    _READ_STAMPS[os.path.realpath(path)] = _stamp(info, data)
    return data


def _check_regular(info: os.stat_result, path: str | os.PathLike[str], limit: int, what: str):
    if not stat.S_ISREG(info.st_mode):
        kind = _kind(info.st_mode)
        raise OSError(errno.EINVAL, f"not a regular file (a {kind})", os.fspath(path))
    if info.st_size > limit:
        raise _too_big(path, limit, what)


def check_file(path: str | os.PathLike[str], limit: int, what: str = "file") -> None:
    """Raise what read_file would for `path`, without reading it (for a file another program
    reads, such as a model a firmware build embeds)."""
    _check_regular(os.stat(path), path, limit, what)


def read_stream(
    stream: BinaryIO, limit: int, name: str | os.PathLike[str], what: str = "input"
) -> bytes:
    """All of a stream (standard input) up to `limit` bytes; OSError naming `name` if more."""
    parts: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = stream.read(min(CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
    raise _too_big(name, limit, what)


def _too_big(name: str | os.PathLike[str], limit: int, what: str) -> OSError:
    return OSError(errno.EFBIG, f"larger than the {what} limit of {limit} bytes", os.fspath(name))


def _kind(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "folder"),
        (stat.S_ISFIFO, "FIFO or pipe"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "special file")


# Names of a program's open files: what they name is written in place, never renamed over
# (with standard output redirected to a file, renaming would replace the file, not write to it).
OPEN_FILE_NAMES = re.compile(r"/dev/(stdout|stderr|fd/\d+)|/proc/self/fd/\d+")


def _is_stream(path: str | os.PathLike[str]) -> bool:
    """A device or pipe rather than a file: one of the program's open files, or an existing
    path that is neither a file nor a folder (a file under /dev/shm is a file)."""
    if OPEN_FILE_NAMES.fullmatch(os.path.abspath(path)):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_stream(path: str | os.PathLike[str], data: bytes) -> None:
    """In order with what the program prints: /dev/stdout through sys.stdout (another handle on
    a redirected file would write at its own position), other streams after what they hold."""
    if os.path.abspath(path) == "/dev/stdout" and hasattr(sys.stdout, "buffer"):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0)
    nonblock = getattr(os, "O_NONBLOCK", 0)
    try:  # non-blocking: a FIFO nobody reads is an error at once, not a wait forever
        fd = os.open(path, flags | nonblock)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(e.errno, "a FIFO that no program reads") from None
        raise
    if nonblock:
        os.set_blocking(fd, True)  # then write all of it, however slowly the reader reads
    with os.fdopen(fd, "ab") as f:
        f.write(data)


def _create_beside(target: Path) -> tuple[Path, int]:
    """A new hidden file in the target's folder (so the rename is atomic), created exclusively."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, flags, NEW_FILE_MODE)
        except FileExistsError:
            continue


@dataclass
class _Staged:
    """An output ready to land: a checked temporary file beside its target (None for a stream),
    and once landed, the target's old contents kept (hard-linked) until every output is in."""

    out: Output
    target: Path | None = None
    tmp: Path | None = None
    backup: Path | None = None
    landed: bool = False
    existed: bool = False

    def discard(self) -> None:
        for p in (self.tmp, self.backup):
            if p is not None:
                with contextlib.suppress(OSError):
                    os.unlink(p)

    def undo(self) -> None:
        """Put the target back as it was before this output landed."""
        if not self.landed or self.target is None:
            return
        with contextlib.suppress(OSError):
            if self.backup is not None:
                os.replace(self.backup, self.target)
                self.backup = None
            elif not self.existed:
                os.unlink(self.target)


@contextlib.contextmanager
def _named(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise an OSError with the user's path in it, never the temporary file's."""
    try:
        yield
    except OSError as e:
        raise type(e)(e.errno, e.strerror or str(e), os.fspath(path)) from None


def _stage(out: Output) -> _Staged:
    if _is_stream(out.path):  # cannot be read back: check the bytes that will be written
        if out.check is not None:
            out.check(out.data)
        return _Staged(out)
    staged = _Staged(out, target=Path(os.path.realpath(out.path)))
    try:
        written = _write_beside(staged)
        if out.check is not None:
            out.check(written)
    except BaseException:
        staged.discard()
        raise
    return staged


def _write_beside(staged: _Staged) -> bytes:
    """Write the output to a new temporary file beside its target; the bytes read back."""
    out, target = staged.out, staged.target
    assert target is not None
    with _named(out.path):
        staged.existed = target.exists()
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        old = os.stat(target) if staged.existed else None
        if old is not None:
            _check_replaceable(target, old)
        staged.tmp, fd = _create_beside(target)
        with os.fdopen(fd, "wb") as f:
            if old is not None:  # created with the umask's mode and our owner: keep the old
                os.chmod(staged.tmp, stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.fstat(fd).st_uid, os.fstat(fd).st_gid):
                    os.chown(staged.tmp, old.st_uid, old.st_gid)
            f.write(out.data)
            f.flush()
            os.fsync(f.fileno())
        written = read_file(staged.tmp, len(out.data))
        if written != out.data:
            raise OSError(errno.EIO, "the file read back differs from what was written")
    return written


def _check_replaceable(target: Path, info: os.stat_result) -> None:
    """Refuse, before writing anything, to replace a file that is read-only, that changed since
    this program read it, or whose owner the new file could not keep."""
    if not os.access(target, os.W_OK) or not info.st_mode & 0o222:  # root may write anything
        raise PermissionError(
            errno.EACCES, "read-only: not replaced (make it writable, or write a copy with -o)"
        )
    _check_unchanged(target, info)
    euid = getattr(os, "geteuid", lambda: 0)()
    if euid != 0 and info.st_uid != euid:
        raise PermissionError(
            errno.EPERM, "owned by another user: replacing it would change its owner"
        )


def _check_unchanged(target: Path, info: os.stat_result) -> None:
    was = _READ_STAMPS.get(str(target))
    if was is not None and was != _stamp(info, target.read_bytes()):
        raise OSError(
            errno.ESTALE,
            "changed since it was read (another program wrote it meanwhile): not replaced; "
            "run the command again",
        )


def _commit(staged: list[_Staged]) -> None:
    """Rename every file into place, then write the streams; on failure undo what landed."""
    try:
        for s in staged:
            if s.tmp is None or s.target is None:
                continue
            with _named(s.out.path):
                if s.existed:
                    _check_unchanged(s.target, os.stat(s.target))  # again, just before
                    s.backup = _link_beside(s.target)
                os.replace(s.tmp, s.target)
                s.tmp, s.landed = None, True
                if str(s.target) in _READ_STAMPS:  # ours now: a later write may replace it
                    _READ_STAMPS[str(s.target)] = _stamp(os.stat(s.target), s.out.data)
        for s in staged:
            if s.tmp is None and s.target is None:
                with _named(s.out.path):
                    _write_stream(s.out.path, s.out.data)
    except BaseException:
        for s in reversed(staged):
            s.undo()
        raise


def _link_beside(target: Path) -> Path | None:
    """A second name for the target's current contents, to restore them; None where the file
    system has no hard links (the old contents then cannot be restored after a later failure)."""
    while True:
        name = target.with_name(f".{target.name}.{secrets.token_hex(4)}.old.tmp")
        try:
            os.link(target, name)
            return name
        except FileExistsError:
            continue
        except OSError:
            return None
