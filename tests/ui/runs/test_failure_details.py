"""Issue 17, point 6: failure details that are right. Largest errors say when they are
unbounded, the message column is filled, the selected row and the details agree after a new
run, and a timeout shows the time limit it ran into. Real runs in the real window (the engine's
selftest backend runs named behaviours in a real worker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gui_support import selftest_kernel
from PySide6.QtCore import Qt

from app.engine.verify.results import Finding, Status, Verdict
from app.review.result_text import finding_text, gui_words, run_details
from ui.main_window import MainWindow


def verify_and_wait(qtbot: Any, window: MainWindow) -> Verdict:
    """Verify the current kernel with the selftest backend; the verdict."""
    window.runner.set_backend("selftest")
    with qtbot.waitSignal(window.runner.verified, timeout=60000) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict)
    return verdict


def cells(window: MainWindow, column: int) -> list[str]:
    """One column of the Results pane's runs table."""
    table = window.results_pane.runs
    return [table.item(row, column).text() for row in range(table.rowCount())]


def test_an_infinite_error_is_called_unbounded_and_messages_are_filled(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "inf", "copy", "return {'c': a / 0.0}")])
    verdict = verify_and_wait(qtbot, window)
    assert verdict.status == Status.MISMATCH
    details = window.results_pane.details.toPlainText()
    assert "largest error: unbounded (an Inf or NaN where the reference" in details
    assert "absolute 0" not in details and "relative 0" not in details
    messages = cells(window, 4)
    assert all(message.startswith("c: ") for message in messages), messages


def test_the_selected_row_and_the_details_agree_after_each_run(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    source = selftest_kernel(tmp_path / "sel", "copy", "return {'c': a + (n > 1) * 1.0}")
    window.open_files([source])
    pane = window.results_pane
    first = verify_and_wait(qtbot, window)
    failing = next(row for row, run in enumerate(first.runs) if not run.passed)
    assert failing > 0  # n = 1 passes: the first failure is not the first row
    qtbot.waitUntil(lambda: pane.selected_run() == failing, timeout=10_000)
    assert pane.details.toPlainText() == run_details(first.runs[failing], pane.time_limit())
    pane.select_run(0)
    assert pane.details.toPlainText().startswith("case {n=1}, seed")
    source.with_name("ref.py").write_text("def reference(a, n):\n    return {'c': a}\n")
    second = verify_and_wait(qtbot, window)
    assert second.status == Status.PASSED
    assert pane.selected_run() == -1
    assert pane.details.toPlainText() == "Every run passed."


def test_a_timeout_shows_the_time_limit_it_ran_into(qtbot: Any, window: MainWindow,
                                                    tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "hang", "hang")])
    window.runner.timeout = 1.5
    verdict = verify_and_wait(qtbot, window)
    assert verdict.status == Status.TIMEOUT
    assert cells(window, 3)[0] == "> 1.5 (limit)"
    assert cells(window, 4)[0]  # the engine's words about the kill
    assert "The time limit is 1.5 s per launch" in window.results_pane.details.toPlainText()


def test_finite_errors_and_command_line_words() -> None:
    finding = Finding(Status.MISMATCH, "c", "3 elements differ", 3, 10, [[1]], [1.0], [2.0],
                      1.0, 0.5)
    assert "largest errors: absolute 1, relative 0.5" in finding_text(finding)
    assert gui_words("rerun with --backend cpu") == "rerun with Run > Backend > cpu"


def test_the_first_failure_is_selected_just_after_a_ctrl_key(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """A verdict arriving just after a Ctrl+key (Qt then still reports Ctrl as held) selects its
    first failing run; it used to toggle the row, leaving nothing selected."""
    source = selftest_kernel(tmp_path / "ctrl", "copy", "return {'c': a + (n > 1) * 1.0}")
    editor = window.open_files([source])[0]
    with qtbot.waitSignal(window.buildFinished, timeout=120_000):
        qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    verdict = verify_and_wait(qtbot, window)
    failing = next(row for row, run in enumerate(verdict.runs) if not run.passed)
    assert window.results_pane.selected_run() == failing
