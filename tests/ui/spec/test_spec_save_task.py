"""Saving a task spec through the real Spec pane keeps its [task] table (the task still loads),
a table of the user's own, and the file's comments."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from app.assist.tasks.suite import load_task
from app.base.paths import RESOURCES
from ui.main_window import MainWindow

KERNEL = ('extern "C" __global__ void add_f32(const float* a, const float* b, float* c, int n)'
          " { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }\n")
NOTES = '\n# my notes on this task\n[notes]\nowner = "ana"  # ask her\n'


def test_saving_a_task_from_the_pane_keeps_task_and_other_tables(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    folder = tmp_path / "add_f32"
    shutil.copytree(RESOURCES / "tasks" / "add_f32", folder)
    path = folder / "add_f32.toml"
    (folder / "add_f32.cu").write_text(KERNEL)  # the kernel the user writes for the task
    before = tomllib.loads(path.read_text())
    panel = window.spec_panel
    assert panel.load(path)
    panel.fields["block"].setText("128")
    panel.fields["grid"].setText("cdiv(n, 128)")
    assert panel.validate_now() == [] and panel.save()
    saved = path.read_text()
    assert tomllib.loads(saved)["task"] == before["task"]
    assert tomllib.loads(saved)["launch"]["block"] == ["128"]
    assert saved.startswith("# A task for the assistant")
    assert load_task(path).description == before["task"]["description"]
    path.write_text(saved + NOTES)  # a table the spec model does not know, added by hand
    assert panel.load(path)
    panel.fields["block"].setText("64")
    panel.fields["grid"].setText("cdiv(n, 64)")
    assert panel.validate_now() == [] and panel.save()
    again = path.read_text()
    assert tomllib.loads(again)["notes"] == {"owner": "ana"} and "# ask her" in again
    assert tomllib.loads(again)["task"] == before["task"]
