"""Issue 17, point 2: results say when the buffer changed since they were obtained, and follow
the active tab (a tab switched away and back shows its own results, still marked stale)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gui_support import selftest_kernel
from selftest_spec import BENCH

from app.engine.verify.results import Verdict
from ui.main_window import MainWindow


def test_results_are_marked_stale_after_an_edit_and_fresh_after_a_new_run(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    first = selftest_kernel(tmp_path / "one", "copy")
    second = selftest_kernel(tmp_path / "two", "copy")
    editor = window.open_files([first])[0]
    window.runner.set_backend("selftest")
    with qtbot.waitSignal(window.runner.verified, timeout=120_000) as blocker:
        assert window.verify()
    assert isinstance(blocker.args[0], Verdict)
    pane = window.results_pane
    assert not pane.stale.isVisibleTo(pane)
    editor.setTargetRange(0, 0)
    editor.replaceTarget(-1, "// an edit after the run\n")
    assert pane.stale.isVisibleTo(pane)
    window.open_files([second])  # another tab: its own (no) results, nothing stale
    assert not pane.stale.isVisibleTo(pane) and pane.badge.text() == "NOT RUN"
    window.tabs.setCurrentIndex(0)  # back: the verdict again, still stale
    assert pane.badge.text() == "PASSED" and pane.stale.isVisibleTo(pane)
    with qtbot.waitSignal(window.runner.verified, timeout=120_000):
        assert window.verify()
    assert not pane.stale.isVisibleTo(pane)


def test_the_charts_follow_the_active_tab(qtbot: Any, window: MainWindow,
                                          tmp_path: Path) -> None:
    first = selftest_kernel(tmp_path / "one", "copy", bench=BENCH)
    second = selftest_kernel(tmp_path / "two", "copy")
    window.open_files([first])
    window.runner.set_backend("selftest")
    with qtbot.waitSignal(window.runner.benched, timeout=120_000) as blocker:
        assert window.bench()
    assert blocker.args[0].status == "timed", blocker.args[0].describe()
    charts = window.charts()
    assert charts.pages.currentWidget() is not charts.empty  # the samples are drawn
    window.open_files([second])
    assert charts.pages.currentWidget() is charts.empty
    assert "No timing for" in charts.empty.text()
    window.tabs.setCurrentIndex(0)
    assert charts.pages.currentWidget() is not charts.empty
