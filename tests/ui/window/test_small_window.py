"""Issue 25, point 14 (the layout): at 800x500 the editor keeps a usable share of the window,
and no pane takes half of it (the Spec pane used to take more than half the width)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ui.main_window import MainWindow


def content_height(window: MainWindow) -> int:
    """The height between the toolbar and the status bar, where the editor and docks live."""
    top = window.centralWidget().geometry().top()
    return window.statusBar().geometry().top() - top


def shares(window: MainWindow) -> tuple[float, float]:
    """(editor height over the content's height, Spec dock width over the window's width)."""
    editor = window.tabs.current()
    assert editor is not None
    return (editor.height() / content_height(window),
            window.docks["spec"].width() / window.width())


def test_at_800_by_500_the_editor_keeps_its_share(qtbot: Any, window: MainWindow,
                                                  kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    window.resize(800, 500)
    qtbot.waitUntil(lambda: window.width() == 800 and window.height() == 500, timeout=5000)
    qtbot.waitUntil(lambda: shares(window)[1] <= 1 / 3 + 0.01, timeout=5000)
    editor_share, spec_share = shares(window)
    assert editor_share >= 0.4, editor_share
    assert spec_share <= 1 / 3 + 0.01, spec_share
    editor = window.tabs.current()
    assert editor is not None
    assert editor.width() >= 0.55 * window.width()
    assert editor.height() // editor.textHeight(0) >= 9  # lines of code, not three


def test_the_panes_fit_a_third_of_800_pixels(qtbot: Any, window: MainWindow) -> None:
    """No pane of the right-hand column is wider at its narrowest than a third of 800 px."""
    for name in ("spec", "assembly", "assistant"):
        assert window.docks[name].minimumSizeHint().width() <= 800 // 3, name
