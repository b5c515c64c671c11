"""Autosave of unsaved buffers to a recovery folder, and finding what a crashed session left.

Each running session owns a folder under <data>/recovery/ and holds an exclusive lock on a file
in it for as long as it lives. The kernel drops the lock when the process dies, however it dies,
so a folder whose lock can be taken belongs to a session that ended without cleaning up: a
crash. Its buffers are offered back. No Qt here: the window decides when to call these.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from app.base.fsutil import atomic_write_text
from app.base.paths import data_dir

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: fall back to "never recover a live session"
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "session.lock"


@dataclass(frozen=True)
class RecoveredBuffer:
    """One buffer a crashed session autosaved: its text and where it belonged."""

    title: str
    path: str | None
    text: str
    saved_at: float
    source: Path


def recovery_root() -> Path:
    """The folder that holds one subfolder per session."""
    return data_dir() / "recovery"


def _try_lock(path: Path) -> IO[str] | None:
    """An open lock file holding an exclusive lock, or None when another process holds it."""
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open to hold the lock
    if fcntl is None:
        return handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


class RecoveryStore:
    """This session's recovery folder: write, drop and finally remove autosaved buffers."""

    def __init__(self, root: Path | None = None) -> None:
        """Create and lock a fresh session folder."""
        self.root = root or recovery_root()
        self.folder = self.root / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = _try_lock(self.folder / LOCK_NAME)

    def save(self, buffer_id: str, title: str, path: str | None, text: str) -> Path:
        """Write one buffer's text atomically; a later save of the same id replaces it."""
        target = self.folder / f"{buffer_id}.json"
        record = {"title": title, "path": path, "text": text, "saved_at": time.time()}
        atomic_write_text(target, json.dumps(record))
        return target

    def drop(self, buffer_id: str) -> None:
        """Forget a buffer (saved or closed without changes)."""
        with contextlib.suppress(FileNotFoundError):
            (self.folder / f"{buffer_id}.json").unlink()

    def has(self, buffer_id: str) -> bool:
        """Whether a recovery copy of the buffer exists."""
        return (self.folder / f"{buffer_id}.json").exists()

    def close(self) -> None:
        """A clean exit: remove this session's folder and release its lock."""
        shutil.rmtree(self.folder, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def _read_buffer(path: Path) -> RecoveredBuffer | None:
    """One recovery file, or None when it cannot be read (never raise at start-up)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return RecoveredBuffer(str(record["title"]), record.get("path"), str(record["text"]),
                               float(record.get("saved_at", 0.0)), path)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def crashed_sessions(root: Path | None = None, exclude: Path | None = None) -> list[Path]:
    """Session folders whose owner is gone (their lock is free), oldest first."""
    root = root or recovery_root()
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir(), key=lambda p: p.stat().st_mtime):
        if not folder.is_dir() or folder == exclude:
            continue
        lock = _try_lock(folder / LOCK_NAME) if fcntl is not None else None
        if lock is not None:
            lock.close()
            found.append(folder)
    return found


def recoverable(root: Path | None = None, exclude: Path | None = None) -> list[RecoveredBuffer]:
    """Every buffer left by crashed sessions."""
    buffers = []
    for folder in crashed_sessions(root, exclude):
        for path in sorted(folder.glob("*.json")):
            buffer = _read_buffer(path)
            if buffer is not None:
                buffers.append(buffer)
    return buffers


def set_aside_root() -> Path:
    """Where declined recovery sessions are kept, in case the user wants them after all."""
    return data_dir() / "recovery-set-aside"


def set_aside(folders: list[Path]) -> None:
    """Move declined sessions out of the way without deleting the user's text."""
    target = set_aside_root()
    target.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rename(target / folder.name)


def discard_sessions(folders: list[Path]) -> None:
    """Remove crashed sessions' folders once their buffers are safe elsewhere (or declined)."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
