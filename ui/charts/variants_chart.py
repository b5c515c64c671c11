"""Variant medians as bars with confidence-interval error bars."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ui.charts.chart_support import enable_hover, series_colour, style_plot
from ui.theme import Theme


class VariantsChart(pg.PlotWidget):  # type: ignore[misc]
    """Bars, error bars and hover points, created once and updated with setOpts/setData."""

    def __init__(self, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        """Empty bar chart."""
        super().__init__(parent)
        self.theme = theme
        self._data: tuple[list[str], list[float], list[float], list[float]] = ([], [], [], [])
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.6)
        self.errors = pg.ErrorBarItem(x=np.empty(0), y=np.empty(0), beam=0.2,
                                      pen=pg.mkPen(width=2))
        self.tops = pg.ScatterPlotItem(size=14, pen=None, brush=pg.mkBrush(0, 0, 0, 0))
        enable_hover(self.tops)
        for item in (self.bars, self.errors, self.tops):
            self.addItem(item)
        # No SI units: pyqtgraph would prefix "ms" itself ("mms"); times are never negative.
        self.setLabel("left", "median time (ms)")
        self.setLimits(yMin=0)
        self.note = ""
        self.set_note("")
        self.showGrid(y=True, alpha=0.3)
        style_plot(self, theme)

    def set_variants(self, names: Sequence[str], medians: Sequence[float],
                     low: Sequence[float], high: Sequence[float]) -> None:
        """Bars at the medians (ms), whiskers from `low` to `high`."""
        self._data = (list(names), list(medians), list(low), list(high))
        x = np.arange(len(names), dtype=float)
        median = np.asarray(medians, dtype=float)
        brushes = [series_colour(self.theme, i) for i in range(len(names))]
        self.bars.setOpts(x=x, height=median, width=0.6, brushes=brushes)
        self.errors.setData(x=x, y=median, top=np.asarray(high, dtype=float) - median,
                            bottom=median - np.asarray(low, dtype=float))
        tips = [f"{n}: {m:.4g} ms [{lo:.4g}, {hi:.4g}]"
                for n, m, lo, hi in zip(names, median, low, high, strict=True)]
        self.tops.setData(x=x, y=median, data=tips)
        self.getAxis("bottom").setTicks([list(enumerate(names))])

    def apply_theme(self, theme: Theme | None) -> None:
        """Recolour the plot and the bars for another theme."""
        self.theme = theme
        style_plot(self, theme)
        self.set_variants(*self._data)

    def set_note(self, text: str) -> None:
        """A line under the title: the A/B comparison with the report's own interval."""
        self.note = text
        title = "Variants (bars: median, whiskers: 95% bootstrap interval of the median)"
        self.setTitle(f"{title}<br>{text}" if text else title)
