"""The Charts pane: the four timing charts in tabs, with PNG and SVG export.

Charts without data are never shown as empty axes: a chart a timing run did not feed is a
disabled tab saying what would feed it, and with no data at all the pane says why instead.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
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

# What feeds each chart, for the tool tip of a chart that has no data.
NEEDS = {"samples": "a timing run on a GPU", "variants": "a timing run on a GPU",
         "sweep": "a size sweep (Run > Bench with options)",
         "roofline": "the device's measured peaks (a timing run on a GPU)"}
NO_TIMING_YET = "Charts appear after a timing run on a GPU (Ctrl+F5)."


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
        charts = QWidget()
        column = QVBoxLayout(charts)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.tabs, 1)
        column.addLayout(buttons)
        self.empty = QLabel(NO_TIMING_YET)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(charts)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.pages, 1)
        self._adopt_popups(before)

    def charts_by_name(self) -> dict[str, QWidget]:
        """Each chart under its name, in tab order."""
        return {"samples": self.samples, "variants": self.variants, "sweep": self.sweep,
                "roofline": self.roofline}

    def show_fed(self, fed: set[str], why_not: str) -> None:
        """Enable the charts that got data (the first of them in front); with none, show
        `why_not` instead of empty axes."""
        if not fed:
            self.empty.setText(why_not)
            self.pages.setCurrentWidget(self.empty)
            return
        for index, name in enumerate(self.charts_by_name()):
            self.tabs.setTabEnabled(index, name in fed)
            self.tabs.setTabToolTip(index, "" if name in fed else f"Needs {NEEDS[name]}.")
        if not self.tabs.isTabEnabled(self.tabs.currentIndex()):
            self.tabs.setCurrentIndex(next(i for i in range(self.tabs.count())
                                           if self.tabs.isTabEnabled(i)))
        self.pages.setCurrentIndex(1)

    def showing_charts(self) -> bool:
        """Whether charts are on show (not the explanation of why there are none)."""
        return self.pages.currentIndex() == 1

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
