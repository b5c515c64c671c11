"""Issue 25, point 12: the PTX / SASS pane's arch picker and SASS diff in the real window, with
real builds through the job process: picking an architecture rebuilds the text for it and the
header says so (the Settings' arch unchanged); Build > SASS diff compares with another
architecture or another tab's kernel, with counts and marked lines; Escape leaves the diff."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction

from ui.assembly.view import AssemblyView
from ui.main_window import MainWindow

SUMMARY = re.compile(r"^(\d+) instructions? added, (\d+) removed, (\d+) unchanged$")
ADD = "c[i] = a[i] + b[i];"


@pytest.fixture
def built(qtbot: Any, window: MainWindow, kernel_copy: Path) -> AssemblyView:
    """vector_add built in the window for the Settings' arch, the pane in front, NVRTC's
    architectures in the picker."""
    window.open_files([kernel_copy])
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        assert window.build()
    assert blocker.args[0]["ok"]
    window.show_pane("assembly")
    view = window.assembly_view
    qtbot.waitUntil(lambda: view.arch_box.loaded, timeout=60000)
    return view


def diff_action(view: AssemblyView, name: str) -> QAction:
    """An entry of the pane's Diff menu, as it is when it opens."""
    view.diff_menu.aboutToShow.emit()
    action = view.diff_menu.findChild(QAction, name)
    assert action is not None, [a.objectName() for a in view.diff_menu.actions()]
    return action


def choose(view: AssemblyView, name: str) -> None:
    """Choose an entry of the open Diff menu."""
    assert view.diff_menu.isVisible()
    diff_action(view, name).trigger()
    view.diff_menu.hide()


def wait_for_diff(qtbot: Any, view: AssemblyView) -> tuple[int, int, int]:
    """Wait until the diff is shown; its counts as the summary says them."""
    qtbot.waitUntil(lambda: not view.diff_pending(), timeout=120000)
    match = SUMMARY.match(view.diff_view.summary.text())
    assert match, view.diff_view.summary.text()
    added, removed, unchanged = map(int, match.groups())
    return added, removed, unchanged


def test_picking_an_arch_rebuilds_for_it_and_the_header_says_which(
        qtbot: Any, window: MainWindow, built: AssemblyView) -> None:
    view = built
    default = view.arch
    assert default and view.header_label.text() == f"SASS and PTX for {default}"
    assert len(view.arch_box.archs) > 1 and view.arch_box.currentText() == default
    before = view.sass_view.toPlainText()
    view.arch_box.setFocus()
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        qtbot.keyClick(view.arch_box, Qt.Key.Key_Home)  # the oldest architecture NVRTC has
    picked = view.arch_box.archs[0]
    assert picked != default and blocker.args[0]["arch"] == picked
    assert view.arch == picked and view.arch_box.currentText() == picked
    assert view.header_label.text().startswith(f"SASS and PTX for {picked} (picked here")
    assert view.sass_view.toPlainText() != before
    assert window.runner.arch is None  # the Settings' arch (this machine's default) is kept
    with qtbot.waitSignal(window.buildFinished, timeout=120000):
        assert window.build()  # Build still builds for the Settings' arch
    assert view.header_label.text() == f"SASS and PTX for {default}"


def test_the_diff_against_another_arch_counts_and_marks_and_escape_leaves(
        qtbot: Any, window: MainWindow, built: AssemblyView) -> None:
    view = built
    shown = view.arch
    other = next(arch for arch in view.arch_box.archs if arch != shown)
    window.actions_by_name["sass_diff"].trigger()  # Build > SASS diff: the pane's menu opens
    qtbot.waitUntil(view.diff_menu.isVisible, timeout=5000)
    diff_action(view, f"diff_arch_{other}").trigger()
    view.diff_menu.hide()
    assert view.in_diff()
    added, removed, unchanged = wait_for_diff(qtbot, view)
    instructions = sum(1 for row in view.rows if not row.text.endswith(":"))
    assert unchanged > 0 and added + removed > 0 and unchanged + removed <= instructions
    marked = view.diff_view.marked_lines()
    assert len(marked) == added + removed
    assert sum(text.startswith("- ") for text in marked.values()) == removed
    assert sum(text.startswith("+ ") for text in marked.values()) == added
    assert view.diff_view.title.text() == f"vector_add: {shown} (\u2212) against {other} (+)"
    assert view.arch == shown  # the diff's build is not the tab's build
    view.diff_view.listing.setFocus()
    qtbot.keyClick(view.diff_view.listing, Qt.Key.Key_Escape)
    assert not view.in_diff()
    assert view.header_label.text() == f"SASS and PTX for {shown}"


def test_the_diff_against_another_tab_shows_the_changed_op(
        qtbot: Any, window: MainWindow, built: AssemblyView, kernel_copy: Path,
        tmp_path: Path) -> None:
    view = built
    folder = tmp_path / "variant"
    shutil.copytree(kernel_copy.parent, folder)
    variant = folder / "vector_add.cu"
    variant.write_text(kernel_copy.read_text(encoding="utf-8").replace(
        ADD, "c[i] = a[i] * b[i];"), encoding="utf-8")
    window.open_files([variant])
    window.tabs.setCurrentIndex(0)  # back to the built template
    qtbot.waitUntil(lambda: bool(view.rows), timeout=5000)
    # The pane's Diff button opens its menu (a nested event loop until it closes): choose the
    # variant's tab in it, not built yet, so built now.
    QTimer.singleShot(0, lambda: choose(view, "diff_tab_0"))
    view.diff_button.click()
    added, removed, _ = wait_for_diff(qtbot, view)
    assert (added, removed) == (1, 1)
    marked = sorted(view.diff_view.marked_lines().values())
    assert [text.split("*/", 1)[1].split()[0] for text in marked] == ["FMUL", "FADD"]
