"""Each pane shows the active tab's own, current state, or says it has none (issue 25, point 4):
a refusal to time never sits under another kernel's verdict, a tab that never ran shows no
earlier run's rows or times, a cancelled or running job shows no earlier rows, a clean compile
clears old annotations, the SASS line bar names no other build's line, and the Spec pane's
spec-check says nothing about a spec with problems."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from ui.main_window import MainWindow


def verify_now(qtbot: Any, window: MainWindow) -> Verdict:
    """Press Verify and wait for the verdict."""
    with qtbot.waitSignal(window.runner.verified, timeout=180_000) as blocker:
        assert window.verify()
    return blocker.args[0]


def template(tmp_path: Path, name: str) -> Path:
    """A private copy of a template; its .cu path."""
    target = tmp_path / "kernels" / name
    shutil.copytree(RESOURCES / "kernels" / name, target)
    return target / f"{name}.cu"


def test_a_refused_bench_and_a_fresh_tab_show_only_their_own(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    pane = window.results_pane
    window.runner.set_backend("cpu")
    window.open_files([template(tmp_path, "vector_add")])
    assert verify_now(qtbot, window).status == "passed" and pane.runs.rowCount() > 0
    window.open_files([template(tmp_path, "saxpy")])  # never verified
    assert pane.runs.rowCount() == 0 and not pane.stages.label.text()
    with qtbot.waitSignal(window.runner.benched, timeout=180_000) as blocker:
        assert window.bench()
    assert blocker.args[0].status == "unverified"  # no GPU: not timed
    assert pane.badge.text() == "NOT TIMED" and pane.runs.rowCount() == 0
    assert "PASSED" not in pane.badge.text()
    window.tabs.setCurrentIndex(0)  # vector_add: its own verdict again
    assert pane.badge.text() == "PASSED" and pane.runs.rowCount() > 0
    pane.show_failure("cancelled")
    assert pane.badge.text() == "CANCELLED" and pane.runs.rowCount() == 0
    pane.show_running("Verifying\u2026")
    assert pane.runs.rowCount() == 0 and not pane.details.toPlainText()


def test_a_clean_verify_clears_old_annotations_and_the_sass_bar_forgets_other_lines(
        qtbot: Any, window: MainWindow, kernel_copy: Path, tmp_path: Path) -> None:
    window.runner.set_backend("cpu")
    editor = window.open_files([kernel_copy])[0]
    text = editor.text()
    editor.replace_text_undoably(text.replace("c[i] = a[i] + b[i];", "c[i] = a[i] + q;"))
    with qtbot.waitSignal(window.buildFinished, timeout=120_000):
        qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert editor.diagnostic_lines()
    editor.replace_text_undoably(text)
    assert verify_now(qtbot, window).status == "passed"
    assert not editor.diagnostic_lines()
    with qtbot.waitSignal(window.buildFinished, timeout=120_000):
        qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    line = next(n for n in range(1, editor.lineCount() + 1) if "c[i] =" in editor.line_text(n))
    window.assembly_view.select_source_line(line)
    assert f"Line {line}" in window.assembly_view.line_label.text()
    window.open_files([template(tmp_path, "saxpy")])
    assert f"Line {line}" not in window.assembly_view.line_label.text()


def test_spec_check_says_nothing_of_a_spec_with_problems(window: MainWindow,
                                                         kernel_copy: Path) -> None:
    panel = window.spec_panel
    panel.load(kernel_copy.with_suffix(".toml"))
    panel.check_label.setText("Spec check: strong (every impostor is caught)")  # an old answer
    panel.cases.setPlainText("n = = 3")
    assert panel.validate_now()
    assert "strong" not in panel.check_label.text() and "problems" in panel.check_label.text()
    assert not panel.check_list.isVisibleTo(panel)
