"""pass@1 of each arm over the stored runs: a small line chart painted directly (rates from 0 to
1 on the left, run numbers along the bottom, one coloured line per arm with a legend). It takes
plain lists and knows nothing of evaluations."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

COLOURS = ("#61afef", "#e5c07b", "#98c379", "#e06c75", "#c678dd", "#56b6c2")
MARGIN = 36
Series = dict[str, tuple[list[int], list[float]]]


class PassChart(QWidget):
    """Lines of rates (0 to 1) against run numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until set_series."""
        super().__init__(parent)
        self.series: Series = {}
        self.setMinimumHeight(160)

    def set_series(self, series: Series) -> None:
        """The arms' (run numbers, rates); repainted."""
        self.series = dict(sorted(series.items()))
        self.update()

    def _area(self) -> QRectF:
        """Where the lines go."""
        return QRectF(MARGIN, 8, max(self.width() - MARGIN - 8, 1),
                      max(self.height() - MARGIN - 8, 1))

    def _point(self, area: QRectF, x: int, y: float, last: int) -> QPointF:
        """A run number and a rate as a point of the area."""
        across = (x - 1) / max(last - 1, 1)
        return QPointF(area.left() + across * area.width(), area.bottom() - y * area.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        """Axes, grid, lines and the legend."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        area = self._area()
        text = self.palette().text().color()
        painter.setPen(QPen(text, 1))
        painter.drawRect(area)
        for rate in (0.0, 0.5, 1.0):
            y = area.bottom() - rate * area.height()
            painter.drawText(QRectF(0, y - 8, MARGIN - 4, 16),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             f"{rate:.1f}")
        painter.drawText(QRectF(area.left(), area.bottom() + 4, area.width(), 16),
                         Qt.AlignmentFlag.AlignCenter, "run (oldest to newest); pass@1")
        last = max((max(xs) for xs, _ys in self.series.values() if xs), default=1)
        for index, (arm, (xs, ys)) in enumerate(self.series.items()):
            colour = QColor(COLOURS[index % len(COLOURS)])
            self._line(painter, area, xs, ys, last, colour)
            painter.setPen(QPen(colour, 1))
            painter.drawText(QPointF(area.left() + 6, area.top() + 14 + 14 * index), arm)
        painter.end()

    def _line(self, painter: QPainter, area: QRectF, xs: list[int], ys: list[float],
              last: int, colour: QColor) -> None:
        """One arm's line with a dot per run."""
        points = [self._point(area, x, y, last) for x, y in zip(xs, ys, strict=True)]
        painter.setPen(QPen(colour, 2))
        for start, end in zip(points, points[1:], strict=False):
            painter.drawLine(start, end)
        painter.setBrush(colour)
        for point in points:
            painter.drawEllipse(point, 3, 3)
