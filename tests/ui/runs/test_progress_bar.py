"""Progress bars fed by many messages (ui.progress_bar): redrawn at most every interval, never
left behind, busy at once."""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar
from pytestqt.qtbot import QtBot

from ui.progress_bar import BarFeed


def _bar(qtbot: QtBot) -> tuple[QProgressBar, BarFeed, list[int]]:
    bar = QProgressBar()
    qtbot.addWidget(bar)
    shown: list[int] = []
    bar.valueChanged.connect(shown.append)
    return bar, BarFeed(bar), shown


def test_a_burst_of_values_is_drawn_once_then_the_latest(qtbot: QtBot) -> None:
    bar, feed, shown = _bar(qtbot)
    for step in range(50):
        feed.show(step / 100)
    # The first value at once, the burst held back, then the latest when the interval ends.
    assert shown == [0]
    qtbot.waitUntil(lambda: bar.value() == 49, timeout=5000)
    assert shown == [0, 49] and bar.maximum() == 100


def test_busy_shows_at_once_and_ends_the_interval(qtbot: QtBot) -> None:
    bar, feed, shown = _bar(qtbot)
    feed.show(0.2)
    feed.show(0.3)  # waits for the interval
    feed.show(-1.0)
    assert bar.minimum() == bar.maximum() == 0
    # No interval runs any more: the next share shows at once, and the 30% never did.
    feed.show(1.0)
    assert bar.maximum() == 100 and bar.value() == 100 and 30 not in shown
