"""Find and replace inside a Scintilla editor, plain or with regular expressions."""

from __future__ import annotations

from dataclasses import dataclass

from pyside6_scintilla import Scintilla, ScintillaEdit

INDIC_FOUND = 11


@dataclass(frozen=True)
class SearchOptions:
    """What to look for and how."""

    text: str
    regex: bool = False
    case_sensitive: bool = False
    whole_word: bool = False

    def flags(self) -> int:
        """Scintilla search flags for these options (C++11 regular expressions)."""
        option = Scintilla.FindOption
        value = 0
        if self.regex:
            value |= int(option.RegExp) | int(option.Cxx11RegEx)
        if self.case_sensitive:
            value |= int(option.MatchCase)
        if self.whole_word:
            value |= int(option.WholeWord)
        return value


def _search(editor: ScintillaEdit, options: SearchOptions, start: int, end: int) -> int:
    """Position of the first match between start and end (end < start searches backwards)."""
    editor.setSearchFlags(options.flags())
    editor.setTargetRange(start, end)
    return int(editor.searchInTarget(len(options.text.encode("utf-8")), options.text))


def find_in_editor(editor: ScintillaEdit, options: SearchOptions, backwards: bool) -> bool:
    """Select the next match after (or before) the selection, wrapping once around the text."""
    if not options.text:
        return False
    length = int(editor.textLength())
    if backwards:
        here = int(editor.selectionStart())
        found = _search(editor, options, here, 0)
        if found < 0:
            found = _search(editor, options, length, here)
    else:
        here = int(editor.selectionEnd())
        found = _search(editor, options, here, length)
        if found < 0:
            found = _search(editor, options, 0, here)
    if found < 0:
        return False
    editor.setSel(int(editor.targetStart()), int(editor.targetEnd()))
    editor.scrollRange(int(editor.targetEnd()), int(editor.targetStart()))
    return True


def replace_selection(editor: ScintillaEdit, options: SearchOptions, replacement: str) -> bool:
    """Replace the selection if it is a match (regex replacements may use \\1 groups)."""
    start, end = int(editor.selectionStart()), int(editor.selectionEnd())
    if start == end or _search(editor, options, start, end) != start:
        return False
    if int(editor.targetEnd()) != end:
        return False
    _replace_target(editor, options, replacement)
    editor.setSel(int(editor.targetEnd()), int(editor.targetEnd()))
    return True


def _replace_target(editor: ScintillaEdit, options: SearchOptions, replacement: str) -> None:
    """Replace the current target, expanding groups for regular expressions."""
    size = len(replacement.encode("utf-8"))
    if options.regex:
        editor.replaceTargetRE(size, replacement)
    else:
        editor.replaceTarget(size, replacement)


def replace_all_in_editor(editor: ScintillaEdit, options: SearchOptions, replacement: str) -> int:
    """Replace every match, front to back, as a single undo step."""
    if not options.text:
        return 0
    count, position = 0, 0
    editor.beginUndoAction()
    try:
        while _search(editor, options, position, int(editor.textLength())) >= 0:
            start = int(editor.targetStart())
            matched_empty = int(editor.targetEnd()) == start
            _replace_target(editor, options, replacement)
            count += 1
            # An empty match (a regex like ^) would be found again at the same place.
            position = int(editor.targetEnd()) + (1 if matched_empty else 0)
            if position > int(editor.textLength()):
                break
    finally:
        editor.endUndoAction()
    return count


def highlight_matches(editor: ScintillaEdit, options: SearchOptions, limit: int = 2000) -> int:
    """Mark every match with the find indicator (cleared for empty text); returns the count."""
    editor.setIndicatorCurrent(INDIC_FOUND)
    editor.indicatorClearRange(0, int(editor.textLength()))
    if not options.text:
        return 0
    count, position, length = 0, 0, int(editor.textLength())
    while count < limit and _search(editor, options, position, length) >= 0:
        start, end = int(editor.targetStart()), int(editor.targetEnd())
        editor.setIndicatorCurrent(INDIC_FOUND)
        editor.indicatorFillRange(start, max(end - start, 1))
        count += 1
        position = end if end > start else end + 1
        if position >= length:
            break
    return count
