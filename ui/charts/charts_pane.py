"""The Charts pane: the four timing charts in tabs, with PNG and SVG export."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import shiboken6
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ui.charts.chart_support import export_plot
from ui.charts.roofline_chart import RooflineChart
from ui.charts.samples_chart import SamplesChart
from ui.charts.sweep_chart import SweepChart
from ui.charts.variants_chart import VariantsChart
from ui.theme import Theme


def _address(widget: QWidget) -> int:
    """The C++ object's address: stable, unlike id() of a wrapper that PySide may make anew
    (and whose id a new object may then reuse) each time topLevelWidgets() is called."""
    return int(shiboken6.getCppPointer(widget)[0])


def _top_level_addresses() -> set[int]:
    """The addresses of every top-level widget now."""
    return {_address(widget) for widget in QApplication.topLevelWidgets()}


class ChartsPane(QWidget):
    """Samples, variants, sweep and roofline charts; each fed plain arrays by the window."""

    def __init__(self, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        """Create every chart once."""
        super().__init__(parent)
        before = _top_level_addresses()
        self.samples = SamplesChart(theme)
        self.variants = VariantsChart(theme)
        self.sweep = SweepChart(theme)
        self.roofline = RooflineChart(theme)
        self.tabs = QTabWidget()
        for chart, title in ((self.samples, "Samples"), (self.variants, "Variants"),
                             (self.sweep, "Size sweep"), (self.roofline, "Roofline")):
            self.tabs.addTab(chart, title)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for label, suffix in (("Export PNG\u2026", ".png"), ("Export SVG\u2026", ".svg")):
            button = QPushButton(label)
            button.clicked.connect(lambda _=False, s=suffix: self._ask_export(s))
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(buttons)
        self._adopt_popups(before)

    def _adopt_popups(self, before: set[int]) -> None:
        """Parent the menus pyqtgraph creates without a parent, so they die with this pane."""
        for widget in QApplication.topLevelWidgets():
            if (_address(widget) not in before and widget is not self
                    and widget.parent() is None):
                widget.setParent(self, widget.windowFlags())

    def apply_theme(self, theme: Theme) -> None:
        """Recolour every chart for another theme (the data stays)."""
        for chart in (self.samples, self.variants, self.sweep, self.roofline):
            chart.apply_theme(theme)

    def export_current(self, path: Path) -> Path:
        """Export the visible chart (PNG or SVG by suffix)."""
        chart = self.tabs.currentWidget()
        assert isinstance(chart, pg.GraphicsView)
        return export_plot(chart, path)

    def _ask_export(self, suffix: str) -> None:
        """Ask where to export the visible chart."""
        name = self.tabs.tabText(self.tabs.currentIndex()).lower().replace(" ", "_")
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", f"{name}{suffix}",
                                              f"*{suffix}")
        if path:
            self.export_current(Path(path))
