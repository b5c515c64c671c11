"""Roofline: achieved GFLOP/s against arithmetic intensity under the device's measured roofs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ui.charts.chart_support import enable_hover, series_colour, style_plot
from ui.theme import Theme

INTENSITY_RANGE = (1.0 / 64, 1024.0)


def roof(intensity: np.ndarray, peak_gflops: float, peak_gbps: float) -> np.ndarray:
    """The attainable GFLOP/s at each arithmetic intensity (FLOP per byte)."""
    return np.minimum(peak_gflops, intensity * peak_gbps)


class RooflineChart(pg.PlotWidget):  # type: ignore[misc]
    """The roof line and one point per kernel, on log-log axes."""

    def __init__(self, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        """Empty roofline plot."""
        super().__init__(parent)
        self.theme = theme
        self.setLogMode(x=True, y=True)
        dashed = pg.mkPen("#aaaaaa", width=2, style=Qt.PenStyle.DashLine)
        self.roof = self.plot(pen=dashed)
        self.points = self.plot(pen=None, symbol="o", symbolSize=11,
                                symbolBrush=series_colour(theme, 0))
        enable_hover(self.points)
        self.ridge = pg.TextItem(anchor=(0, 0))
        self.addItem(self.ridge)
        self.setLabel("bottom", "arithmetic intensity (FLOP/byte)")
        self.setLabel("left", "GFLOP/s")
        self.setTitle("Roofline")
        self.showGrid(x=True, y=True, alpha=0.3)
        style_plot(self, theme)

    def set_roofline(self, peak_gflops: float, peak_gbps: float, names: Sequence[str],
                     intensity: Sequence[float], gflops: Sequence[float]) -> None:
        """Draw the roofs (measured peaks) and the kernels' achieved points."""
        grid = np.geomspace(*INTENSITY_RANGE, 256)
        self.roof.setData(grid, roof(grid, peak_gflops, peak_gbps))
        x = np.asarray(intensity, dtype=float)
        y = np.asarray(gflops, dtype=float)
        attainable = roof(x, peak_gflops, peak_gbps) if x.size else x
        tips = [f"{n}: {i:.3g} FLOP/B, {g:.4g} GFLOP/s ({100 * g / a:.0f}% of roof)"
                for n, i, g, a in zip(names, x, y, attainable, strict=True)]
        self.points.setData(x, y, data=tips)
        ridge = peak_gflops / peak_gbps if peak_gbps else 1.0
        self.ridge.setText(f"ridge {ridge:.3g} FLOP/B\n{peak_gbps:.0f} GB/s, "
                           f"{peak_gflops:.0f} GFLOP/s")
        self.ridge.setPos(np.log10(max(ridge, 1e-9)), np.log10(max(peak_gflops, 1e-9)))

    def apply_theme(self, theme: Theme | None) -> None:
        """Recolour the plot and the kernels' points for another theme."""
        self.theme = theme
        style_plot(self, theme)
        self.points.setSymbolBrush(series_colour(theme, 0))
