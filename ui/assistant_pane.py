"""The Assistant pane: ask the local model about the current kernel, watch the answer stream,
stop it at any time."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

ACTIONS = (("ask", "Ask"), ("explain", "Explain the kernel"),
           ("fix_compile", "Fix compile errors"), ("fix_verify", "Fix a failed verification"),
           ("optimize", "Optimize"))


class AssistantPane(QWidget):
    """Action, question, Send and Stop over the streamed answer."""

    askRequested = Signal(str, str)
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        """Idle until a question is sent."""
        super().__init__(parent)
        self.action_box = QComboBox()
        for name, title in ACTIONS:
            self.action_box.addItem(title, name)
        self.question = QPlainTextEdit()
        self.question.setPlaceholderText("Ask about the kernel in the current tab\u2026")
        self.question.setMaximumHeight(70)
        self.answer = QPlainTextEdit(readOnly=True)
        self.status = QLabel("The local model loads on the first question; nothing leaves "
                             "this machine.")
        self.status.setWordWrap(True)
        self.send_button = QPushButton("Send")
        self.stop_button = QPushButton("Stop")
        self._build()
        self.set_running(False)

    def _build(self) -> None:
        """Controls on top, the answer below."""
        row = QHBoxLayout()
        row.addWidget(self.action_box, 1)
        row.addWidget(self.send_button)
        row.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.question)
        layout.addWidget(self.answer, 1)
        layout.addWidget(self.status)
        self.send_button.clicked.connect(self._send)
        self.stop_button.clicked.connect(self.stopRequested)

    def _send(self) -> None:
        """Ask for the chosen action with the typed question."""
        self.askRequested.emit(str(self.action_box.currentData()), self.question.toPlainText())

    def set_running(self, running: bool) -> None:
        """Send while idle, Stop while an answer streams."""
        self.send_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def begin(self, title: str) -> None:
        """Clear the answer for a new question."""
        self.answer.clear()
        self.status.setText(f"{title}: waiting for the model\u2026")
        self.set_running(True)

    def append(self, text: str) -> None:
        """Add streamed text at the end."""
        cursor = self.answer.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        self.answer.setTextCursor(cursor)

    def show_progress(self, message: str, fraction: float) -> None:
        """Model loading progress."""
        self.status.setText(f"{message} ({fraction:.0%})")

    def finish(self, info: dict[str, Any]) -> None:
        """The answer ended: say how, how fast, and any warnings."""
        reason = str(info.get("finish_reason", ""))
        speed = float(info.get("tokens_per_s") or 0.0)
        text = "Stopped." if reason == "stopped" else f"Done ({reason})."
        if speed:
            text += f" {speed:.1f} tokens/s."
        warnings = [str(w) for w in info.get("warnings") or []]
        self.status.setText(" ".join([text, *warnings]))
        self.set_running(False)

    def fail(self, message: str) -> None:
        """The model could not answer."""
        self.status.setText(f"The assistant could not answer: {message}")
        self.set_running(False)
