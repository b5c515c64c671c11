"""References kept loaded across the verifications of one Engine.

Starting a reference process costs a sandbox, a Python and a NumPy import: about 0.3 s, half a
warm GPU verification. An Engine keeps each loaded reference in its process (still sandboxed
where the sandbox is in force) and hands it to the next verification of the same reference,
as long as nothing it could have read has changed: the reference file's bytes, the contents
of every file in the spec's folder (size, times and inode for large ones), whether the sandbox
is in force, and the time limit. The kernel's own source is left out: a reference computes
from the inputs it is given, and the edit-a-kernel, verify-again loop changes just that file
(the GUI also rewrites its private copy of the folder before every run, so contents, not
times, decide).
A reference that failed in any way, or whose process is gone, is never handed out again.

The pool also remembers what each warm reference answered: a run's inputs (a function of the
spec, case and seed) and the outputs the reference returned for them. Verifying the same spec
again (the edit-a-kernel, verify-again loop) then reuses them instead of drawing and sending
them once more; the kernel still runs, and every check is made, on every run. They are
forgotten with their reference, and within MEMO_BYTES, least recently used first.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.engine.verify.reference import Reference, check_location, time_limit
from app.isolation import sandbox

# Loaded references kept at once (each is a Python process with NumPy: tens of MB).
MAX_WARM = 4
# A folder with more files than this is not stamped (walking it would cost more than a start):
# its references are loaded afresh for every verification, as before.
MAX_STAMPED_FILES = 2000
# Files up to this size are stamped by their contents; larger ones, and all files once this many
# bytes were read for one stamp, by size, times and inode.
HASH_FILE_BYTES = 1 << 20
HASH_TOTAL_BYTES = 32 << 20
# Bytes of remembered inputs and expected outputs, over every warm reference.
MEMO_BYTES = 256 << 20

Arrays = dict[str, Any]
Staged = tuple[Arrays, Arrays]


def _file_stamp(entry: os.DirEntry[str], budget: list[int]) -> tuple[object, ...] | None:
    """Path, size and SHA-256 of a small file while `budget` (bytes left to read) lasts; else
    path, size, modification and change times and inode (of the link itself when it leads
    nowhere). None when it vanished meanwhile. The change time and inode catch contents
    replaced under an old modification time (cp -p, rsync -t, tar)."""
    try:
        status = entry.stat()
    except OSError:  # a dangling link, such as an editor's lock file
        try:
            status = entry.stat(follow_symlinks=False)
        except OSError:
            return None
    if status.st_size <= min(HASH_FILE_BYTES, budget[0]) and entry.is_file():
        try:
            digest = hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
            budget[0] -= status.st_size
            return (entry.path, status.st_size, digest)
        except OSError:
            pass
    return (entry.path, status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def folder_stamp(folder: Path, limit: int = MAX_STAMPED_FILES,
                 skip: frozenset[str] = frozenset()) -> tuple[object, ...] | None:
    """The stamp (_file_stamp) of every file under `folder` (bytecode caches and the paths in
    `skip` aside), or None when there are more than `limit` of them."""
    entries: list[tuple[object, ...]] = []
    budget = [HASH_TOTAL_BYTES]
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                for entry in listing:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            pending.append(Path(entry.path))
                        continue
                    if entry.path in skip:
                        continue
                    stamp = _file_stamp(entry, budget)  # one bad entry must not hide the rest
                    if stamp is not None:
                        entries.append(stamp)
        except OSError:
            continue  # an unreadable folder is unreadable to the reference too
        if len(entries) > limit:
            return None
    return tuple(sorted(entries, key=lambda stamp: str(stamp[0])))


def reference_key(path: Path, folder: Path, kernel_source: Path | None = None
                  ) -> tuple[object, ...] | None:
    """What a warm reference must match to be used again; None when it cannot be told (the
    reference is then loaded afresh, and a file it cannot read is reported as before). The
    kernel's source, when named, is not part of it."""
    real = check_location(path, folder)
    home = folder.resolve()  # the sandbox's view: a reference never serves another folder
    skip = frozenset({str(kernel_source.resolve())}) if kernel_source else frozenset()
    stamp = folder_stamp(home, skip=skip)
    if stamp is None:
        return None
    try:
        digest = hashlib.sha256(real.read_bytes()).hexdigest()
    except OSError:
        return None
    return (str(real), str(home), digest, stamp, sandbox.available()[0], time_limit())


