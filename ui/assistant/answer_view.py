"""The model's answer rendered as Markdown (headings, lists, emphasis, code blocks in a
fixed-width font), re-rendered as the answer streams in; the raw text is kept as it came."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from ui.fonts import set_code_spans

RENDER_MS = 120  # streamed pieces are rendered together, at most this often

MARKDOWN = QTextDocument.MarkdownFeature.MarkdownDialectGitHub


class AnswerView(QTextBrowser):
    """A read-only Markdown view of a streamed answer."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty; links stay inside (an answer opens nothing)."""
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self._raw = ""
        self._timer = QTimer(self, singleShot=True, interval=RENDER_MS)
        self._timer.timeout.connect(self.render_markdown)

    def raw_text(self) -> str:
        """The answer exactly as the model wrote it."""
        return self._raw

    def append_text(self, text: str) -> None:
        """Add streamed text; it is rendered shortly (pieces coming together render once)."""
        self._raw += text
        if not self._timer.isActive():
            self._timer.start()

    def set_answer(self, text: str) -> None:
        """Show a whole answer now."""
        self._raw = text
        self.render_markdown()

    def clear_answer(self) -> None:
        """Forget the answer."""
        self._timer.stop()
        self._raw = ""
        self.clear()

    def render_markdown(self) -> None:
        """Render the raw text as Markdown, keeping the view at the end while it was there."""
        self._timer.stop()
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.document().setMarkdown(self._raw, MARKDOWN)
        set_code_spans(self.document())
        if at_end:
            bar.setValue(bar.maximum())
