"""Integrity of the CPU backend's build cache: every library is sealed with its SHA-256 when it
is built, and checked against it before it is used, so a library that was truncated, swapped
or replaced by a link is rebuilt instead of loaded. Names read back from the cache's records
must be the cache's own (`kernel-<hash>.so`) and stay inside the cache folder.

The seal is a file beside the library (`<name>.sha256`); the unit records of build.py keep the
same digest, so a library and its record must agree too.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from app.base.fsutil import atomic_write_text

SUFFIX = ".sha256"
NAME = re.compile(r"^(kernel|runtime)-[0-9a-f]{24}\.so$")
CHUNK = 1 << 20
# No library of this cache comes near this; a larger file is not one of ours.
MAX_LIBRARY_BYTES = 1 << 30


def digest(path: Path, limit: int = MAX_LIBRARY_BYTES, follow: bool = False) -> str | None:
    """The SHA-256 of a regular file (not a device or a pipe, nor a link unless `follow`) of
    at most `limit` bytes, or None: reading /dev/zero or a FIFO named in a crafted record
    must not hang."""
    try:
        with open(path, "rb", opener=_follow if follow else _no_follow) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            hasher = hashlib.sha256()
            while chunk := handle.read(CHUNK):
                hasher.update(chunk)
    except OSError:
        return None
    return hasher.hexdigest()


def _no_follow(path: str, flags: int) -> int:
    """open() that refuses a symbolic link in the last component, and never blocks on a FIFO."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)


def _follow(path: str, flags: int) -> int:
    """open() that never blocks on a FIFO."""
    return os.open(path, flags | os.O_NONBLOCK)


def seal(library: Path) -> str | None:
    """Record the digest of a library just built; returns it (None if it cannot be read)."""
    value = digest(library)
    if value is not None:
        atomic_write_text(library.with_name(library.name + SUFFIX), value + "\n")
    return value


def intact(library: Path, expected: str | None = None) -> bool:
    """Whether `library` is a regular file whose content matches its seal (and `expected`,
    the digest a record kept, when given). False for a missing, unsealed or changed library:
    the caller builds it again."""
    try:
        recorded = library.with_name(library.name + SUFFIX).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return False
    if expected is not None and recorded != expected:
        return False
    return digest(library) == recorded


def confined(folder: Path, name: object) -> Path | None:
    """`folder / name` when `name` is one of the cache's own library names, else None (a
    record naming /usr/lib/x.so or ../x.so points outside the cache)."""
    if not isinstance(name, str) or not NAME.match(name):
        return None
    return folder / name
