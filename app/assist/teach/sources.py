"""Training sources beyond the templates and the generator: folders the user allowed, one by one
(`kernel-studio teach allow DIR`), and the proposals the assistant kept once they passed
verification (app.assist.prompting.examples.record_verified). Nothing from either is trusted: each
becomes
a candidate that the builder (app.assist.teach.data) guards against held-out tasks, puts in
canonical form, verifies and spec-checks like any other; and its code runs only as
app.isolation.trust
allows (inside the sandbox, or content the user trusted), never because it was allowed here.

The allowed folders are kept in the user's data folder (teach/sources.json), written whole."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from app.assist.errors import AssistError
from app.assist.prompting.examples import RECORD_NAME, verified_dir, verified_examples
from app.assist.tasks.suite import description_of
from app.assist.teach.candidate import Candidate
from app.assist.teach.data import Skipped, leading_comment
from app.base.fsutil import atomic_write_text
from app.base.paths import data_dir
from app.spec.limits import loads_bounded
from app.spec.model import MAX_SPEC_BYTES, SpecError, load_spec

SOURCES_NAME = "sources.json"
FORMAT = 1
USER = "user"
PROPOSAL = "proposal"
# Folders never searched for specs: they hold no one's kernels, and some are huge.
SKIP_FOLDERS = frozenset({"__pycache__", "node_modules", "build", "dist", "venv"})
# A scan stops after this many spec files in one allowed folder (a home folder allowed by
# mistake must not take hours).
MAX_SPECS = 5000
_KERNEL_LINE = re.compile(rb"^[ \t]*\[kernel\]", re.M)


class SourcesError(AssistError):
    """The list of allowed folders cannot be read or changed as asked."""


def sources_path() -> Path:
    """Where the allowed folders are listed."""
    return data_dir() / "teach" / SOURCES_NAME


def allowed_folders(path: Path | None = None) -> list[Path]:
    """The folders the user allowed, in the order allowed; none when nothing was allowed."""
    path = path or sources_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise SourcesError(f"cannot read the allowed folders in {path}: {error}",
                           f"fix or remove {path}, then allow the folders again") from None
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        raise SourcesError(f"{path} is not a list of allowed folders",
                           f"fix or remove {path}, then allow the folders again")
    return [Path(f) for f in folders]


def _write(folders: list[Path], path: Path) -> None:
    """Write the list whole (a crash leaves the old list or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "folders": [str(f) for f in folders]}
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


def allow(folder: Path, path: Path | None = None) -> tuple[Path, bool]:
    """Add a folder (made absolute) to the allowed ones; it and whether it is new."""
    resolved = folder.expanduser().resolve()
    if not resolved.is_dir():
        raise SourcesError(f"{folder} is not a folder", "give the folder that holds your specs")
    path = path or sources_path()
    folders = allowed_folders(path)
    if resolved in folders:
        return resolved, False
    _write([*folders, resolved], path)
    return resolved, True


def disallow(folder: Path, path: Path | None = None) -> Path:
    """Remove a folder from the allowed ones (it may be gone from the disk); the folder."""
    path = path or sources_path()
    folders = allowed_folders(path)
    resolved = folder.expanduser().resolve()
    if resolved not in folders:
        listed = ", ".join(str(f) for f in folders) or "none"
        raise SourcesError(f"{folder} is not an allowed folder",
                           f"the allowed folders: {listed} (kernel-studio teach sources)")
    _write([f for f in folders if f != resolved], path)
    return resolved


