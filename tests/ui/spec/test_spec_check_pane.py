"""The Spec pane says whether the spec can catch wrong kernels, as you edit (spec-check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ui.main_window import MainWindow

CHECK_MS = 300_000  # a bound for a wedged check, not a speed goal: a loaded machine is slow


def test_the_pane_finds_a_spec_weak_as_it_is_edited_without_writing_it(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    spec_path = kernel_copy.with_suffix(".toml")
    before = spec_path.read_text()
    window.open_files([kernel_copy])
    panel = window.spec_panel
    qtbot.waitUntil(lambda: panel.check_label.text().startswith("Spec check: strong"),
                    timeout=CHECK_MS)
    assert not panel.check_list.isVisible()
    panel.cases.setPlainText("n = 1")  # one element: a kernel writing only c[0] would pass
    qtbot.waitUntil(lambda: panel.check_label.text().startswith("Spec check: weak"),
                    timeout=CHECK_MS)
    lines = [panel.check_list.item(i).text() for i in range(panel.check_list.count())]
    assert any("first element" in line for line in lines), lines
    assert spec_path.read_text() == before  # the unsaved edit was checked in a private copy


def test_a_spec_with_problems_is_not_checked(qtbot: Any, window: MainWindow,
                                             kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    panel = window.spec_panel
    qtbot.waitUntil(lambda: panel.check_label.text().startswith("Spec check: strong"),
                    timeout=CHECK_MS)
    panel.fields["grid"].setText("cdiv(n,")
    assert panel.validate_now() != []
    assert panel.checker._process is None and not panel._check_timer.isActive()
