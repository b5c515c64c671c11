"""Skills follow the Agent Skills layout; the shipped ones are valid, broken ones are reported
(not fatal), and a user's skill replaces a built-in one of the same name."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.assist.prompting.skills import (
    MAX_DESCRIPTION,
    NAME_PATTERN,
    SkillError,
    choose_skills,
    load_skill,
    load_skills,
    skill_folders,
    split_front_matter,
)
from app.base.paths import RESOURCES

REQUIRED = {"indexing-and-bounds", "coalescing-and-vectorized-loads", "shared-memory-tiling",
            "warp-reductions-and-atomics"}


def write_skill(root: Path, folder: str, front: str, body: str = "# Body\ntext\n") -> Path:
    """A skill folder with the given front matter text."""
    path = root / folder
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(f"---\n{front}\n---\n{body}")
    return path


def test_the_shipped_skills_are_valid_and_cover_the_four_topics() -> None:
    skills, problems = load_skills([RESOURCES / "skills"])
    assert problems == []
    assert REQUIRED <= set(skills)
    for skill in skills.values():
        assert NAME_PATTERN.match(skill.name) and skill.path.parent.name == skill.name
        assert 0 < len(skill.description) <= MAX_DESCRIPTION
        assert len(skill.body.split()) > 200, f"{skill.name} is too thin to teach anything"
        assert "```cuda" in skill.body or skill.name == "nvrtc-compile-errors"


def test_front_matter_is_split_from_the_body() -> None:
    data, body = split_front_matter("---\nname: a\ndescription: b\n---\n# Title\n")
    assert data == {"name": "a", "description": "b"} and body == "# Title\n"


@pytest.mark.parametrize(("folder", "front", "message"), [
    ("good", "description: no name", "needs 'name'"),
    ("Bad_Name", "name: Bad_Name\ndescription: x", "lowercase"),
    ("other", "name: elsewhere\ndescription: x", "must equal the folder"),
    ("long", "name: long\ndescription: " + "x" * 1025, "at most 1024"),
    ("empty", "name: empty\ndescription: ''", "non-empty"),
    ("list", "- just\n- a list", "mapping"),
])
def test_broken_skills_are_refused_with_the_reason(tmp_path: Path, folder: str, front: str,
                                                   message: str) -> None:
    path = write_skill(tmp_path, folder, front)
    with pytest.raises(SkillError, match=message):
        load_skill(path)


def test_a_file_without_front_matter_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "SKILL.md").write_text("# just markdown\n")
    with pytest.raises(SkillError, match="front matter"):
        load_skill(tmp_path / "plain")


def test_broken_skills_are_listed_as_problems_and_the_rest_load(tmp_path: Path) -> None:
    write_skill(tmp_path, "fine", "name: fine\ndescription: works")
    write_skill(tmp_path, "broken", "name: [unclosed\ndescription: x")
    skills, problems = load_skills([tmp_path])
    assert list(skills) == ["fine"]
    assert len(problems) == 1 and "broken" in str(problems[0].path)


def test_a_user_skill_overrides_a_built_in_one(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(tmp_path))
    write_skill(tmp_path / "skills", "indexing-and-bounds",
                "name: indexing-and-bounds\ndescription: my own rules for indices",
                "# Mine\nAlways use int64 indices.\n")
    assert skill_folders()[-1] == tmp_path / "skills"
    skills, _ = load_skills()
    assert "int64" in skills["indexing-and-bounds"].body
    assert len(skills) >= len(REQUIRED)


def test_optional_fields_and_references_are_read_but_scripts_never_run(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "full", "name: full\ndescription: all fields\nlicense: MIT\n"
                       "compatibility: any\nmetadata:\n  actions: optimize explain")
    (path / "references").mkdir()
    (path / "references" / "notes.md").write_text("notes")
    (path / "scripts").mkdir()
    marker = tmp_path / "ran"
    (path / "scripts" / "run.py").write_text(f"open({str(marker)!r}, 'w')")
    skill = load_skill(path)
    assert skill.license == "MIT" and skill.actions == ("optimize", "explain")
    assert skill.references == [path / "references" / "notes.md"]
    assert not marker.exists()


def test_a_skill_for_other_actions_is_not_chosen(tmp_path: Path) -> None:
    write_skill(tmp_path, "only-optimize", "name: only-optimize\ndescription: matrices fast\n"
                "metadata:\n  actions: optimize")
    skills, _ = load_skills([tmp_path])
    assert choose_skills(skills, "propose", "multiply matrices") == []
    assert [s.name for s in choose_skills(skills, "optimize", "multiply matrices")] == [
        "only-optimize"]
