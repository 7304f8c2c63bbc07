"""Atomic writes: a reader sees the old file or the whole new one, never half of it.

Every file the tools write goes through write_atomic, so all of them behave the same way:
- a replaced file keeps its permission mode; a new one gets the usual mode (0666 less the
  umask, e.g. 0644), never the 0600 of a private temporary file;
- a symlink is followed: its target is rewritten and the link stays a link;
- errors name the user's path, never the hidden temporary file beside it;
- the directory must exist (like any shell redirection): nothing is created on the way;
- a device or pipe (/dev/stdout, /dev/null, a FIFO) is written in place: it cannot be renamed
  over, and renaming over what /dev/stdout points to would replace the file, not write to it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
from pathlib import Path

NEW_FILE_MODE = 0o666  # less the umask, as open() and the shell create files


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a temporary file beside the target, flush it to disk, then rename it over the target.

    Raises OSError naming `path` (not the temporary file) when the file cannot be written.
    """
    shown = os.fspath(path)
    target = Path(os.path.realpath(path))  # through symlinks: rewrite what the link points to
    try:
        if _is_stream(path):
            _write_stream(path, data)
            return
        old_mode = stat.S_IMODE(os.stat(target).st_mode) if target.exists() else None
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        _replace(target, data, old_mode)
    except OSError as e:
        raise type(e)(e.errno, e.strerror or str(e), shown) from None


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """write_atomic for UTF-8 text."""
    write_atomic(path, text.encode("utf-8"))


def _is_stream(path: str | os.PathLike[str]) -> bool:
    """A device or pipe rather than a file: under /dev, or neither a file nor a folder."""
    if os.path.abspath(path).startswith("/dev/"):
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
    with open(path, "ab") as f:
        f.write(data)


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    tmp, fd = _create_beside(target)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.chmod(tmp, mode)  # created with the umask's mode: keep the old file's
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_beside(target: Path) -> tuple[Path, int]:
    """A new hidden file in the target's folder (so the rename is atomic), created exclusively."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, flags, NEW_FILE_MODE)
        except FileExistsError:
            continue
