"""The stages of a long piece of work, each with its time: no wait is silent.

Workers report progress as words ("starting the worker", "case 2/5, seed 1/3", "loading
weights"); a classifier names the stage each message belongs to, so each new kind of step
becomes a stage of its own, the current one with a live clock, a hint once it is slow, and a
bar when its share is known. When the work ends, one line says where the time went.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from ui.progress_bar import BarFeed

TICK_MS = 250
SLOW_S = 3.0  # a stage this old gets its hint, if it has one
SHOWN_S = 0.05  # shorter stages are left out of the summary
# A progress message -> (stage name, detail); messages of one stage share its name.
Classify = Callable[[str], tuple[str, str]]


def as_stage(text: str) -> tuple[str, str]:
    """The default: each message is a stage of its own, capitalised."""
    words = text.strip()
    return (words[:1].upper() + words[1:]) or "Working", ""


@dataclass
class Stage:
    """One stage: its name, what it is at, when it started and (once over) how long it took."""

    name: str
    detail: str
    started: float
    seconds: float | None = None
    fraction: float = -1.0


class StageList(QWidget):
    """The stages of the work under way (or a one-line summary of the last)."""

    def __init__(self, classify: Classify = as_stage, hints: Mapping[str, str] | None = None,
                 parent: QWidget | None = None) -> None:
        """Hidden until begin(); `classify` names each message's stage, `hints` say what a
        slow stage may be doing."""
        super().__init__(parent)
        self.classify, self.hints = classify, dict(hints or {})
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setMaximumHeight(12)
        self.bar.setTextVisible(False)
        self.bar_feed = BarFeed(self.bar)
        self.stages: list[Stage] = []
        self._started = 0.0
        self._timer = QTimer(self, interval=TICK_MS)
        self._timer.timeout.connect(self._refresh)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self.setVisible(False)

    @property
    def running(self) -> bool:
        """Whether a job's stages are being shown live."""
        return self._timer.isActive()

    def begin(self, first: str = "Starting") -> None:
        """A job started: one stage so far, its clock running."""
        self._started = time.monotonic()
        self.stages = [Stage(first, "", self._started)]
        self.bar.setVisible(True)
        self.setVisible(True)
        self._timer.start()
        self._refresh()

    def reset(self) -> None:
        """Show nothing: no job under way and no summary of one (a tab that has not run)."""
        self._timer.stop()
        self.stages = []
        self.label.clear()
        self.setVisible(False)

    def advance(self, text: str, fraction: float = -1.0) -> None:
        """A progress message: a new stage, or news of the current one."""
        if not self.running:
            return
        name, detail = self.classify(text)
        now = time.monotonic()
        current = self.stages[-1]
        if name != current.name:
            current.seconds = now - current.started
            current = Stage(name, detail, now)
            self.stages.append(current)
        current.detail, current.fraction = detail, fraction
        self._refresh()

    def finish(self) -> str:
        """The job ended: stop the clock and show (and return) where the time went."""
        if not self.running:
            return self.label.text()
        self._timer.stop()
        now = time.monotonic()
        self.stages[-1].seconds = now - self.stages[-1].started
        parts = " \u00b7 ".join(f"{s.name.lower()} {s.seconds or 0:.1f} s" for s in self.stages
                                if (s.seconds or 0) >= SHOWN_S)
        self.label.setText(f"Took {now - self._started:.1f} s: {parts}")
        self.bar.setVisible(False)
        return self.label.text()

    def _refresh(self) -> None:
        """Redraw: finished stages with their times, the current one with its clock."""
        now = time.monotonic()
        lines = [f"\u2713 {s.name} ({s.seconds or 0:.1f} s)" for s in self.stages[:-1]]
        current = self.stages[-1]
        age = now - current.started
        detail = f": {current.detail}" if current.detail else ""
        lines.append(f"\u25b6 {current.name}{detail} \u2014 {age:.0f} s")
        if age >= SLOW_S and current.name in self.hints:
            lines.append(f"    ({self.hints[current.name]})")
        self.label.setText("\n".join(lines))
        self.bar_feed.show(current.fraction)  # negative: busy, share unknown

    def names(self) -> list[str]:
        """The stages so far, in order (for checks)."""
        return [stage.name for stage in self.stages]
