"""Which specs may run their kernel and reference, decided in one place.

With a sandbox in force (app.isolation.sandbox), everything runs inside it and nothing needs trust.
Where no sandbox can be had, only content the user trusted runs: `kernel-studio trust SPEC`
records the SHA-256 of the spec, its kernel, its reference and every other file of its folder
(headers, Python modules the reference may import, hidden ones too) in the data folder's
trust.json.
Trust follows content, not names: an edited file, or a new header beside the kernel, is
untrusted again; an unchanged copy elsewhere is trusted.
Links are recorded with what they lead to: a link to a file or folder inside the spec's
folder counts by its target (hashed where it lies), and a link leading outside the folder,
nowhere, or in a loop makes the spec impossible to trust until it is replaced by a copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.base import paths
from app.base.fsutil import atomic_write_text
from app.isolation import sandbox
from app.spec.model import Spec

FILE_NAME = "trust.json"
FORMAT = 1
MAX_FILES = 2000
MAX_BYTES = 256 << 20


class TrustError(Exception):
    """The trust file cannot be read or written, or a spec cannot be trusted as it is."""


@dataclass(frozen=True)
class Entry:
    """One trusted spec: the digest of its content, and what it covered when trusted."""

    digest: str
    spec: str
    files: dict[str, str] = field(default_factory=dict)
    added: str = ""


@dataclass(frozen=True)
class Decision:
    """Whether a spec's code may run, and whether inside a sandbox."""

    sandboxed: bool
    refusal: str | None = None


def store_path() -> Path:
    """Where trust is kept."""
    return paths.data_dir() / FILE_NAME


