"""Shared chart plumbing: pyqtgraph options, theme colours, hover tips and PNG/SVG export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyqtgraph as pg
from pyqtgraph import exporters
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator

from ui.theme import Theme

# Antialiasing makes lines readable in screenshots; OpenGL is never needed for these sizes.
pg.setConfigOptions(antialias=True, useOpenGL=False)

DEFAULT_SERIES = ["#61afef", "#e5c07b", "#98c379", "#e06c75", "#c678dd", "#56b6c2"]


def series_colour(theme: Theme | None, index: int) -> str:
    """The colour of the index-th series in the theme."""
    colours = (theme.charts.get("series") if theme else None) or DEFAULT_SERIES
    return str(colours[index % len(colours)])


def style_plot(widget: pg.PlotWidget | pg.GraphicsLayoutWidget, theme: Theme | None) -> None:
    """Background and axis colours from the theme."""
    if theme is None:
        return
    widget.setBackground(theme.charts.get("background", "#ffffff"))
    foreground = theme.charts.get("foreground", "#000000")
    items = [widget.getPlotItem()] if isinstance(widget, pg.PlotWidget) else [
        item for item in widget.ci.items if isinstance(item, pg.PlotItem)]
    for plot in items:
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(foreground)
            axis.setTextPen(foreground)


def enable_hover(item: pg.PlotDataItem | pg.ScatterPlotItem,
                 describe: Callable[..., str] | None = None) -> None:
    """Show a tool tip over hovered points: the point's data text (set with data=...)."""
    scatter = item.scatter if isinstance(item, pg.PlotDataItem) else item
    scatter.opts["hoverable"] = True
    scatter.opts["tip"] = describe or (lambda x, y, data: str(data))


def export_plot(view: pg.GraphicsView, path: Path) -> Path:
    """Write a chart to PNG or SVG, chosen by the file's suffix.

    SVG goes through QSvgGenerator directly: pyqtgraph's SVGExporter cannot parse the path
    data that Qt 6.11 writes (it raises ValueError in correctCoordinates).
    """
    path = Path(path)
    if path.suffix.lower() == ".svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(view.size())
        generator.setViewBox(view.rect())
        generator.setTitle("Kernel Studio chart")
        painter = QPainter(generator)
        try:
            view.render(painter)
        finally:
            painter.end()
    else:
        exporter = exporters.ImageExporter(view.scene())
        exporter.parameters()["width"] = max(int(exporter.parameters()["width"]), 800)
        exporter.export(str(path))
    return path
