"""Issue 25, point 14 (Compare): the source diff is readable in every theme, the marked lines'
backgrounds at least 4.5:1 (WCAG AA) against the text, and the sources get the pane's height
rather than three lines of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtGui import QColor, QPalette

from ui.compare.compare_view import CompareView
from ui.compare.sources_view import SourcePane
from ui.theme import ThemeManager, available_themes, contrast_ratio

BASE = "\n".join(f"    float x{i} = a[{i}] * 2.0f;" for i in range(40))
VARIANT = BASE.replace("x3 = a[3]", "x3 = b[3]").replace("x7 = a[7]", "x7 = c[7]")


@pytest.fixture
def themed() -> Iterator[ThemeManager]:
    """The application's theme manager; the default theme back afterwards."""
    themes = ThemeManager()
    yield themes
    themes.apply("dark")


def marked_background(pane: SourcePane) -> QColor:
    """The background the pane gives its marked lines (every marked line has the same)."""
    selections = pane.view.extraSelections()
    assert selections and len(selections) == len(pane.marked)
    return QColor(selections[0].format.background().color())


@pytest.mark.parametrize("theme", available_themes())
def test_marked_lines_contrast_with_the_text(qtbot: Any, themed: ThemeManager,
                                             theme: str) -> None:
    themed.apply(theme)
    view = CompareView()
    qtbot.addWidget(view)
    view.sources.show_sources([("base", BASE), ("variant", VARIANT)])
    for pane in view.sources.panes:
        text = pane.view.palette().color(QPalette.ColorRole.Text)
        ratio = contrast_ratio(marked_background(pane), text)
        assert ratio >= 4.5, (theme, pane.title.text(), ratio)
    assert view.sources.panes[0].marked == [4, 8]


def test_a_theme_change_recolours_the_marked_lines(qtbot: Any, themed: ThemeManager) -> None:
    themed.apply("light")
    view = CompareView()
    qtbot.addWidget(view)
    view.sources.show_sources([("base", BASE), ("variant", VARIANT)])
    pane = view.sources.panes[1]
    light = marked_background(pane)
    themed.apply("dark")
    qtbot.waitUntil(lambda: marked_background(pane) != light, timeout=2000)
    assert contrast_ratio(marked_background(pane),
                          pane.view.palette().color(QPalette.ColorRole.Text)) >= 4.5


def test_sources_get_the_panes_height(qtbot: Any) -> None:
    view = CompareView()
    qtbot.addWidget(view)
    view.resize(900, 250)  # a bottom pane of the window at its default size
    view.show()
    qtbot.waitExposed(view)
    view.sources.show_sources([("base", BASE), ("variant", VARIANT)])
    pane = view.sources.panes[0]
    qtbot.waitUntil(lambda: pane.view.viewport().height() > 0, timeout=2000)
    lines = pane.view.viewport().height() / pane.view.fontMetrics().lineSpacing()
    assert lines >= 8, lines
