"""Kernel sources side by side: one read-only pane per variant, the lines that differ from the
baseline marked on both sides, all panes scrolling together."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QTextEdit, QVBoxLayout, QWidget

from app.review.diff import changed_lines
from ui.fonts import code_font
from ui.theme import diff_colours

CHANGED, BASE_CHANGED = 0, 1  # which of the theme's diff colours marks a pane's lines
THEME_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


def _code_font() -> QFont:
    """The system's fixed-width font."""
    return code_font()


class SourcePane(QWidget):
    """One variant's source under its title."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        """A title and a read-only text view."""
        super().__init__(parent)
        self.title = QLabel(title)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.view = QPlainTextEdit(readOnly=True)
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setFont(_code_font())
        self.view.setPlainText(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.view)
        self.marked: list[int] = []
        self.kind = CHANGED

    def mark(self, lines: set[int], kind: int) -> None:
        """Highlight these 1-based lines as changed in this variant (CHANGED) or in the
        baseline (BASE_CHANGED), in the colours of the current theme."""
        self.marked, self.kind = sorted(lines), kind
        colour = self.mark_colour()
        selections = []
        document = self.view.document()
        for line in self.marked:
            block = document.findBlockByNumber(line - 1)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.cursor = QTextCursor(block)
            selection.format.setBackground(colour)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selections.append(selection)
        self.view.setExtraSelections(selections)

    def mark_colour(self) -> QColor:
        """The background of this pane's marked lines in the current palette."""
        return diff_colours(self.palette())[self.kind]

    def changeEvent(self, event: QEvent) -> None:
        """A theme change re-colours the marked lines (the text's colour changed with it)."""
        super().changeEvent(event)
        if event.type() in THEME_EVENTS and self.marked:
            self.mark(set(self.marked), self.kind)


class SourcesView(QSplitter):
    """The panes of every variant, the baseline first."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_sources()."""
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.panes: list[SourcePane] = []
        self._syncing = False

    def show_sources(self, sources: list[tuple[str, str]], baseline: int = 0) -> None:
        """(title, text) per variant; lines differing from `sources[baseline]` are marked."""
        for pane in self.panes:
            pane.setParent(None)
            pane.deleteLater()
        self.panes = [SourcePane(title, text, self) for title, text in sources]
        base_changes: set[int] = set()
        for index, pane in enumerate(self.panes):
            self.addWidget(pane)
            pane.view.verticalScrollBar().valueChanged.connect(
                lambda value, i=index: self._follow(i, value))
            if index != baseline:
                mine, theirs = changed_lines(sources[baseline][1], sources[index][1])
                base_changes |= mine
                pane.mark(theirs, CHANGED)
        if self.panes:
            self.panes[baseline].mark(base_changes, BASE_CHANGED)

    def _follow(self, source: int, value: int) -> None:
        """Scroll every other pane to the same line."""
        if self._syncing:
            return
        self._syncing = True
        try:
            for index, pane in enumerate(self.panes):
                if index != source:
                    bar = pane.view.verticalScrollBar()
                    bar.setValue(min(value, bar.maximum()))
        finally:
            self._syncing = False
