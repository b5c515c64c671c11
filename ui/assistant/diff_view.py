"""A read-only unified diff with added, removed and hunk lines coloured (the assistant's
proposal against the buffer, shown before anything is applied)."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QPalette, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from ui.fonts import code_font

# Backgrounds per kind of line, for dark and light palettes (text stays the palette's).
COLOURS = {
    True: {"added": "#1f3d25", "removed": "#4a2228", "hunk": "#1f3147"},
    False: {"added": "#dafbe1", "removed": "#ffebe9", "hunk": "#ddf4ff"},
}


def line_kind(line: str) -> str:
    """'added', 'removed', 'hunk', 'header' or 'context' for one line of a unified diff."""
    if line.startswith(("+++", "---")):
        return "header"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "added"
    if line.startswith("-"):
        return "removed"
    return "context"


class DiffView(QPlainTextEdit):
    """Shows one diff; whole lines get a background by kind."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty, read-only, monospace, no wrapping."""
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = code_font()
        self.setFont(font)
        self.kinds: list[str] = []

    def colours(self) -> dict[str, str]:
        """The backgrounds for the current palette (dark or light)."""
        dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
        return COLOURS[dark]

    def show_diff(self, text: str) -> None:
        """Show a unified diff and colour its lines."""
        self.setPlainText(text)
        self.kinds = [line_kind(line) for line in text.splitlines()]
        self.recolour()

    def recolour(self) -> None:
        """Apply the backgrounds (again after a theme switch: see changeEvent)."""
        colours = self.colours()
        selections = []
        document = self.document()
        for row, kind in enumerate(self.kinds):
            if kind not in colours:
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(colours[kind]))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(document.findBlockByNumber(row))
            selections.append(selection)
        self.setExtraSelections(selections)

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch changes the palette: recolour for it."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.recolour()

    def marked_lines(self) -> dict[int, str]:
        """Coloured rows and their background colour (as the view shows them)."""
        return {s.cursor.blockNumber(): s.format.background().color().name()
                for s in self.extraSelections()}