def _sha256(path: Path) -> str:
    """A file's SHA-256."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _link_target(link: Path, folder: Path) -> Path:
    """Where a link inside the folder leads, resolved all the way; TrustError when it leads
    outside the folder, nowhere, or round in a loop (trust vouches for the folder's content,
    and what a link outside names can change without the folder changing)."""
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):
        raise TrustError(f"{link} is a link that leads nowhere or round in a loop "
                         f"({os.readlink(link)!r}); remove it or copy what it names into "
                         f"{folder}") from None
    if not target.is_relative_to(folder):
        raise TrustError(f"{link} is a link to {target}, outside the spec's folder {folder}: "
                         "copy what it names into the folder, then trust it")
    if "__pycache__" in target.relative_to(folder).parts:
        # Trust leaves __pycache__ out; through a link its files would be importable.
        raise TrustError(f"{link} is a link into a __pycache__ folder; remove it")
    return target


def _entries(folder: Path) -> tuple[list[Path], dict[str, str]]:
    """Every plain file under the folder, hidden ones included, and every link as its
    relative name -> the relative name of what it leads to. Any file can become code (a
    module in a hidden folder the reference puts on sys.path, a sourceless .pyc, a header with
    any name, text the reference executes); a link is recorded, not walked, since what it
    leads to lies in the folder and is hashed there. Only __pycache__ folders are left out: a
    reference never reads them (reference_child points Python's bytecode cache elsewhere),
    and running one writes them. TrustError for a link leading outside, nowhere or in a loop,
    and for anything that is not a file, folder or link (a FIFO, a device)."""
    files: list[Path] = []
    links: dict[str, str] = {}
    pending = [folder]
    while pending:
        for entry in sorted(os.scandir(pending.pop()), key=lambda e: e.name):
            path = Path(entry.path)
            if entry.is_symlink():
                target = _link_target(path, folder)
                links[str(path.relative_to(folder))] = str(target.relative_to(folder))
            elif entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append(path)
            elif entry.is_file(follow_symlinks=False):
                files.append(path)
                if len(files) > MAX_FILES:
                    raise TrustError(f"{folder} holds more than {MAX_FILES} files: put the "
                                     "kernel in a folder of its own")
            else:
                raise TrustError(f"{path} is neither a file, a folder nor a link; remove it "
                                 "from the spec's folder")
    return files, links


def kernel_files(folder: Path) -> list[Path]:
    """Every plain file under `folder` that can be part of a kernel's code, as trust counts
    them (hidden ones included, __pycache__ left out); TrustError as for content()."""
    return _entries(folder.resolve())[0]


def content(spec: Spec) -> dict[str, str]:
    """Relative name -> SHA-256 of every file that makes up the spec's code, and for every
    link in its folder `name ->` -> the name of what it leads to (TrustError when one is
    missing, a link leads outside the folder, or the folder is too large to vouch for)."""
    folder = spec.base_dir.resolve()
    inside, links = _entries(folder)
    named = [spec.path or folder / "spec.toml", spec.source_path, spec.reference_path]
    files = sorted({Path(p).resolve() for p in [*named, *inside]})
    if len(files) > MAX_FILES or sum(p.stat().st_size for p in files if p.exists()) > MAX_BYTES:
        raise TrustError(f"{folder} holds more than {MAX_FILES} source files or "
                         f"{MAX_BYTES >> 20} MiB: put the kernel in a folder of its own")
    hashes = {f"{name} ->": target for name, target in links.items()}
    for path in files:
        # A named file outside the folder (source = "../k.cu") is hashed at its full path.
        name = str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)
        try:
            hashes[name] = _sha256(path)
        except OSError as error:
            raise TrustError(f"cannot read {path}: {error.strerror or error}") from None
    return hashes


def digest_of(files: dict[str, str]) -> str:
    """One digest for a set of named hashes."""
    text = "\n".join(f"{name}\0{value}" for name, value in sorted(files.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def load_store() -> list[Entry]:
    """Every trusted entry (none when the file does not exist; TrustError when unreadable)."""
    path = store_path()
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Entry(str(e["digest"]), str(e["spec"]), dict(e.get("files", {})),
                      str(e.get("added", ""))) for e in data["entries"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise TrustError(f"the trust file {path} cannot be read ({error}); remove it and trust "
                         "your specs again") from None


def save_store(entries: list[Entry]) -> None:
    """Write every entry, atomically."""
    data: dict[str, Any] = {"format": FORMAT, "entries": [asdict(e) for e in entries]}
    atomic_write_text(store_path(), json.dumps(data, indent=1) + "\n")


def add(spec: Spec) -> Entry:
    """Trust the spec's current content; returns its entry."""
    files = content(spec)
    entry = Entry(digest_of(files), str(Path(spec.path or spec.base_dir).resolve()), files,
                  time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    kept = [e for e in load_store() if e.digest != entry.digest and e.spec != entry.spec]
    save_store([*kept, entry])
    return entry


def remove(spec_path: Path) -> list[Entry]:
    """Forget every entry recorded for this spec path; returns what was removed."""
    wanted = str(spec_path.resolve())
    entries = load_store()
    removed = [e for e in entries if str(Path(e.spec).resolve()) == wanted]
    if removed:
        save_store([e for e in entries if e not in removed])
    return removed


def is_trusted(spec: Spec) -> bool:
    """Whether the spec's current content is in the trust file."""
    try:
        digest = digest_of(content(spec))
        return any(e.digest == digest for e in load_store())
    except TrustError:
        return False


def decide(spec: Spec, vouched: bool | None = None) -> Decision:
    """May this spec's kernel and reference run, and where. Inside a sandbox always; without
    one only when the caller vouches for it (the user just agreed, say) or its content is in
    the trust file. `vouched=False` refuses unless a sandbox contains it."""
    works, reason = sandbox.available()
    if works:
        return Decision(sandboxed=True)
    if vouched or (vouched is None and is_trusted(spec)):
        return Decision(sandboxed=False)
    name = str(spec.path or spec.base_dir)
    return Decision(False, f"{Path(name).name} was not run: no sandbox can be had here "
                           f"({reason}) and its content is not trusted. Read its kernel and "
                           f"reference, then run `kernel-studio trust {name}` to let them run "
                           "here, or install bubblewrap (see `kernel-studio doctor`)")
