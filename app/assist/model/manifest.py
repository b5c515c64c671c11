"""The model manifest: the sha256 of every file in a model folder, written on import and checked
at every load, so a changed byte (a swapped weight file, an edited config) is refused by name."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.assist.errors import ModelRefused

# The names of a model folder's files live in modelfiles, below this module (it checked the
# weights through model_files, which made the two import each other); kept here for callers.
from app.assist.model.modelfiles import ADAPTERS_PREFIX as ADAPTERS_PREFIX
from app.assist.model.modelfiles import MANIFEST_NAME as MANIFEST_NAME
from app.assist.model.modelfiles import check_links
from app.assist.model.modelfiles import model_files as model_files
from app.base.fsutil import atomic_write_text

FORMAT = "kernel-studio-model-manifest"
VERSION = 1
_CHUNK = 4 << 20
# A manifest lists a few dozen files; anything this large is not one.
MAX_MANIFEST_BYTES = 16 << 20
# A callback for long hashing: (message, fraction done in [0, 1]).
Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class FileEntry:
    """One file of a model folder as the manifest records it."""

    path: str
    size: int
    sha256: str


def sha256_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> str:
    """The hex sha256 of a file, read in chunks; `on_bytes` hears each chunk's length."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            if on_bytes:
                on_bytes(len(chunk))
    return digest.hexdigest()


class _ByteProgress:
    """Turns chunk sizes into (message, fraction) calls for a known total."""

    def __init__(self, total: int, progress: Progress | None, verb: str) -> None:
        """Start at zero bytes of `total`."""
        self.total = max(total, 1)
        self.done = 0
        self.progress = progress
        self.verb = verb
        self.name = ""

    def __call__(self, count: int) -> None:
        """Count bytes read and report."""
        self.done += count
        if self.progress:
            self.progress(f"{self.verb} {self.name}", min(self.done / self.total, 1.0))


def hash_files(folder: Path, names: list[str], progress: Progress | None = None,
               verb: str = "hashing") -> list[FileEntry]:
    """FileEntry for each named file, with progress by bytes."""
    counter = _ByteProgress(sum((folder / n).stat().st_size for n in names), progress, verb)
    entries = []
    for name in names:
        counter.name = name
        path = folder / name
        entries.append(FileEntry(name, path.stat().st_size, sha256_file(path, counter)))
    return entries


def write_manifest(folder: Path, source: dict[str, Any] | None = None,
                   progress: Progress | None = None, name: str | None = None) -> dict[str, Any]:
    """Hash every file in `folder` and write manifest.json beside them; returns the manifest.

    `name` is the model's name when `folder` is a temporary folder that will be renamed."""
    entries = hash_files(folder, model_files(folder), progress)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "name": name or folder.name,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "source": source or {},
        "files": {e.path: {"size": e.size, "sha256": e.sha256} for e in entries},
    }
    atomic_write_text(folder / MANIFEST_NAME, json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of a model folder; ModelRefused when it is missing or malformed."""
    path = folder / MANIFEST_NAME
    hint = f"import the model first: kernel-studio model import {folder}"
    if not path.is_file():
        raise ModelRefused(f"{folder} has no {MANIFEST_NAME}: Kernel Studio loads only models "
                           "whose files it has hashed", path, hint)
    if path.is_symlink() or path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ModelRefused(f"{path} is not a Kernel Studio model manifest (a link, or larger "
                           f"than {MAX_MANIFEST_BYTES} bytes)", path, hint)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ModelRefused(f"{path} cannot be read: {error}", path, hint) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not _well_formed(
            data.get("files")):
        raise ModelRefused(f"{path} is not a Kernel Studio model manifest", path, hint)
    return data


def _well_formed(files: Any) -> bool:
    """A manifest's `files`: relative names to {size: int, sha256: text}."""
    if not isinstance(files, dict):
        return False
    for name, entry in files.items():
        if name.startswith("/") or ".." in name.split("/") or not isinstance(entry, dict):
            return False
        if not isinstance(entry.get("size"), int) or not isinstance(entry.get("sha256"), str):
            return False
    return True


def _changed(folder: Path, name: str, detail: str) -> ModelRefused:
    """The error for one file that differs from the manifest."""
    return ModelRefused(
        f"model file {name!r} in {folder} {detail}; it was refused",
        folder / name,
        "if you changed it on purpose, import the model again (kernel-studio model import); "
        "otherwise restore the folder from a trusted copy")


def _check_names(folder: Path, recorded: dict[str, Any], present: list[str]) -> None:
    """Every recorded file exists, and no file was added."""
    for name in sorted(recorded):
        if name not in present:
            raise _changed(folder, name, "is missing")
    for name in present:
        if name not in recorded:
            raise _changed(folder, name, "is not in the manifest (added after import)")


def _check_sizes(folder: Path, recorded: dict[str, Any]) -> None:
    """Sizes first: a cheap way to name a changed file before hashing anything."""
    for name, entry in sorted(recorded.items()):
        size = (folder / name).stat().st_size
        if size != entry.get("size"):
            raise _changed(folder, name, f"has {size} bytes, the manifest says {entry.get('size')}")


def verify_manifest(folder: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Check every file of `folder` against its manifest; ModelRefused names the first mismatch.
    Links and file kinds are checked first: a link leading out of the folder is refused before
    anything is read through it."""
    check_links(folder)
    manifest = read_manifest(folder)
    recorded: dict[str, Any] = manifest["files"]
    _check_names(folder, recorded, model_files(folder))
    _check_sizes(folder, recorded)
    for entry in hash_files(folder, sorted(recorded), progress, verb="checking"):
        expected = recorded[entry.path].get("sha256")
        if entry.sha256 != expected:
            raise _changed(folder, entry.path,
                           f"has sha256 {entry.sha256[:16]}..., the manifest says "
                           f"{str(expected)[:16]}...")
    return manifest
