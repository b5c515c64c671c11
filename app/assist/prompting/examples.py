"""Examples from verified kernels: the prompt for a task may carry the kernels most like it, among
those known to pass verification: the templates in resources/kernels (verified by the test
suite) and the kernels that passed verify for the user (kept in the data folder's verified/).

Choosing is a small scoring of our own: words shared by the task's description and the
example's (the same stemming as the skills use), plus a bonus per shared dtype, within a token
budget. Held-out tasks never become examples, and a task never gets its own kernel as one.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from app.assist.prompting.budget import TokenCounter
from app.assist.prompting.compiler_tests import compiler_dependent
from app.assist.prompting.skills import words
from app.assist.tasks.suite import HeldOut
from app.base.fsutil import atomic_write_text
from app.base.paths import RESOURCES, data_dir
from app.spec.model import Spec, SpecError, entry_name, load_spec

TEMPLATES_DIR = RESOURCES / "kernels"
VERIFIED_NAME = "verified"
RECORD_NAME = "verified.json"
MAX_EXAMPLES = 2
BUDGET_TOKENS = 1200
DTYPE_BONUS = 2.0
NAME_WEIGHT = 4.0
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Example:
    """A kernel known to pass, with what it computes."""

    name: str
    description: str
    code: str
    dtypes: frozenset[str]
    path: Path

    def text(self) -> str:
        """The example as the prompt shows it."""
        return (f"### Example: {self.name} (passed verification)\n{self.description}\n"
                f"```cuda\n{self.code.strip()}\n```\n")


def verified_dir() -> Path:
    """Where kernels that passed verify for the user are kept."""
    return data_dir() / VERIFIED_NAME


def _leading_comment(spec_path: Path) -> str:
    """The comment lines at the top of a spec (templates describe themselves there)."""
    lines = []
    for line in spec_path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def _example(spec_path: Path, description: str) -> Example | None:
    """The example of one spec and its kernel, or None when either cannot be read."""
    try:
        spec = load_spec(spec_path)
        code = spec.source_path.read_text(encoding="utf-8")
    except (SpecError, OSError, UnicodeDecodeError):
        return None
    dtypes = frozenset(a.dtype for a in spec.args if a.is_buffer)
    return Example(entry_name(spec.entry), description, _BLANK_RUNS.sub("\n\n", code), dtypes,
                   spec_path)


def _is(path: Path, skip: Path | None) -> bool:
    """Whether `path` names the file `skip` (None: no file)."""
    return skip is not None and path.resolve() == skip.resolve()


def template_examples(folder: Path = TEMPLATES_DIR, skip: Path | None = None) -> list[Example]:
    """Every template kernel with its spec, but the one whose spec file is `skip`."""
    found = []
    for spec_path in sorted(folder.glob("*/*.toml")):
        if _is(spec_path, skip):
            continue
        example = _example(spec_path, _leading_comment(spec_path))
        if example is not None:
            found.append(example)
    return found


def _sha256(path: Path) -> str:
    """A file's SHA-256."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verified_examples(folder: Path | None = None, skip: Path | None = None) -> list[Example]:
    """The user's verified kernels: each folder holds a spec, its kernel and verified.json,
    whose source hash must still match the kernel (an edited kernel is no longer verified);
    not the one whose spec file is `skip`."""
    root = folder or verified_dir()
    found = []
    for record_path in sorted(root.glob(f"*/{RECORD_NAME}")):
        example = _verified(record_path, skip)
        if example is not None:
            found.append(example)
    return found


def _verified(record_path: Path, skip: Path | None = None) -> Example | None:
    """One verified kernel, or None when its record is unreadable, its kernel changed or its
    spec file is `skip`."""
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        spec_path = record_path.parent / str(record["spec"])
        if _is(spec_path, skip):
            return None
        example = _example(spec_path, str(record.get("description", "")))
        unchanged = example is not None and record.get("source_sha256") == _sha256(
            load_spec(example.path).source_path)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return example if unchanged else None


def record_verified(spec_path: Path, description: str, heldout: HeldOut,
                    folder: Path | None = None) -> Path | None:
    """Keep a kernel that just passed verification as a future example (a copy of its folder
    with verified.json); nothing for held-out tasks. The copy's folder, or None."""
    spec = load_spec(spec_path)
    if heldout.holds(spec_path) or heldout.leaks(f"{entry_name(spec.entry)} {description}"):
        return None
    source = spec.source_path
    if compiler_dependent(source.read_text(encoding="utf-8", errors="replace")):
        return None  # code no verification compiled rides along: never an example
    digest = _sha256(source)
    target = (folder or verified_dir()) / f"{entry_name(spec.entry)}-{digest[:12]}"
    if not target.exists():
        shutil.copytree(spec_path.parent, target, ignore=shutil.ignore_patterns("attempt.json"))
        record = {"spec": spec_path.name, "description": description, "source_sha256": digest}
        atomic_write_text(target / RECORD_NAME, json.dumps(record, indent=1) + "\n")
    return target


def score(example: Example, query: str, dtypes: set[str]) -> float:
    """How much an example is like a task: words of its name shared with the task (they say
    the most), then words of its description, plus a bonus per shared dtype."""
    asked = words(query)
    named = len(words(example.name.replace("_", " ")) & asked)
    described = len(words(example.description) & asked)
    if not named and not described:
        return 0.0
    return NAME_WEIGHT * named + described + DTYPE_BONUS * len(example.dtypes & dtypes)


def choose_examples(library: list[Example], spec: Spec, description: str, heldout: HeldOut,
                    counter: TokenCounter | None = None, limit: int = MAX_EXAMPLES,
                    budget: int = BUDGET_TOKENS) -> list[Example]:
    """The examples most like the task, best first, within `budget` tokens together; never the
    task's own kernel, never a held-out task's."""
    dtypes = {a.dtype for a in spec.args if a.is_buffer}
    name = entry_name(spec.entry)
    query = f"{name.replace('_', ' ')} {description}"
    allowed = [e for e in library if e.name != name and not heldout.holds(e.path)
               and not heldout.leaks(f"{e.name} {e.description}")]
    ranked = sorted(allowed, key=lambda e: (-score(e, query, dtypes), e.name))
    chosen: list[Example] = []
    used = 0
    for example in ranked:
        if score(example, query, dtypes) <= 0 or len(chosen) >= limit:
            break
        tokens = counter.count_tokens(example.text()) if counter else len(example.text()) // 4
        if used + tokens <= budget:
            chosen.append(example)
            used += tokens
    return chosen


def render_examples(examples: list[Example]) -> str:
    """The examples as one prompt section."""
    return "\n".join(e.text() for e in examples)


def library(include_user: bool = True, skip: Path | None = None) -> list[Example]:
    """Every example: the templates, then the user's verified kernels. `skip` is the spec
    file of the task asking (never its own example: choose_examples leaves it out by name),
    which is then not read again."""
    return (template_examples(skip=skip)
            + (verified_examples(skip=skip) if include_user else []))
