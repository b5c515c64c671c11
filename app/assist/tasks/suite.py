"""The task suite of the assistant: specs with a [task] table (docs/spec.md), split into dev and
held-out tasks by resources/tasks/index.toml.

A task says in words what a kernel must compute (`description`), how hard it is (`level`: 1 maps,
2 reductions, scans, softmax, norms and transposes, 3 matmul, convolutions and fused ops) and,
optionally, `tags`. Its kernel source need not exist. Held-out tasks exist only to measure: they
never enter prompts (other than their own), examples, skills or training data; `HeldOut` finds
their traces in a text, so every way in can be checked.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.base.paths import RESOURCES
from app.spec.limits import loads_bounded
from app.spec.model import Spec, SpecError, load_spec

TASKS_DIR = RESOURCES / "tasks"
INDEX_NAME = "index.toml"
SPLITS = ("dev", "heldout")
LEVELS = (1, 2, 3)
MAX_DESCRIPTION = 2000
# A task's "own" dtype for grouping results: the first that is not float32, else float32.
PLAIN_DTYPE = "float32"


class TaskError(ValueError):
    """A task or suite that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Task:
    """One task: its spec, what it asks for in words, and where it belongs."""

    name: str
    spec_path: Path
    description: str
    level: int
    tags: tuple[str, ...] = ()
    split: str = ""
    dtypes: tuple[str, ...] = ()

    @property
    def dtype(self) -> str:
        """The dtype results are grouped by: the first buffer dtype other than float32."""
        return next((d for d in self.dtypes if d != PLAIN_DTYPE), PLAIN_DTYPE)

    @property
    def heldout(self) -> bool:
        """Whether this task only measures (never teaches)."""
        return self.split == "heldout"

    def spec(self) -> Spec:
        """The task's spec, parsed (TaskError when it is broken)."""
        try:
            return load_spec(self.spec_path)
        except SpecError as error:
            raise TaskError(f"task {self.name}: {error}") from None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        return {"name": self.name, "spec": str(self.spec_path), "level": self.level,
                "tags": list(self.tags), "split": self.split, "dtype": self.dtype}


