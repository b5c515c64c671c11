"""A size sweep: time and bandwidth against problem size, on log axes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ui.charts.chart_support import enable_hover, series_colour, style_plot
from ui.theme import Theme


class SweepChart(pg.GraphicsLayoutWidget):  # type: ignore[misc]
    """Two stacked plots sharing the size axis; one curve per variant, reused across updates."""

    def __init__(self, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        """Empty time and GB/s plots with log axes."""
        super().__init__(parent)
        self.theme = theme
        self.time_plot = self.addPlot(row=0, col=0, title="Time against size")
        self.bandwidth_plot = self.addPlot(row=1, col=0, title="Bandwidth against size")
        self.time_plot.setLogMode(x=True, y=True)
        self.bandwidth_plot.setLogMode(x=True, y=False)
        self.time_plot.setLabel("left", "time (ms)")
        self.bandwidth_plot.setLabel("left", "GB/s")
        self.bandwidth_plot.setLabel("bottom", "size (elements)")
        self.bandwidth_plot.setLimits(yMin=0)
        self.bandwidth_plot.setXLink(self.time_plot)
        for plot in (self.time_plot, self.bandwidth_plot):
            plot.showGrid(x=True, y=True, alpha=0.3)
            plot.addLegend(offset=(10, 10))
        self.curves: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        style_plot(self, theme)

    def _curves(self, name: str) -> tuple[pg.PlotDataItem, pg.PlotDataItem]:
        """The time and bandwidth curves of a variant, created on first use only."""
        if name not in self.curves:
            colour = series_colour(self.theme, len(self.curves))
            pair = tuple(plot.plot(name=name, pen=pg.mkPen(colour, width=2), symbol="o",
                                   symbolSize=6, symbolBrush=colour)
                         for plot in (self.time_plot, self.bandwidth_plot))
            for curve in pair:
                enable_hover(curve)
            self.curves[name] = (pair[0], pair[1])
        return self.curves[name]

    def set_sweep(self, sizes: Sequence[float],
                  series: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> None:
        """For each variant name, times (ms) and bandwidths (GB/s) at `sizes`."""
        x = np.asarray(sizes, dtype=float)
        for name, (times, bandwidths) in series.items():
            time_curve, bandwidth_curve = self._curves(name)
            t = np.asarray(times, dtype=float)
            g = np.asarray(bandwidths, dtype=float)
            time_curve.setData(x, t, data=[f"{name}: {s:g} elements, {v:.4g} ms"
                                           for s, v in zip(x, t, strict=True)])
            bandwidth_curve.setData(x, g, data=[f"{name}: {s:g} elements, {v:.4g} GB/s"
                                                for s, v in zip(x, g, strict=True)])
        for name, (time_curve, bandwidth_curve) in self.curves.items():
            visible = name in series
            time_curve.setVisible(visible)
            bandwidth_curve.setVisible(visible)

    def apply_theme(self, theme: Theme | None) -> None:
        """Recolour the plots and every variant's curves for another theme."""
        self.theme = theme
        style_plot(self, theme)
        for index, curves in enumerate(self.curves.values()):
            colour = series_colour(theme, index)
            for curve in curves:
                curve.setPen(pg.mkPen(colour, width=2))
                curve.setSymbolBrush(colour)
