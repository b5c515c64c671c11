"""A save edits only what the spec model owns: a task's [task] table, tables and keys the model
does not know, and every comment survive, through the layout-keeping save and the plain one."""

from __future__ import annotations

import dataclasses
import shutil
import tomllib
from pathlib import Path

import pytest

from app.assist.tasks.suite import load_task
from app.base.paths import RESOURCES
from app.spec.edit import save_spec, save_spec_keeping_layout
from app.spec.model import Spec, load_spec

TASK = RESOURCES / "tasks" / "add_f32"
EXTRA = """
# the reviewer's own notes, kept by hand
[notes]
owner = "ana"   # who to ask
seen = [1, 2]

[[history]]
date = "2024-05-01"
"""


def task_copy(tmp_path: Path) -> Path:
    """A private copy of a real task spec with a table and an array of tables of the user's own
    and an extra key in [kernel] (written as a user would, after the task's own tables)."""
    folder = tmp_path / "add_f32"
    shutil.copytree(TASK, folder)
    path = folder / "add_f32.toml"
    text = path.read_text().replace('options = []\n', 'options = []\nnote = "keep me"  # mine\n')
    path.write_text(text + EXTRA)
    return path


def model_of(path: Path) -> Spec:
    """The spec model a pane would hold for the copy: the task's own spec, placed at `path`
    (app.spec.model refuses keys it does not know, so the copy's own text cannot be loaded)."""
    spec = load_spec(TASK / "add_f32.toml")
    return dataclasses.replace(spec, base_dir=path.parent, path=path)


def still_a_task(path: Path, description: str) -> None:
    """The saved file, without the user's extra tables and key, loads as the same task."""
    text = path.read_text().replace('note = "keep me"  # mine\n', "")
    clean = path.with_name("clean.toml")
    clean.write_text(text[:text.index("# the reviewer's own notes")])
    assert load_task(clean).description == description


@pytest.mark.parametrize("save", [save_spec_keeping_layout, save_spec],
                         ids=["keeping_layout", "plain"])
def test_a_save_keeps_task_unknown_tables_keys_and_comments(tmp_path: Path, save: object) -> None:
    path = task_copy(tmp_path)
    before = path.read_text()
    changed = dataclasses.replace(model_of(path), block=("128",), seeds=5, rtol=0.5)
    save(changed, path)  # type: ignore[operator]
    after = path.read_text()
    data, old = tomllib.loads(after), tomllib.loads(before)
    assert data["task"] == old["task"]
    assert data["notes"] == {"owner": "ana", "seen": [1, 2]}
    assert data["history"] == [{"date": "2024-05-01"}]
    assert data["kernel"]["note"] == "keep me"
    assert data["launch"]["block"] == ["128"] and data["verify"]["seeds"] == 5
    assert data["verify"]["rtol"] == 0.5
    for comment in ("# A task for the assistant", "# the reviewer's own notes",
                    "# who to ask", "# mine"):
        assert comment in after
    still_a_task(path, old["task"]["description"])


def test_a_field_the_spec_drops_is_removed_but_the_task_stays(tmp_path: Path) -> None:
    """Removing rtol (an owned key) still removes it; [task] and [notes] stay."""
    path = task_copy(tmp_path)
    path.write_text(path.read_text().replace("seeds = 2", "seeds = 2\nrtol = 0.1  # loose"))
    save_spec_keeping_layout(dataclasses.replace(model_of(path), rtol=None), path)
    data = tomllib.loads(path.read_text())
    assert "rtol" not in data["verify"] and "task" in data and "notes" in data