def _read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's data; TaskError naming the file when it cannot be read."""
    try:
        return loads_bounded(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise TaskError(f"cannot read {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise TaskError(f"{path} is not valid TOML: {error}") from None


def _description(table: dict[str, Any], path: Path) -> str:
    """[task].description: words, not empty, not huge."""
    value = table.get("description")
    if not isinstance(value, str) or not value.strip():
        raise TaskError(f"{path}: [task].description must say in words what the kernel "
                        "computes")
    if len(value) > MAX_DESCRIPTION:
        raise TaskError(f"{path}: [task].description has {len(value)} characters; at most "
                        f"{MAX_DESCRIPTION}")
    return one_line(value)


def one_line(description: str) -> str:
    """A description as every prompt is given it: its whitespace runs, line breaks included,
    as one space (a Model's source in an imported problem too)."""
    return " ".join(description.split())


def _level(table: dict[str, Any], path: Path) -> int:
    """[task].level: 1, 2 or 3."""
    value = table.get("level")
    if isinstance(value, bool) or value not in LEVELS:
        raise TaskError(f"{path}: [task].level must be 1 (maps), 2 (reductions, scans, norms, "
                        f"transposes) or 3 (matmul, convolutions, fused), not {value!r}")
    return int(value)


def _tags(table: dict[str, Any], path: Path) -> tuple[str, ...]:
    """[task].tags: a list of words (optional)."""
    value = table.get("tags", [])
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise TaskError(f"{path}: [task].tags must be a list of words")
    return tuple(value)


def description_of(path: Path) -> str:
    """A spec's [task].description, or '' when it has none (or cannot be read)."""
    try:
        table = _read_toml(path).get("task")
        return _description(table, path) if isinstance(table, dict) else ""
    except TaskError:
        return ""


def description_in(spec: Spec) -> str:
    """The [task].description of a spec already read, or '' when it has none (description_of
    without reading the file again)."""
    try:
        table = spec.task
        return _description(dict(table), spec.path or Path()) if table is not None else ""
    except TaskError:
        return ""


def _task_fields(table: Any, path: Path) -> tuple[str, int, tuple[str, ...]]:
    """(description, level, tags) of a [task] table; TaskError when there is none or a field is
    wrong."""
    if not isinstance(table, dict):
        raise TaskError(f"{path} has no [task] table: a task is a spec with a [task] table "
                        "(description, level, optional tags)")
    return _description(table, path), _level(table, path), _tags(table, path)


def _task(path: Path, fields: tuple[str, int, tuple[str, ...]], split: str, spec: Spec) -> Task:
    """The task of a spec at `path` with its [task] fields."""
    dtypes = tuple(dict.fromkeys(a.dtype for a in spec.args if a.is_buffer))
    return Task(path.stem, path, *fields, split, dtypes)


def load_task(path: Path, split: str = "") -> Task:
    """Read one task spec; TaskError says what is wrong (the spec itself is checked too)."""
    fields = _task_fields(_read_toml(path).get("task"), path)
    try:
        spec = load_spec(path)
    except SpecError as error:
        raise TaskError(f"task {path.stem}: {error}") from None
    return _task(path, fields, split, spec)


def task_of(spec: Spec, path: Path, split: str = "") -> Task:
    """The task at `path` from its spec already read (load_task without reading it again)."""
    task = dict(spec.task) if spec.task is not None else None
    return _task(path, _task_fields(task, path), split, spec)


@dataclass(frozen=True)
class Suite:
    """Every task of a suite folder, in the index's order."""

    root: Path
    tasks: tuple[Task, ...]
    # Tasks that could not be loaded: (name, split, what is wrong).
    broken: tuple[tuple[str, str, str], ...] = ()

    def split(self, name: str) -> list[Task]:
        """The tasks of one split ('dev', 'heldout') or of all ('all')."""
        if name == "all":
            return list(self.tasks)
        if name not in SPLITS:
            raise TaskError(f"unknown split {name!r}: choose dev, heldout or all")
        return [t for t in self.tasks if t.split == name]

    def named(self, names: list[str]) -> list[Task]:
        """Tasks by name, in the order given; TaskError lists the unknown ones."""
        known = {t.name: t for t in self.tasks}
        missing = [n for n in names if n not in known]
        if missing:
            raise TaskError(f"unknown task(s): {', '.join(missing)} (see {self.root / INDEX_NAME})")
        return [known[n] for n in names]

    def broken_in(self, name: str) -> list[tuple[str, str]]:
        """(task, message) of the split's tasks that could not be loaded."""
        return [(task, message) for task, split, message in self.broken
                if name in ("all", split)]

    def heldout(self) -> HeldOut:
        """What held-out tasks look like, to keep them out of everything that teaches (a
        broken held-out task's name included)."""
        found = HeldOut.of([t for t in self.tasks if t.heldout])
        names = {n for n, split, _message in self.broken if split == "heldout"}
        return HeldOut(found.names | names, found.descriptions,
                       found.folders + tuple((self.root / n).resolve() for n in names))


def _index(root: Path) -> dict[str, list[str]]:
    """The index's splits: name -> task names; TaskError for overlaps and bad entries."""
    data = _read_toml(root / INDEX_NAME)
    splits: dict[str, list[str]] = {}
    for split in SPLITS:
        names = data.get(split, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TaskError(f"{root / INDEX_NAME}: {split} must be a list of task names")
        splits[split] = names
    both = set(splits["dev"]) & set(splits["heldout"])
    if both:
        raise TaskError(f"{root / INDEX_NAME}: in both dev and heldout: {', '.join(sorted(both))}")
    return splits


def _same_file(spec: Spec, path: Path) -> bool:
    """Whether `spec` was read from the file at `path`."""
    return spec.path is not None and spec.path.resolve() == path.resolve()


def load_suite(root: Path = TASKS_DIR, splits: tuple[str, ...] = SPLITS,
               known: Spec | None = None) -> Suite:
    """Every task of the index in `splits` (all by default), each folder `<name>/<name>.toml`.
    TaskError for a broken index or a task folder that the index does not list; a task that
    cannot be loaded is kept in `broken` with its message, so the others can still be used.
    `known` is a spec already read: when it is one of the tasks, its file is not read again."""
    index = _index(root)
    listed = {n: s for s, names in index.items() for n in names}
    folders = {p.name for p in root.iterdir() if p.is_dir() and (p / f"{p.name}.toml").exists()}
    unlisted = sorted(folders - set(listed))
    if unlisted:
        raise TaskError(f"{root / INDEX_NAME} does not list: {', '.join(unlisted)}; put each "
                        "task in dev or heldout")
    tasks, broken = [], []
    for name, split in ((n, s) for n, s in listed.items() if s in splits):
        path = root / name / f"{name}.toml"
        try:
            tasks.append(task_of(known, path, split) if known is not None and
                         _same_file(known, path) else load_task(path, split))
        except TaskError as error:
            broken.append((name, split, str(error)))
    return Suite(root, tuple(tasks), tuple(broken))


def load_heldout(root: Path = TASKS_DIR, known: Spec | None = None) -> HeldOut:
    """What the held-out tasks look like (Suite.heldout), reading only their specs (and not
    `known`, a spec already read, again)."""
    return load_suite(root, ("heldout",), known).heldout()


_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Shorter descriptions than this say too little to be recognised in another text.
MIN_PHRASE = 24


@dataclass(frozen=True)
class HeldOut:
    """The traces of held-out tasks: their names (kernel entries) and descriptions."""

    names: frozenset[str]
    descriptions: tuple[str, ...]
    folders: tuple[Path, ...]

    @classmethod
    def of(cls, tasks: list[Task]) -> HeldOut:
        """The traces of these tasks."""
        return cls(frozenset(t.name for t in tasks),
                   tuple(" ".join(t.description.lower().split()) for t in tasks),
                   tuple(t.spec_path.parent.resolve() for t in tasks))

    def leaks(self, text: str) -> list[str]:
        """The held-out tasks this text shows: a task name as a word, or a description."""
        words = set(_WORDS.findall(text))
        found = sorted(self.names & words)
        flat = " ".join(text.lower().split())
        found += [d[:40] + "..." for d in self.descriptions
                  if len(d) >= MIN_PHRASE and d in flat]
        return found

    def holds(self, path: Path) -> bool:
        """Whether a file or folder lies inside a held-out task's folder."""
        resolved = path.resolve()
        return any(resolved == f or resolved.is_relative_to(f) for f in self.folders)