def spec_files(root: Path) -> Iterator[Path]:
    """The specs under root whose kernel exists (is_spec), in a stable order, hidden and
    build folders left out and links not followed."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders
                               if not d.startswith(".") and d not in SKIP_FOLDERS)
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith(".toml") and is_spec(path):
                yield path


def is_spec(path: Path) -> bool:
    """Whether a .toml file is a spec whose kernel exists: a [kernel] table whose source is
    there. One that does not parse but has a [kernel] line counts too (load_spec then names
    what is wrong); one that cannot be read at all is not known to be a spec."""
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    try:
        if len(raw) > MAX_SPEC_BYTES:
            raise ValueError("too large")
        table = loads_bounded(raw.decode("utf-8")).get("kernel")
    except (ValueError, RecursionError):  # TOMLDecodeError and UnicodeDecodeError among them
        return _KERNEL_LINE.search(raw) is not None
    if not isinstance(table, dict):
        return False
    source = table.get("source")
    return not isinstance(source, str) or (path.parent / source).is_file()


@dataclass(frozen=True)
class Found:
    """A spec read whole: its text, kernel, reference and what it computes."""

    path: Path
    entry: str
    text: str
    kernel: str
    reference: str
    description: str


def read_found(spec_path: Path, description: str = "") -> Found:
    """Read a spec and its two files; SpecError, OSError or UnicodeDecodeError when one cannot
    be. The description: the one given, else the spec's [task] description, else its leading
    comment."""
    spec = load_spec(spec_path)
    text = spec_path.read_text("utf-8")
    said = description or description_of(spec_path) or leading_comment(text)
    return Found(spec_path, spec.entry, text, spec.source_path.read_text("utf-8"),
                 spec.reference_path.read_text("utf-8"), said)


def candidate_of(found: Found, family: str) -> Candidate:
    """The candidate of a spec found in place: judged from its own folder, its code run only
    as app.isolation.trust decides (extra["vouched"] None)."""
    return Candidate(family, 0, found.entry, found.description, found.kernel, found.reference,
                     [], (), (), [], extra={"spec_text": found.text, "spec_path": found.path,
                                            "vouched": None})


def _why(error: Exception) -> str:
    """An unreadable spec's reason in one line."""
    if isinstance(error, SpecError) and error.problems:
        more = len(error.problems) - 1
        return str(error.problems[0]) + (f" (and {more} more)" if more else "")
    return (str(error).splitlines() or [type(error).__name__])[0]


def folder_candidates(root: Path) -> Iterator[Candidate | Skipped]:
    """Every spec under an allowed folder whose kernel exists, as a 'user' candidate; a spec
    that cannot be read is Skipped, named with its reason."""
    if not root.is_dir():
        yield Skipped(USER, str(root), "the allowed folder is gone; kernel-studio teach "
                                       "disallow it, or bring it back")
        return
    for number, path in enumerate(spec_files(root)):
        if number == MAX_SPECS:
            yield Skipped(USER, str(root), f"holds more than {MAX_SPECS} specs; the rest were "
                                           "not read (allow the folders that hold kernels)")
            return
        try:
            yield candidate_of(read_found(path), USER)
        except (SpecError, OSError, UnicodeDecodeError) as error:
            yield Skipped(USER, str(path), _why(error))


def allowed_candidates(folders: list[Path] | None = None) -> Iterator[Candidate | Skipped]:
    """The candidates of every allowed folder, in the order they were allowed."""
    for root in allowed_folders() if folders is None else folders:
        yield from folder_candidates(root)


def proposal_candidates(folder: Path | None = None) -> Iterator[Candidate | Skipped]:
    """The proposals kept as verified examples, as 'proposal' candidates (the listing of
    app.assist.prompting.examples, which leaves out a kernel changed since it passed); a kept
    folder it
    leaves out is Skipped, named."""
    root = folder or verified_dir()
    listed = verified_examples(root)
    for example in listed:
        try:
            yield candidate_of(read_found(example.path, example.description), PROPOSAL)
        except (SpecError, OSError, UnicodeDecodeError) as error:
            yield Skipped(PROPOSAL, example.path.parent.name, _why(error))
    kept = {example.path.parent for example in listed}
    for record in sorted(root.glob(f"*/{RECORD_NAME}")):
        if record.parent not in kept:
            yield Skipped(PROPOSAL, record.parent.name,
                          "its record cannot be read or its kernel changed since it passed")


def count_specs(root: Path) -> int:
    """How many specs with a kernel an allowed folder holds (for `teach sources`)."""
    return sum(1 for _path in spec_files(root))