@dataclass
class _Entry:
    """One warm reference and the key it was loaded under."""

    key: tuple[object, ...]
    reference: Reference
    # A run's key -> its inputs and expected outputs (read-only arrays), and their bytes.
    staged: OrderedDict[object, tuple[Staged, int]] = field(default_factory=OrderedDict)


class ReferencePool:
    """Warm references of one Engine, by the key they were loaded under."""

    def __init__(self, capacity: int = MAX_WARM) -> None:
        """An empty pool keeping at most `capacity` references loaded."""
        self.capacity = capacity
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self.starts = 0
        self.memo_bytes = MEMO_BYTES
        self._lock = threading.Lock()  # runs are staged on a second thread (ahead.py)

    def get(self, path: Path, folder: Path, kernel_source: Path | None = None) -> Reference:
        """A loaded (or loading) reference for `path`: the warm one when its key still
        matches and its process lives, else a fresh one (ReferenceError as load_reference)."""
        key = reference_key(path, folder, kernel_source) if self.capacity else None
        name = str(path.resolve())
        entry = self._entries.pop(name, None)
        if entry is not None and entry.key == key and entry.reference.usable:
            self._entries[name] = entry
            return entry.reference
        if entry is not None:
            entry.reference.close()
        reference = Reference(path, folder)
        self.starts += 1
        if key is not None:
            self._entries[name] = _Entry(key, reference)
            self._trim()
        return reference

    def done(self, reference: Reference, healthy: bool) -> None:
        """The verification using `reference` ended: keep it when it is pooled and `healthy`
        (no error from it and no request left unanswered), else stop it."""
        pooled = any(e.reference is reference for e in self._entries.values())
        if healthy and pooled and reference.usable:
            return
        self.discard(reference)

    def discard(self, reference: Reference) -> None:
        """Stop a reference and forget it."""
        for name, entry in list(self._entries.items()):
            if entry.reference is reference:
                del self._entries[name]
        reference.close()

    def recall(self, reference: Reference, run: object) -> Staged | None:
        """What `reference` was given and answered for the run keyed `run`, if remembered."""
        with self._lock:
            entry = self._entry(reference)
            if entry is None or run not in entry.staged:
                return None
            entry.staged.move_to_end(run)
            return entry.staged[run][0]

    def remember(self, reference: Reference, run: object, staged: Staged) -> None:
        """Keep a run's inputs and expected outputs (made read-only) for `reference`."""
        size = sum(int(getattr(a, "nbytes", 0)) for part in staged for a in part.values())
        with self._lock:
            entry = self._entry(reference)
            if entry is None or size > self.memo_bytes:
                return
            for part in staged:
                for array in part.values():
                    if hasattr(array, "flags"):
                        array.flags.writeable = False
            entry.staged[run] = (staged, size)
            self._trim_memo()

    def memo_size(self) -> int:
        """Bytes remembered now."""
        return sum(size for e in self._entries.values() for _, size in e.staged.values())

    def forget(self) -> None:
        """Forget every remembered run (the references stay loaded)."""
        with self._lock:
            for entry in self._entries.values():
                entry.staged.clear()

    def _entry(self, reference: Reference) -> _Entry | None:
        """The pool's entry holding `reference`."""
        return next((e for e in self._entries.values() if e.reference is reference), None)

    def _trim_memo(self) -> None:
        """Drop remembered runs, least recently used first, down to memo_bytes."""
        while self.memo_size() > self.memo_bytes:
            entry = next(e for e in self._entries.values() if e.staged)
            entry.staged.popitem(last=False)

    def loaded(self) -> list[Reference]:
        """The references kept warm now, least recently used first."""
        return [entry.reference for entry in self._entries.values()]

    def _trim(self) -> None:
        """Stop the least recently used references beyond the capacity."""
        while len(self._entries) > self.capacity:
            _, entry = self._entries.popitem(last=False)
            entry.reference.close()

    def close(self) -> None:
        """Stop every warm reference."""
        while self._entries:
            _, entry = self._entries.popitem()
            entry.reference.close()
