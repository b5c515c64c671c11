"""The one fixed-pitch font for code everywhere (editor, compiler output, PTX / SASS, diffs,
code in the assistant's answers), chosen as Qt itself reports it: a family Qt does not call
fixed-pitch (Noto Sans Mono on some Debian systems) would set code in a proportional font."""

from __future__ import annotations

import functools

from PySide6.QtGui import (
    QFont,
    QFontDatabase,
    QFontInfo,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)

# Preferred first: DejaVu Sans Mono is installed with the app's system packages.
CANDIDATES = ("DejaVu Sans Mono", "Liberation Mono", "Cousine", "Source Code Pro",
              "Ubuntu Mono", "Monospace")


def _fixed(font: QFont) -> bool:
    """Whether the font Qt resolves for `font` is fixed-pitch."""
    return QFontInfo(font).fixedPitch()


def usable_family(requested: str) -> str:
    """`requested` when it is installed and Qt reports it fixed-pitch, else code_family()."""
    if requested and requested in QFontDatabase.families() and _fixed(QFont(requested)):
        return requested
    return code_family()


@functools.cache
def code_family() -> str:
    """The first installed family Qt reports fixed-pitch, else the system's fixed font."""
    installed = set(QFontDatabase.families())
    for family in CANDIDATES:
        if family in installed and _fixed(QFont(family)):
            return family
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()


def code_font(point_size: int = 0) -> QFont:
    """The code font (at `point_size` points; 0: the application's size)."""
    font = QFont(code_family())
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    if point_size > 0:
        font.setPointSize(point_size)
    return font


def set_code_spans(document: QTextDocument) -> None:
    """Give every run of text the document marks fixed-pitch (Markdown's code spans and
    blocks) the code font's family, in place of the system's fixed font."""
    cursor = QTextCursor(document)
    change = QTextCharFormat()
    change.setFontFamilies([code_family()])
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.isValid() and fragment.charFormat().fontFixedPitch():
                cursor.setPosition(fragment.position())
                cursor.setPosition(fragment.position() + fragment.length(),
                                   QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(change)
            fragments += 1
        block = block.next()
