"""Timing bars: each variant's median time as a bar, its 95% interval as a whisker, and its
ratio to the baseline beside it. Painted directly (a few rectangles and lines) so the view
needs no chart library."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

ROW = 26
LABEL_WIDTH = 150
TEXT_WIDTH = 260


@dataclass(frozen=True)
class BarItem:
    """One bar: a name, a median with its interval (ms), and the text beside it."""

    name: str
    median: float
    low: float
    high: float
    text: str
    baseline: bool = False


class TimingBars(QWidget):
    """Horizontal bars with whiskers; empty with a note when nothing was timed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """No bars yet."""
        super().__init__(parent)
        self.items: list[BarItem] = []
        self.note = "Not timed yet."
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

    def set_bars(self, items: list[BarItem], note: str = "") -> None:
        """Show these bars (or the note when there are none)."""
        self.items = list(items)
        self.note = note
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        """Tall enough for every bar."""
        return QSize(LABEL_WIDTH + 300 + TEXT_WIDTH, ROW * max(len(self.items), 1) + 16)

    def minimumSizeHint(self) -> QSize:
        """As tall as the bars need."""
        return QSize(200, self.sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        """Bars, whiskers, names and texts."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text_colour = self.palette().windowText().color()
        painter.setPen(text_colour)
        if not self.items:
            painter.drawText(self.rect().adjusted(6, 0, 0, 0),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             self.note)
            return
        top = max(max(i.high, i.median) for i in self.items) or 1.0
        span = max(self.width() - LABEL_WIDTH - TEXT_WIDTH, 60)
        for row, item in enumerate(self.items):
            self._bar(painter, row, item, span / top, text_colour)

    def _bar(self, painter: QPainter, row: int, item: BarItem, scale: float,
             text_colour: QColor) -> None:
        """One bar with its whisker and labels."""
        y = 8 + row * ROW
        painter.setPen(text_colour)
        painter.drawText(QRectF(0, y, LABEL_WIDTH - 8, 18),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, item.name)
        colour = QColor("#90a4ae") if item.baseline else QColor("#1e88e5")
        painter.fillRect(QRectF(LABEL_WIDTH, y, item.median * scale, 18), colour)
        low, high = LABEL_WIDTH + item.low * scale, LABEL_WIDTH + item.high * scale
        painter.setPen(QPen(text_colour, 1.5))
        painter.drawLine(int(low), y + 9, int(high), y + 9)
        painter.drawLine(int(low), y + 4, int(low), y + 14)
        painter.drawLine(int(high), y + 4, int(high), y + 14)
        right = max(high, LABEL_WIDTH + item.median * scale) + 8
        painter.drawText(QRectF(right, y, TEXT_WIDTH, 18),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, item.text)
