"""Skills: guidance documents for the model, in the open Agent Skills layout.

A skill is a folder whose SKILL.md starts with YAML front matter (`name` equal to the folder's
name, `description`, optional `license`, `compatibility`, `metadata`) followed by a Markdown body.
Kernel Studio reads the text only; it never runs a skill's scripts/. Skills come from
resources/skills and from the user's data folder (a user skill replaces a built-in one of the same
name), and are chosen per action by what the action and its context are about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.base.paths import RESOURCES, data_dir

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256 * 1024
# Name, description and a few fields fit in far less; the YAML reader is slow (about 1 s for
# 100 KiB), so a larger front matter is refused before it is read.
MAX_FRONT_MATTER = 16 * 1024
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
# Words too common in kernel talk to say what a skill is about.
_COMMON = frozenset("""the and for all any one two not are use can its has was but how per get
out new set when with that this from into used uses using about kernel kernels cuda each every
must have your code what which their them they then than also only more most write writing
should would could does need needs make makes over onto under like just""".split())


@dataclass(frozen=True)
class Skill:
    """One skill: its front matter and its Markdown body."""

    name: str
    description: str
    body: str
    path: Path
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def actions(self) -> tuple[str, ...]:
        """Actions this skill suits, from metadata 'actions' (space separated); () means any."""
        return tuple(self.metadata.get("actions", "").split())

    @property
    def references(self) -> list[Path]:
        """Optional documents in references/ (listed, not put into prompts)."""
        folder = self.path.parent / "references"
        return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []

    def prompt_text(self) -> str:
        """The skill as it appears in a prompt."""
        return f"### Skill: {self.name}\n{self.body.strip()}\n"


@dataclass(frozen=True)
class SkillProblem:
    """A skill folder that could not be used, and why."""

    path: Path
    message: str

    def __str__(self) -> str:
        """'path: message'."""
        return f"{self.path}: {self.message}"


class SkillError(ValueError):
    """A SKILL.md that does not follow the layout."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter (between '---' lines at the top) and the body after it."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillError("SKILL.md must start with YAML front matter between '---' lines")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            front = "".join(lines[1:index])
            if len(front) > MAX_FRONT_MATTER:
                raise SkillError(f"the front matter has {len(front)} characters; at most "
                                 f"{MAX_FRONT_MATTER} (put long text in the body)")
            try:
                data = yaml.safe_load(front) or {}
            except yaml.YAMLError as error:
                raise SkillError(f"the front matter is not valid YAML: {error}") from None
            except RecursionError:
                raise SkillError("the front matter nests too deeply to read") from None
            if not isinstance(data, dict):
                raise SkillError("the front matter must be a mapping of fields")
            return data, "".join(lines[index + 1:])
    raise SkillError("the front matter has no closing '---' line")


def _text_field(data: dict[str, Any], key: str, required: bool, limit: int) -> str:
    """A string field of the front matter, checked for presence, type and length."""
    value = data.get(key)
    if value is None:
        if required:
            raise SkillError(f"the front matter needs '{key}'")
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise SkillError(f"'{key}' must be a non-empty string")
    if len(value) > limit:
        raise SkillError(f"'{key}' has {len(value)} characters; at most {limit} are allowed")
    return value.strip()


def _check_name(name: str, folder: Path) -> None:
    """The name rules of the layout: lowercase words joined by hyphens, equal to the folder."""
    if not NAME_PATTERN.match(name):
        raise SkillError(f"name {name!r} must be lowercase letters and digits joined by hyphens")
    if name != folder.name:
        raise SkillError(f"name {name!r} must equal the folder's name {folder.name!r}")


def _metadata(data: dict[str, Any]) -> dict[str, str]:
    """The optional metadata mapping, as strings."""
    value = data.get("metadata") or {}
    if not isinstance(value, dict):
        raise SkillError("'metadata' must be a mapping")
    # Only scalars: a YAML alias can make a small list stand for an exponentially large one,
    # which str() would then write out.
    scalar = str | int | float | bool
    if not all(isinstance(k, scalar) and isinstance(v, scalar | None) for k, v in value.items()):
        raise SkillError("'metadata' must map names to text, as the Agent Skills layout says")
    return {str(k): str(v) for k, v in value.items()}


def load_skill(folder: Path) -> Skill:
    """Read and check one skill folder; SkillError says what is wrong."""
    path = folder / SKILL_FILE
    if path.stat().st_size > MAX_SKILL_BYTES:
        raise SkillError(f"SKILL.md is larger than {MAX_SKILL_BYTES // 1024} KiB")
    data, body = split_front_matter(path.read_text(encoding="utf-8"))
    name = _text_field(data, "name", True, MAX_NAME)
    _check_name(name, folder)
    return Skill(name=name, description=_text_field(data, "description", True, MAX_DESCRIPTION),
                 body=body, path=path, license=_text_field(data, "license", False, 200),
                 compatibility=_text_field(data, "compatibility", False, 500),
                 metadata=_metadata(data))


def skill_folders() -> list[Path]:
    """Where skills are looked for, built-in first (later folders override earlier ones)."""
    return [RESOURCES / "skills", data_dir() / "skills"]


def load_skills(folders: list[Path] | None = None) -> tuple[dict[str, Skill], list[SkillProblem]]:
    """Every usable skill by name, and the problems of those that could not be read."""
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for root in folders if folders is not None else skill_folders():
        for folder in sorted(p for p in root.glob("*") if (p / SKILL_FILE).is_file()):
            try:
                skill = load_skill(folder)
            except (SkillError, OSError, UnicodeDecodeError) as error:
                problems.append(SkillProblem(folder / SKILL_FILE, str(error)))
                continue
            skills[skill.name] = skill
    return skills, problems


def _stem(word: str) -> str:
    """A crude stem, enough to match 'vectors', 'vectorized' and 'vector'."""
    for suffix in ("ization", "ized", "izes", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def words(text: str) -> set[str]:
    """The distinctive word stems of a text, lowercased."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _COMMON}


def relevance(skill: Skill, action: str, context: str) -> float:
    """How well a skill fits an action and its context: words shared with the description count
    most, words shared with the body a little (capped), a listed action adds a bonus. 0 means the
    skill does not apply (its metadata lists other actions, or nothing matches)."""
    if skill.actions and action not in skill.actions:
        return 0.0
    found = words(context)
    described = len(words(skill.name.replace("-", " ") + " " + skill.description) & found)
    body = min(len(words(skill.body) & found), 10)
    if not described and not body:
        return 0.0
    return 3.0 * described + 0.5 * body + (2.0 if action in skill.actions else 0.0)


def choose_skills(skills: dict[str, Skill], action: str, context: str,
                  names: list[str] | None = None, limit: int = 2) -> list[Skill]:
    """The skills for one prompt: those named (unknown names raise KeyError), else the `limit`
    most relevant to the action and its context."""
    if names:
        missing = [n for n in names if n not in skills]
        if missing:
            raise KeyError(", ".join(missing))
        return [skills[n] for n in names]
    scored = sorted((-relevance(s, action, context), s.name) for s in skills.values())
    return [skills[name] for score, name in scored[:limit] if score < 0]
