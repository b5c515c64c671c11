"""A kernel of two launches as a person works on it (spec version 2): open two_pass_sum, Verify
(it passes on the CPU backend), plant a bug in the second kernel without saving, Verify: Results
names the launch that failed, readable without widening a column; undo, Verify: it passes. Real
window, real CPU backend, real worker."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from ui.main_window import MainWindow

FINISH = "if (threadIdx.x == 0) total[0] = value;"
BUG = "if (threadIdx.x == 0) total[1 << 20] = value;"  # far past the one-element output
FAILED_LAUNCH = "launch 2 of 2 (finish_sum)"


def verify_now(qtbot: Any, window: MainWindow) -> Verdict:
    """Press Verify and wait for the verdict the window shows."""
    with qtbot.waitSignal(window.runner.verified, timeout=180_000) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict)
    return verdict


def test_a_bug_in_the_second_launch_is_named_by_its_launch_and_undone(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    folder = tmp_path / "two_pass_sum"
    shutil.copytree(RESOURCES / "kernels" / "two_pass_sum", folder)
    source = folder / "two_pass_sum.cu"
    window.runner.set_backend("cpu")
    editor = window.open_files([source])[0]
    assert len(window.spec_panel.launches.editors) == 2
    assert verify_now(qtbot, window).status == "passed"

    text = editor.text()
    assert FINISH in text
    editor.replace_text_undoably(text.replace(FINISH, BUG, 1))
    verdict = verify_now(qtbot, window)
    assert verdict.status == "crash" and FINISH in source.read_text()  # the unsaved text ran
    results = window.results_pane
    assert results.status() == "CRASH" and FAILED_LAUNCH in results.message.text()
    runs = results.runs
    row = results.selected_run()
    assert row >= 0 and runs.item(row, 4).text().startswith(FAILED_LAUNCH)
    assert FAILED_LAUNCH in results.details.toPlainText()
    # The failing launch shows as the pane is laid out: the message column starts within the
    # table's view, with room for the launch's name.
    window.show_pane("results")
    qtbot.waitUntil(runs.isVisible, timeout=5000)
    start = runs.columnViewportPosition(4)
    room = min(runs.columnWidth(4), runs.viewport().width() - start)
    assert start >= 0 and runs.fontMetrics().horizontalAdvance(FAILED_LAUNCH + ":") < room

    editor.undo()
    assert editor.text() == text
    assert verify_now(qtbot, window).status == "passed"
