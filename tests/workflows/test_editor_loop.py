"""The editor loop as a person runs it all day (issue 25, point 1): edit without saving, Verify,
edit again, Verify again, a bug caught, Save, edit, Verify; another kernel's tab and back. Real
window, real CPU backend, real sandbox where one can be had."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from ui.editor.cuda_editor import CudaEditor
from ui.main_window import MainWindow

SUM_LINE = "c[i] = a[i] + b[i];"


def verify_now(qtbot: Any, window: MainWindow) -> Verdict:
    """Press Verify and wait for the verdict the window shows."""
    with qtbot.waitSignal(window.runner.verified, timeout=180_000) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict)
    return verdict


def edit(editor: CudaEditor, old: str, new: str) -> None:
    """Change the buffer's text as typing would (undoable), without saving."""
    text = editor.text()
    assert old in text
    editor.replace_text_undoably(text.replace(old, new, 1))


def test_unsaved_edits_verify_again_and_again_then_save_and_switch(
        qtbot: Any, window: MainWindow, kernel_copy: Path, tmp_path: Path) -> None:
    window.runner.set_backend("cpu")
    editor = window.open_files([kernel_copy])[0]
    statuses = []
    for n in range(5):
        edit(editor, SUM_LINE, f"{SUM_LINE} // edit {n}" if n != 2 else "c[i] = a[i] - b[i];")
        statuses.append(verify_now(qtbot, window).status)
        if n == 2:
            edit(editor, "c[i] = a[i] - b[i];", SUM_LINE)
        else:
            edit(editor, f"{SUM_LINE} // edit {n}", SUM_LINE)
    assert statuses == ["passed", "passed", "mismatch", "passed", "passed"]
    assert SUM_LINE in kernel_copy.read_text() and editor.is_modified()

    edit(editor, SUM_LINE, f"{SUM_LINE} // saved")
    assert window.tabs.save(editor) and "// saved" in kernel_copy.read_text()
    assert verify_now(qtbot, window).status == "passed"
    edit(editor, "// saved", "// unsaved again")
    assert verify_now(qtbot, window).status == "passed"

    other = tmp_path / "kernels" / "saxpy"
    shutil.copytree(RESOURCES / "kernels" / "saxpy", other)
    window.open_files([other / "saxpy.cu"])
    saxpy = verify_now(qtbot, window)
    assert saxpy.status == "passed" and window.runner.last_spec.name == "saxpy.toml"
    window.tabs.setCurrentIndex(window.tabs.indexOf(editor))
    back = verify_now(qtbot, window)
    assert back.status == "passed" and window.runner.last_spec.name == "vector_add.toml"
    window.spec_panel.cases.setPlainText("n = 7")  # an unsaved Spec-pane edit runs too
    assert [run.case for run in verify_now(qtbot, window).runs][0] == {"n": 7}
