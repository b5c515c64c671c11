"""The Messages pane: every user-facing message, what happened and what to do next."""

from __future__ import annotations

import time
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

LEVEL_COLOURS = {"error": "#e06c75", "warning": "#d19a66", "info": ""}
MAX_MESSAGES = 500


class Reporter(Protocol):
    """How a command tells the user something (the window's report(): this log, the status bar,
    and the Messages pane brought forward for errors unless `show` is False)."""

    def __call__(self, level: str, what: str, hint: str = "", show: bool = True) -> None:
        """Report `what` happened at `level` (info, warning, error), with what to do next."""


class MessageLog(QListWidget):
    """A bounded list of messages, newest last."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """An empty, word-wrapping list."""
        super().__init__(parent)
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)

    def add(self, level: str, what: str, hint: str = "") -> QListWidgetItem:
        """Append a message; the hint (what to do next) goes on a second line."""
        stamp = time.strftime("%H:%M:%S")
        text = f"[{stamp}] {what}" + (f"\n    {hint}" if hint else "")
        item = QListWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, level)
        colour = LEVEL_COLOURS.get(level, "")
        if colour:
            item.setForeground(QColor(colour))
        self.addItem(item)
        while self.count() > MAX_MESSAGES:
            self.takeItem(0)
        self.scrollToBottom()
        return item

    def messages(self) -> list[tuple[str, str]]:
        """(level, text) of every message, oldest first."""
        return [(str(self.item(i).data(Qt.ItemDataRole.UserRole)), self.item(i).text())
                for i in range(self.count())]
