"""Skills' SKILL.md front matter (app.assist.prompting.skills): skills arrive as files from
elsewhere;
any text is a skill or a SkillError, quickly, YAML's aliases and nesting included."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.assist.prompting.skills import SkillError, load_skill, split_front_matter
from tests.fuzz.bounds import bounded, grows_linearly

ATOMS = ["---\n", "name: ", "description: ", "metadata:\n", "  actions: ", "license: ", "x",
         "my-skill", "\n", " ", ":", "- ", "[", "]", "{", "}", "&a ", "*a", "!!python/object ",
         "'", '"', "|\n", "  ", "#", "\ufeff", "\t"]
TEXTS = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=60).map("".join),
                  st.text(max_size=300).map(lambda t: "---\n" + t))


def _load(text: str) -> object:
    """The skill as load_skill reads it from a folder named my-skill."""
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root) / "my-skill"
        folder.mkdir()
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        return load_skill(folder)


@given(TEXTS)
def test_any_skill_file_loads_or_is_refused(text: str) -> None:
    """Any SKILL.md gives a skill or a SkillError."""
    bounded(_load, text, (SkillError,))


def _bomb(levels: int) -> str:
    """Front matter whose metadata value is a YAML alias standing for 9**levels items."""
    lines = ["---", "name: my-skill", "description: d", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines + [f"metadata: {{actions: *a{levels - 1}}}", "---", "body"])


def test_an_alias_bomb_in_metadata_is_refused_at_once() -> None:
    """A few hundred bytes that str() would write out as 9**8 items."""
    result = bounded(_load, _bomb(8), (SkillError,), seconds=1.0)
    assert "'metadata' must map names to text" in result.message


@pytest.mark.parametrize("make", [lambda k: "---\nx: " + "[" * k + "]" * k + "\n---\n",
                                  lambda k: "---\n" + "a: b\n" * k + "---\n",
                                  lambda k: "---\n" + "x\n" * k,
                                  lambda k: "---\nname: " + "a" * k + "\n---\n"],
                         ids=["nesting", "long-front-matter", "unclosed", "long-name"])
def test_the_work_grows_linearly(make: object) -> None:
    """Four times the text costs about four times the work (large front matter is refused
    before YAML reads it)."""
    grows_linearly(lambda t: split_front_matter(t), make, 4000,  # type: ignore[arg-type]
                   (SkillError,))
