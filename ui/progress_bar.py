"""Progress bars fed by a job's messages, redrawn only as often as a person can see.

Qt repaints a QProgressBar at once for every new value (2 to 3 ms each on the offscreen
platform); a warm re-verify sends some 25 progress messages to each of two bars in half a
second, so setting every one took about a tenth of a second of CPU from the verification
beside it on a loaded machine. Here a bar takes at most one new value every INTERVAL_MS (the
stage clock's tick), the latest one; a value left over is shown when the interval ends, so the
bar never stays behind.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QProgressBar

INTERVAL_MS = 250


class BarFeed(QObject):
    """Sets one bar from fractions (negative: busy, share unknown)."""

    def __init__(self, bar: QProgressBar) -> None:
        """Feed `bar` (which owns this object)."""
        super().__init__(bar)
        self.bar = bar
        self._pending: int | None = None
        self._timer = QTimer(self, singleShot=True, interval=INTERVAL_MS)
        self._timer.timeout.connect(self._apply)

    def show(self, fraction: float) -> None:
        """The job's latest fraction done: busy at once, a share within INTERVAL_MS."""
        if fraction < 0:
            self._pending = None
            self._timer.stop()
            if self.bar.maximum() != 0:
                self.bar.setRange(0, 0)
            return
        if self.bar.maximum() != 100:
            self.bar.setRange(0, 100)
        self._pending = round(100 * min(fraction, 1.0))
        if not self._timer.isActive():
            self._apply()

    def _apply(self) -> None:
        """Show the value waiting, if any, and start an interval in which new ones wait."""
        if self._pending is None:
            return
        if self._pending != self.bar.value():
            self.bar.setValue(self._pending)
        self._pending = None
        self._timer.start()
