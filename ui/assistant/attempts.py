"""The attempts of a Propose-and-refine run: one row per attempt with its verdict as a coloured
badge, the diff between two selected attempts (or, for one, against the attempt before it in
its chain), Apply on any of them, and Stop for the whole loop.

The view only shows and asks; the window's assistant commands apply code (one undo step) and
stop the loop. Nothing here runs anything.
"""

from __future__ import annotations

import difflib
import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ui.assistant.diff_view import DiffView

# Badge colours by verdict: green passed, red did not compile, orange wrong results, grey the
# rest (nothing decided, stopped, the model wrote nothing).
BADGES = {"passed": "#2e7d32", "compile_error": "#c62828", "mismatch": "#e65100",
          "unwritten": "#e65100", "guard_zone": "#e65100", "input_changed": "#e65100",
          "timeout": "#6a1b9a", "crash": "#6a1b9a", "launch_error": "#6a1b9a"}
OTHER_BADGE = "#616161"
ROLE = Qt.ItemDataRole.UserRole


def badge_colour(status: str) -> str:
    """The badge colour of a verdict."""
    return BADGES.get(status, OTHER_BADGE)


def badge_html(info: dict[str, Any]) -> str:
    """A row's text: the badge, then chain, round and the first line of the message."""
    status = str(info.get("status", ""))
    message = str(info.get("message", "")).splitlines()[0] if info.get("message") else ""
    badge = (f"<span style='background:{badge_colour(status)};color:white'>&nbsp;"
             f"{html.escape(status.replace('_', ' '))}&nbsp;</span>")
    ms = info.get("time_ms")
    timed = f" {ms * 1000:.1f} us" if isinstance(ms, int | float) else ""  # speed rounds
    redraws = int(info.get("redraws") or 0)
    # Answers that repeated a kernel the chain had tried were asked again, not verified.
    again = f" (asked again {redraws}x: it repeated a tried kernel)" if redraws else ""
    return (f"{badge} chain {info.get('chain')}, round {info.get('round')}{timed}{again} "
            f"<span style='color:gray'>{html.escape(message[:90])}</span>")


def source_diff(before: str, after: str, old: str, new: str) -> str:
    """A unified diff between two attempts' kernels."""
    lines = difflib.unified_diff(before.splitlines(keepends=True),
                                 after.splitlines(keepends=True), old, new)
    return "".join(lines)


class AttemptsView(QWidget):
    """The attempts as a list with badges, a diff, Apply and Stop."""

    applyRequested = Signal(str)
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until attempts arrive."""
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setToolTip("Select one attempt to see what it changed in its chain, two to "
                             "compare them")
        self.diff_view = DiffView()
        self.note = QLabel("Attempts appear here as the verifier judges them.")
        self.note.setWordWrap(True)
        self.apply_button = QPushButton("Apply selected")
        self.apply_button.setToolTip("Put the selected attempt's kernel into the buffer (Ctrl+Z "
                                     "undoes it); nothing runs until you Build or Verify")
        self.stop_button = QPushButton("Stop all")
        self.stop_button.setToolTip("Stop the whole loop: the answer being written and the "
                                    "verifications waiting; every attempt made so far is kept")
        self.attempts: list[dict[str, Any]] = []
        self._build()
        self.set_running(False)
        self._selection_changed()

    def _build(self) -> None:
        """The list over the diff, buttons below."""
        buttons = QHBoxLayout()
        buttons.addWidget(self.note, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.diff_view, 2)
        layout.addLayout(buttons)
        self.list.itemSelectionChanged.connect(self._selection_changed)
        self.apply_button.clicked.connect(self._apply)
        self.stop_button.clicked.connect(self.stopRequested)

    def clear(self) -> None:
        """Forget every attempt (a new run begins)."""
        self.list.clear()
        self.attempts.clear()
        self.diff_view.show_diff("")
        self.note.setText("Attempts appear here as the verifier judges them.")

    def add_attempt(self, info: dict[str, Any]) -> None:
        """One more attempt (a dict as app.assist.refine.attempts.Attempt.as_dict, plus
        'source')."""
        self.attempts.append(info)
        item = QListWidgetItem()
        item.setData(ROLE, len(self.attempts) - 1)
        label = QLabel(badge_html(info))
        label.setTextFormat(Qt.TextFormat.RichText)
        self.list.addItem(item)
        self.list.setItemWidget(item, label)
        item.setSizeHint(label.sizeHint())
        if info.get("status") == "passed":
            self.list.setCurrentItem(item)

    def set_running(self, running: bool) -> None:
        """Stop while the loop runs."""
        self.stop_button.setEnabled(running)

    def selected(self) -> list[dict[str, Any]]:
        """The selected attempts, oldest first."""
        rows = sorted(int(i.data(ROLE)) for i in self.list.selectedItems())
        return [self.attempts[r] for r in rows]

    def _previous(self, info: dict[str, Any]) -> dict[str, Any] | None:
        """The attempt before this one in its chain."""
        earlier = [a for a in self.attempts if a.get("chain") == info.get("chain")
                   and int(a.get("round", 0)) == int(info.get("round", 0)) - 1]
        return earlier[0] if earlier else None

    def _selection_changed(self) -> None:
        """Show the diff the selection asks for; Apply needs exactly one with code."""
        chosen = self.selected()
        self.apply_button.setEnabled(len(chosen) == 1 and bool(chosen[0].get("source")))
        if len(chosen) == 2:
            old, new = chosen
        elif len(chosen) == 1:
            old, new = self._previous(chosen[0]) or {}, chosen[0]
        else:
            self.diff_view.show_diff("")
            return
        self.diff_view.show_diff(source_diff(
            str(old.get("source", "")), str(new.get("source", "")),
            _name(old) if old else "(nothing)", _name(new)) or "(the same kernel)")

    def _apply(self) -> None:
        """Ask for the selected attempt's kernel to be applied."""
        chosen = self.selected()
        if len(chosen) == 1 and chosen[0].get("source"):
            self.applyRequested.emit(str(chosen[0]["source"]))


def _name(info: dict[str, Any]) -> str:
    """'chain 1 round 2 (compile_error)'."""
    return f"chain {info.get('chain')} round {info.get('round')} ({info.get('status')})"
