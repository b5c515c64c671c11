"""File helpers that never lose data: atomic writes with fsync of the file and its folder."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def _fsync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or the new one.

    The data goes to a temporary file in the same folder, is fsynced, renamed over the target,
    then the folder is fsynced. On any error (a full disk, say) the temporary file is removed,
    the original is untouched, and the OSError propagates for the caller to report.
    """
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_folder(folder)


def atomic_write_text(path: Path, text: str) -> None:
    """atomic_write_bytes for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


class NotAFile(OSError):
    """A path that names no regular file (a FIFO, a device, a folder) or one over a size limit;
    its message says which, in words."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; NotAFile otherwise.

    Why: a user's path may name /dev/zero (endless: reading it whole takes every byte of
    memory) or a FIFO (opening it waits for a writer forever). The file is opened without
    blocking, checked on the open descriptor (no swap between check and read), and read only
    up to one byte past the limit."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise NotAFile(f"{path} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"{path} is not a regular file (a device, a FIFO or a socket)")
        if info.st_size > limit:
            raise NotAFile(f"{path} has {info.st_size} bytes, more than the {limit} allowed")
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew since fstat
        raise NotAFile(f"{path} has more than the {limit} bytes allowed")
    return data
