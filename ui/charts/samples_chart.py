"""Timing samples per variant as a strip plot, with each variant's median marked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ui.charts.chart_support import enable_hover, series_colour, style_plot
from ui.theme import Theme


class SamplesChart(pg.PlotWidget):  # type: ignore[misc]
    """One column of points per variant; items are created once and updated with setData."""

    def __init__(self, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        """Empty strip plot with its point and median items."""
        super().__init__(parent)
        self.theme = theme
        self._data: tuple[list[str], list[list[float]]] = ([], [])
        self.points = pg.ScatterPlotItem(size=6, pen=None)
        self.medians = pg.ScatterPlotItem(size=22, symbol="t1", pen=pg.mkPen("#ffffff", width=1))
        enable_hover(self.points)
        enable_hover(self.medians)
        self.addItem(self.points)
        self.addItem(self.medians)
        # No SI units: pyqtgraph would prefix "ms" itself ("mms"); times are never negative.
        self.setLabel("left", "time (ms)")
        self.setLimits(yMin=0)
        self.setTitle("Timing samples per variant")
        self.showGrid(y=True, alpha=0.3)
        style_plot(self, theme)

    def set_samples(self, names: Sequence[str], samples: Sequence[Sequence[float]]) -> None:
        """Show `samples[i]` (milliseconds) for variant `names[i]`."""
        self._data = (list(names), [list(v) for v in samples])
        xs, ys, brushes, tips = [], [], [], []
        rng = np.random.default_rng(0)  # fixed jitter: the same data draws the same picture
        for index, (name, raw) in enumerate(zip(names, samples, strict=True)):
            values = np.asarray(raw, dtype=float)
            xs.append(index + rng.uniform(-0.2, 0.2, values.size))
            ys.append(values)
            brushes += [pg.mkBrush(series_colour(self.theme, index) + "b0")] * values.size
            tips += [f"{name}: {v:.4g} ms" for v in values]
        x = np.concatenate(xs) if xs else np.empty(0)
        y = np.concatenate(ys) if ys else np.empty(0)
        self.points.setData(x=x, y=y, brush=brushes, data=tips)
        medians = [float(np.median(np.asarray(v, dtype=float))) if len(v) else np.nan
                   for v in samples]
        self.medians.setData(x=np.arange(len(names)), y=medians, brush=pg.mkBrush("#ffffff80"),
                             data=[f"{n}: median {m:.4g} ms" for n, m in zip(names, medians,
                                                                             strict=True)])
        self.getAxis("bottom").setTicks([list(enumerate(names))])

    def apply_theme(self, theme: Theme | None) -> None:
        """Recolour the plot and the points for another theme."""
        self.theme = theme
        style_plot(self, theme)
        self.set_samples(*self._data)
