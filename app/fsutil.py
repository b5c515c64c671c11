"""File helpers that never lose data: atomic writes with fsync of the file and its folder."""

from __future__ import annotations

import contextlib
import os
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
