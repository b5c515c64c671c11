"""Colours for SASS and PTX listings: opcodes, registers, predicates, constants and numbers,
labels and directives, and the quoted source lines, for dark and light palettes."""

from __future__ import annotations

import re

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)

# Colours by kind, for a dark and a light palette.
COLOURS = {
    True: {"opcode": "#61afef", "register": "#e5c07b", "predicate": "#c678dd",
           "constant": "#56b6c2", "number": "#d19a66", "label": "#98c379",
           "offset": "#5c6370", "source": "#98c379", "comment": "#7f848e"},
    False: {"opcode": "#0550ae", "register": "#953800", "predicate": "#8250df",
            "constant": "#0a7b83", "number": "#a0522d", "label": "#116329",
            "offset": "#8c959f", "source": "#116329", "comment": "#6e7781"},
}
# (kind, pattern, group): later rules paint over earlier ones.
SASS_RULES: tuple[tuple[str, str, int], ...] = (
    ("number", r"-?\b(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\b", 0),
    ("register", r"\b(?:U?R\d+|URZ|RZ|SR_\w+)\b", 0),
    ("predicate", r"!?\b(?:U?P\d|U?PT)\b", 0),
    ("constant", r"\bc\[0x[0-9a-fA-F]+\]\[[^\]]+\]", 0),
    ("label", r"`?\(?\.L_\w+\)?:?", 0),
    ("opcode", r"^/\*[0-9a-fA-F]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", 1),
    ("offset", r"^/\*[0-9a-fA-F]+\*/", 0),
    ("source", r"^//.*$", 0),
)
PTX_RULES: tuple[tuple[str, str, int], ...] = (
    ("number", r"-?\b(?:0[xXfFdD][0-9a-fA-F]+|\d+(?:\.\d+)?)\b", 0),
    ("register", r"%\w+(?:\.\w+)?", 0),
    ("predicate", r"@!?%p\d+", 0),
    ("label", r"^\s*\$?\w+:", 0),
    ("opcode", r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)", 1),
    ("constant", r"^\s*\.\w+", 0),
    ("comment", r"//.*$", 0),
)


class AssemblyHighlighter(QSyntaxHighlighter):
    """Colours one listing (SASS or PTX) line by line."""

    def __init__(self, document: QTextDocument, rules: tuple[tuple[str, str, int], ...],
                 palette: QPalette) -> None:
        """Compile the rules; colours follow the palette's lightness."""
        super().__init__(document)
        self.rules = [(kind, re.compile(pattern), group) for kind, pattern, group in rules]
        self.formats: dict[str, QTextCharFormat] = {}
        self.set_palette(palette)

    def set_palette(self, palette: QPalette) -> None:
        """Pick the colours for a dark or light palette and colour the listing again."""
        dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
        self.formats = {}
        for kind, colour in COLOURS[dark].items():
            form = QTextCharFormat()
            form.setForeground(QColor(colour))
            if kind == "opcode":
                form.setFontWeight(QFont.Weight.Bold)
            if kind in ("source", "comment"):
                form.setFontItalic(True)
            self.formats[kind] = form
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        """Colour one line."""
        for kind, pattern, group in self.rules:
            for match in pattern.finditer(text):
                start, end = match.span(group)
                if start >= 0:
                    self.setFormat(start, end - start, self.formats[kind])

    def kind_at(self, block: int, column: int) -> str:
        """The kind of colour at a position (for checks): '' where uncoloured."""
        found = ""
        text = self.document().findBlockByNumber(block).text()
        for kind, pattern, group in self.rules:
            for match in pattern.finditer(text):
                start, end = match.span(group)
                if start <= column < end:
                    found = kind
        return found
