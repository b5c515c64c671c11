"""Runs of unsaved text that never touch the user's files: a private copy of the kernel's folder.

Verify and Bench read files (the spec, the kernel, the reference, local headers). When an open
buffer of the kernel's folder or the Spec pane holds unsaved edits, the folder's source files
are copied into a private folder of this session, the edits are written over the copies, and the
run reads the copy. Nothing is written to the user's folder: a file changes only on Save.

Each kernel folder keeps the same private copy for the whole session, refreshed before every
run, because the CPU worker's sandbox is made for one folder: a new folder each time would start
a new worker each time. With nothing unsaved the run reads the user's own files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from app.isolation import sandbox
from app.workspace.orphans import session_prefix

MAX_FILES = 2000
MAX_BYTES = 256 << 20
MAX_ENTRIES = 20_000  # entries looked at before the folder counts as too large to copy

SpecWriter = Callable[[Path], bool]


class SnapshotError(Exception):
    """The kernel's folder cannot be copied for a run; the text says what to do instead."""


def _too_large(folder: Path) -> SnapshotError:
    """The error for a folder that holds too much to copy before every run."""
    return SnapshotError(f"{folder} holds more than {MAX_FILES} source files or "
                         f"{MAX_BYTES >> 20} MiB, too much to copy for a run of unsaved text; "
                         "save your edits (Ctrl+S) or put the kernel in a folder of its own")


def source_files(folder: Path) -> list[Path]:
    """The files under `folder` that make up a kernel's code as app.isolation.trust counts them
    (every file, hidden ones included, __pycache__ folders left out), relative."""
    found: list[Path] = []
    seen, size = 0, 0
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            seen += 1
            path = Path(root) / name
            if not path.is_file():
                continue
            size += path.stat().st_size
            found.append(path.relative_to(folder))
        if seen > MAX_ENTRIES or len(found) > MAX_FILES or size > MAX_BYTES:
            raise _too_large(folder)
    return found


def _clear_foreign(copy: Path, keep: set[Path]) -> None:
    """Remove from `copy` everything that is not one of the `keep` files (relative) or a real
    folder on the way to one: files deleted since, and whatever a run left there (a link in
    place of a folder is removed, never followed; a file's own name is replaced when it is
    written, sandbox.create_shared)."""
    folders = {parent for path in keep for parent in path.parents}
    for root, names, files in os.walk(copy, topdown=False):
        for name in files + names:
            path = Path(root) / name
            real_folder = path.is_dir() and not path.is_symlink()
            if path.relative_to(copy) in (folders if real_folder else keep):
                continue
            if real_folder:
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _refresh(original: Path, copy: Path) -> None:
    """Make `copy` hold exactly the source files of `original`, as they are on disk. The folder
    itself is kept (emptied and refilled, never removed and made again): a warm worker's
    sandbox binds it, and a new folder at the same path is one that sandbox cannot see."""
    files = source_files(original)
    if copy.is_symlink() or (copy.exists() and not copy.is_dir()):
        copy.unlink()
    copy.mkdir(mode=0o700, exist_ok=True)
    _clear_foreign(copy, set(files))
    for relative in files:
        target = copy / relative
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        sandbox.write_shared(target, (original / relative).read_bytes())
        shutil.copystat(original / relative, target)


class RunFolders:
    """The session's private copies of kernel folders (removed by close())."""

    def __init__(self) -> None:
        """No folder is made until a run of unsaved text needs one."""
        self._root: Path | None = None
        self._copies: dict[Path, Path] = {}

    def _copy_of(self, folder: Path) -> Path:
        """The private copy's path for a kernel folder (stable for the session)."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix=session_prefix("run")))
        if folder not in self._copies:
            self._copies[folder] = self._root / f"{len(self._copies) + 1:02d}-{folder.name}"
        return self._copies[folder]

    def prepare(self, spec_path: Path, buffers: Mapping[Path, str],
                write_spec: SpecWriter | None = None) -> Path:
        """The spec a run should read: `spec_path` itself when nothing in its folder is unsaved,
        else the spec inside a fresh copy of the folder holding the unsaved `buffers` (file ->
        text; files elsewhere are ignored) and, when given, the Spec pane's form written by
        `write_spec(path)`. SnapshotError or OSError when the copy cannot be made."""
        folder = spec_path.parent.resolve()
        edits = {path.resolve(): text for path, text in buffers.items()
                 if path.resolve().is_relative_to(folder)}
        if not edits and write_spec is None:
            return spec_path
        copy = self._copy_of(folder)
        _refresh(folder, copy)
        for path, text in edits.items():
            target = copy / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            sandbox.write_shared(target, text.encode("utf-8"))
        spec_copy = copy / spec_path.name
        if write_spec is not None and not write_spec(spec_copy):
            raise SnapshotError("the Spec pane's form could not be written for the run; fix "
                                "the fields listed in the Spec pane")
        return spec_copy

    def holds(self, path: Path) -> bool:
        """Whether `path` lies in one of this session's private copies."""
        return self._root is not None and Path(path).resolve().is_relative_to(
            self._root.resolve())

    def close(self) -> None:
        """Remove every private copy."""
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
        self._root, self._copies = None, {}
