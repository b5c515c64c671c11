"""The CUDA source editor: Scintilla with lexilla's C++ lexer taught CUDA's words.

Positions inside Scintilla are UTF-8 byte offsets; the public methods here speak in 1-based
lines and columns, like compiler diagnostics, and in Python strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import lexilla
from lexilla.pyside6_scintilla import set_lexer
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QWidget
from pyside6_scintilla import Scintilla, ScintillaEdit

from app.compile.model import Severity
from app.workspace import cuda_language as cuda
from ui.editor.search import SearchOptions, find_in_editor, replace_all_in_editor
from ui.editor.style import CPP_STYLES, INACTIVE_OFFSET, StyleIds, apply_theme_to_editor
from ui.editor.text_rules import indent_after, toggle_comment
from ui.theme import Theme

M = Scintilla.MarkerSymbol
F = Scintilla.MarkerOutline

INDENT = 4
MARGIN_NUMBERS, MARGIN_MARKERS, MARGIN_FOLD = 0, 1, 2
MARKER_ERROR, MARKER_WARNING, MARKER_NOTE, MARKER_CORRELATED = 0, 1, 2, 3
# "fatal" is a word of compiler logs that app.compile folds into Severity.ERROR.
SEVERITY_MARKERS = {Severity.ERROR: MARKER_ERROR, "fatal": MARKER_ERROR,
                    Severity.WARNING: MARKER_WARNING}
INDIC_ERROR, INDIC_WARNING, INDIC_NOTE = 8, 9, 10
SEVERITY_INDICATORS = {MARKER_ERROR: INDIC_ERROR, MARKER_WARNING: INDIC_WARNING,
                       MARKER_NOTE: INDIC_NOTE}
FOLD_MASK = 0xFE000000
BRACES = b"()[]{}"
_WORD_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Where typing is prose, not code: completion never opens by itself there.
NOT_CODE_STYLES = frozenset(CPP_STYLES["comment"] + CPP_STYLES["string"])
# Keys that move through an open completion list: after one, Enter takes the chosen word.
POPUP_KEYS = frozenset({Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown})
ENTER_KEYS = frozenset({Qt.Key.Key_Return, Qt.Key.Key_Enter})


class DiagnosticLike(Protocol):
    """What the editor needs of a compiler diagnostic (app.compile.Diagnostic fits)."""

    @property
    def line(self) -> int:
        """1-based line."""

    @property
    def column(self) -> int:
        """1-based column, 0 when unknown."""

    @property
    def severity(self) -> str:
        """error, warning or note."""

    @property
    def message(self) -> str:
        """What the compiler said."""


class CudaEditor(ScintillaEdit):
    """A CUDA-aware code editor; widgets outside only see text snapshots, never this object."""

    textEdited = Signal()
    cursorMoved = Signal(int, int)
    cursorLineChanged = Signal(int)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        """Set up lexer, margins, folding, markers and indicators, then colour with `theme`."""
        super().__init__(parent)
        self._version = 0
        self._last_line = 0
        self._identifiers: tuple[int, set[str]] = (-1, set())
        self.popup_chosen = False  # the user moved into the completion list (or asked for it)
        self.brace_pair: tuple[int, int] | None = None  # lit brace and partner (-1: unmatched)
        set_lexer(self, lexilla.create_lexer(lexilla.Language.CPP))
        self.styles = self._set_up_words()
        self._set_up_view()
        self._set_up_margins()
        self._set_up_markers()
        self.apply_theme(theme)
        self.modified.connect(self._on_modified)
        self.updateUi.connect(self._on_update_ui)
        self.charAdded.connect(self._on_char_added)

    # -- set-up -------------------------------------------------------------------------------

    def _set_up_words(self) -> StyleIds:
        """Keyword sets and identifier sub-styles so CUDA words are coloured apart from C++."""
        self.setKeyWords(0, " ".join(cuda.CPP_KEYWORDS))
        self.setKeyWords(1, " ".join(cuda.CUDA_KEYWORDS))
        self.setKeyWords(3, " ".join(cuda.CUDA_TYPES))
        first = self.allocateSubStyles(StyleIds.IDENTIFIER, 2)
        self.setIdentifiers(first, " ".join(cuda.CUDA_BUILTINS))
        self.setIdentifiers(first + 1, " ".join(cuda.INTRINSICS))
        for key, value in (("fold", "1"), ("fold.comment", "1"), ("fold.preprocessor", "1"),
                           ("fold.compact", "0"), ("lexer.cpp.track.preprocessor", "0")):
            self.setProperty(key, value)
        return StyleIds(builtin=first, intrinsic=first + 1,
                        annotation=self.allocateExtendedStyles(3))

    def _set_up_view(self) -> None:
        """Indentation, guides, current line, brace matching, completion and call-tip behaviour."""
        self.setTabWidth(INDENT)
        self.setIndent(INDENT)
        self.setUseTabs(False)
        self.setTabIndents(True)
        self.setBackSpaceUnIndents(True)
        self.setIndentationGuides(int(Scintilla.IndentView.LookBoth))
        self.setCaretLineVisible(True)
        self.setCaretLineVisibleAlways(True)
        self.setScrollWidthTracking(True)
        self.setScrollWidth(1)
        self.autoCSetIgnoreCase(True)
        self.autoCSetOrder(int(Scintilla.Ordering.Custom))
        self.autoCSetMaxHeight(10)
        self.annotationSetVisible(int(Scintilla.AnnotationVisible.Boxed))
        self.setMouseDwellTime(500)

    def _set_up_margins(self) -> None:
        """Line numbers, a diagnostics marker margin and a clickable fold margin."""
        self.setMarginTypeN(MARGIN_NUMBERS, int(Scintilla.MarginType.Number))
        self.setMarginMaskN(MARGIN_NUMBERS, 0)
        self.setMarginTypeN(MARGIN_MARKERS, int(Scintilla.MarginType.Symbol))
        self.setMarginMaskN(MARGIN_MARKERS, 0b111)
        self.setMarginWidthN(MARGIN_MARKERS, 16)
        self.setMarginSensitiveN(MARGIN_MARKERS, True)
        self.setMarginTypeN(MARGIN_FOLD, int(Scintilla.MarginType.Symbol))
        self.setMarginMaskN(MARGIN_FOLD, FOLD_MASK)
        self.setMarginWidthN(MARGIN_FOLD, 14)
        self.setMarginSensitiveN(MARGIN_FOLD, True)
        auto = Scintilla.AutomaticFold
        self.setAutomaticFold(int(auto.Show) | int(auto.Click) | int(auto.Change))
        self.setFoldFlags(int(Scintilla.FoldFlag.LineAfterContracted))
        self._update_number_margin()

    def _set_up_markers(self) -> None:
        """Fold tree markers, diagnostic symbols, the correlated-line background, squiggles."""
        for number, symbol in ((F.FolderOpen, M.BoxMinus), (F.Folder, M.BoxPlus),
                               (F.FolderSub, M.VLine), (F.FolderTail, M.LCorner),
                               (F.FolderEnd, M.BoxPlusConnected),
                               (F.FolderOpenMid, M.BoxMinusConnected),
                               (F.FolderMidTail, M.TCorner)):
            self.markerDefine(int(number), int(symbol))
        self.markerDefine(MARKER_ERROR, int(M.Circle))
        self.markerDefine(MARKER_WARNING, int(M.ShortArrow))
        self.markerDefine(MARKER_NOTE, int(M.SmallRect))
        self.markerDefine(MARKER_CORRELATED, int(M.Background))
        for indicator, style in ((INDIC_ERROR, Scintilla.IndicatorStyle.Squiggle),
                                 (INDIC_WARNING, Scintilla.IndicatorStyle.Squiggle),
                                 (INDIC_NOTE, Scintilla.IndicatorStyle.Dots)):
            self.indicSetStyle(indicator, int(style))

    def apply_theme(self, theme: Theme) -> None:
        """Colour text, margins, markers and indicators from `theme`."""
        apply_theme_to_editor(self, theme, self.styles)
        self.theme_size = int(theme.editor.get("font_size", 10))

    def set_font_size(self, points: int) -> None:
        """Show the text at `points` (a zoom over the theme's size, kept across themes)."""
        self.setZoom(points - self.theme_size)
        self._update_number_margin()

    def font_size(self) -> int:
        """The size the text is shown at, in points."""
        return self.theme_size + int(self.zoom())

    # -- text and versions --------------------------------------------------------------------

    def text(self) -> str:
        """The whole document as a string."""
        return bytes(self.getText(self.textLength() + 1).data()).decode("utf-8", "replace")

    def set_text(self, text: str) -> None:
        """Replace the document, forget undo history and mark it unmodified."""
        self.setText(text)
        self.emptyUndoBuffer()
        self.setSavePoint()
        self.gotoPos(0)

    def replace_text_undoably(self, text: str) -> None:
        """Replace the whole document as one undo step: Ctrl+Z gives the old text back exactly
        (unlike set_text, which starts a new history)."""
        self.beginUndoAction()
        self.setTargetRange(0, self.textLength())
        self.replaceTarget(-1, text)
        self.endUndoAction()
        self.gotoPos(0)

    @property
    def version(self) -> int:
        """A counter bumped by every text change; pairs with text() in snapshots."""
        return self._version

    def snapshot(self) -> tuple[str, int]:
        """An immutable copy of the text with its version, for work done off the GUI thread."""
        return self.text(), self._version

    def is_modified(self) -> bool:
        """Whether the text differs from the last save point."""
        return bool(self.modify())

    def mark_saved(self) -> None:
        """Record the current text as saved."""
        self.setSavePoint()

    def _on_modified(self, kind: int, *_: object) -> None:
        """Count text changes and resize the line-number margin."""
        flags = Scintilla.ModificationFlags
        if kind & (int(flags.InsertText) | int(flags.DeleteText)):
            self._version += 1
            self._update_number_margin()
            self.textEdited.emit()

    def _update_number_margin(self) -> None:
        """Make the line-number margin wide enough for the last line number."""
        digits = max(3, len(str(self.lineCount())))
        self.setMarginWidthN(MARGIN_NUMBERS, self.textWidth(33, "9" * (digits + 1)))

    # -- positions ----------------------------------------------------------------------------

    def cursor_line(self) -> int:
        """The 1-based line of the caret."""
        return int(self.lineFromPosition(self.currentPos())) + 1

    def position_of(self, line: int, column: int = 1) -> int:
        """Byte position of a 1-based line and column, clamped to the line."""
        index = max(0, min(line - 1, self.lineCount() - 1))
        start = int(self.positionFromLine(index))
        end = int(self.lineEndPosition(index))
        return min(start + max(column - 1, 0), end)

    def go_to(self, line: int, column: int = 1) -> None:
        """Move the caret to a 1-based line and column, unfold and scroll there, take focus."""
        self.ensureVisibleEnforcePolicy(max(line - 1, 0))
        self.gotoPos(self.position_of(line, column))
        self.take_focus()

    def take_focus(self) -> None:
        """Give this editor keyboard focus (ScintillaEdit.setFocus is Scintilla's own message)."""
        QWidget.setFocus(self, Qt.FocusReason.OtherFocusReason)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its line end."""
        raw = bytes(self.getLine(line - 1).data()).decode("utf-8", "replace")
        return raw.rstrip("\r\n")

    # -- diagnostics --------------------------------------------------------------------------

    def set_diagnostics(self, diagnostics: Sequence[DiagnosticLike]) -> None:
        """Show diagnostics as squiggles, margin markers and annotations under their lines."""
        self.clear_diagnostics()
        by_line: dict[int, list[DiagnosticLike]] = {}
        for item in diagnostics:
            if 1 <= item.line <= self.lineCount():
                by_line.setdefault(item.line, []).append(item)
        for line, items in by_line.items():
            worst = min(SEVERITY_MARKERS.get(d.severity, MARKER_NOTE) for d in items)
            self.markerAdd(line - 1, worst)
            for item in items:
                self._squiggle(item)
            text = "\n".join(f"{d.severity}: {d.message}" for d in items)
            self.annotationSetText(line - 1, text)
            # Relative to annotationSetStyleOffset(self.styles.annotation), set by the theme.
            self.annotationSetStyle(line - 1, worst)

    def clear_diagnostics(self) -> None:
        """Remove every diagnostic marker, squiggle and annotation."""
        for marker in (MARKER_ERROR, MARKER_WARNING, MARKER_NOTE):
            self.markerDeleteAll(marker)
        for indicator in SEVERITY_INDICATORS.values():
            self.setIndicatorCurrent(indicator)
            self.indicatorClearRange(0, self.textLength())
        self.annotationClearAll()

    def _squiggle(self, item: DiagnosticLike) -> None:
        """Underline the word a diagnostic points at (or the line's code when no column)."""
        marker = SEVERITY_MARKERS.get(item.severity, MARKER_NOTE)
        if item.column and item.column > 0:
            start = self.position_of(item.line, item.column)
            end = int(self.wordEndPosition(start, True))
            end = end if end > start else min(start + 1, int(self.lineEndPosition(item.line - 1)))
        else:
            start = int(self.lineIndentPosition(item.line - 1))
            end = int(self.lineEndPosition(item.line - 1))
        self.setIndicatorCurrent(SEVERITY_INDICATORS[marker])
        self.indicatorFillRange(start, max(end - start, 1))

    def diagnostic_lines(self) -> dict[int, int]:
        """1-based lines carrying a diagnostic marker, with the marker bit mask (for checks)."""
        found: dict[int, int] = {}
        for line in range(self.lineCount()):
            mask = int(self.markerGet(line)) & 0b111
            if mask:
                found[line + 1] = mask
        return found

    def go_to_diagnostic(self, direction: int = 1) -> int:
        """Move the caret to the next (1) or previous (-1) line carrying a diagnostic, wrapping
        at the ends of the file, and show its annotation; returns that 1-based line (0 when
        the file has none)."""
        mask = (1 << MARKER_ERROR) | (1 << MARKER_WARNING) | (1 << MARKER_NOTE)
        here = int(self.lineFromPosition(self.currentPos()))
        if direction > 0:
            line = int(self.markerNext(here + 1, mask))
            line = line if line >= 0 else int(self.markerNext(0, mask))
        else:
            line = int(self.markerPrevious(here - 1, mask)) if here > 0 else -1
            line = line if line >= 0 else int(self.markerPrevious(self.lineCount() - 1, mask))
        if line < 0:
            return 0
        self.ensureVisibleEnforcePolicy(line)
        self.gotoPos(int(self.lineIndentPosition(line)))
        self.take_focus()
        return line + 1

    def word_at_caret(self) -> str:
        """The selected text, or else the identifier the caret is in or touches ('' when
        neither)."""
        if not self.selectionEmpty():
            return bytes(self.getSelText().data()).decode("utf-8", "replace")
        position = int(self.currentPos())
        start = int(self.wordStartPosition(position, True))
        end = int(self.wordEndPosition(position, True))
        return self._text_range(start, end)

    # -- correlated lines (PTX/SASS) ----------------------------------------------------------

    def highlight_lines(self, lines: Iterable[int]) -> None:
        """Give 1-based `lines` the correlated-line background (source of selected SASS)."""
        self.markerDeleteAll(MARKER_CORRELATED)
        for line in lines:
            if 1 <= line <= self.lineCount():
                self.markerAdd(line - 1, MARKER_CORRELATED)

    # -- editing commands ---------------------------------------------------------------------

    def toggle_comment(self) -> None:
        """Comment or uncomment the lines touched by the selection, as one undo step."""
        first = int(self.lineFromPosition(self.selectionStart()))
        last = int(self.lineFromPosition(self.selectionEnd()))
        if last > first and self.selectionEnd() == self.positionFromLine(last):
            last -= 1
        lines = [self.line_text(n + 1) for n in range(first, last + 1)]
        start = int(self.positionFromLine(first))
        end = int(self.lineEndPosition(last))
        new_text = "\n".join(toggle_comment(lines))
        self.beginUndoAction()
        self.setTargetRange(start, end)
        self.replaceTarget(-1, new_text)
        self.endUndoAction()
        self.setSel(start, start + len(new_text.encode("utf-8")))

    def find_match(self, options: SearchOptions, backwards: bool = False) -> bool:
        """Select the next (or previous) match, wrapping around; False when there is none."""
        return find_in_editor(self, options, backwards)

    def replace_all(self, options: SearchOptions, replacement: str) -> int:
        """Replace every match as one undo step; returns how many were replaced."""
        return replace_all_in_editor(self, options, replacement)

    def show_completions(self, asked: bool = True) -> bool:
        """Offer completions for the word before the caret; False when there are none. Unless
        the user `asked` (Ctrl+Space), a word typed in full or the middle of a word offers
        nothing, and Enter still breaks the line until the user moves into the list."""
        position = int(self.currentPos())
        start = int(self.wordStartPosition(position, True))
        prefix = self._text_range(start, position)
        words = cuda.completions(prefix, self._file_identifiers()) if prefix else []
        if not words or (not asked and self._typed_in_full(prefix, start)):
            return False
        self.popup_chosen = asked
        self.autoCShow(len(prefix.encode("utf-8")), " ".join(words))
        return True

    def _typed_in_full(self, prefix: str, start: int) -> bool:
        """Whether the word at the caret is already complete: a CUDA or C++ word, a word that
        goes on after the caret, or one of the file's identifiers written elsewhere."""
        if int(self.wordEndPosition(start, True)) > int(self.currentPos()):
            return True
        if prefix in cuda.completion_words():
            return True
        return cuda.count_word(self.text(), prefix) > 1

    def in_code(self, position: int) -> bool:
        """Whether `position` lies in code (not in a comment or a string literal)."""
        line_start = int(self.positionFromLine(self.lineFromPosition(position)))
        self.colourise(line_start, position + 1)
        return int(self.styleAt(position)) % INACTIVE_OFFSET not in NOT_CODE_STYLES

    def _file_identifiers(self) -> set[str]:
        """Identifiers of this file, recomputed only when the text changed."""
        version, words = self._identifiers
        if version != self._version:
            words = cuda.file_identifiers(self.text())
            self._identifiers = (self._version, words)
        return words

    def _text_range(self, start: int, end: int) -> str:
        """Text between two byte positions."""
        raw = bytes(self.textRange(start, end).data()) if end > start else b""
        return raw.decode("utf-8", "replace")

    # -- notifications ------------------------------------------------------------------------

    def _on_char_added(self, char: int) -> None:
        """Auto-indent, dedent a closing brace, offer completions and call tips."""
        if char in (10, 13):
            self._auto_indent()
        elif char == ord("}"):
            self._dedent_closing_brace()
        elif char == ord("("):
            self._show_call_tip()
        elif char == ord(")"):
            self.callTipCancel()
        elif char == ord(".") and self.in_code(int(self.currentPos()) - 1):
            self._complete_member()
        elif char in _WORD_CHARS and self.autoCActive():
            self._close_if_complete()
        elif char in _WORD_CHARS and self.in_code(int(self.currentPos()) - 1):
            self._complete_word()

    def _auto_indent(self) -> None:
        """Indent a new line like the previous one, one level deeper after an opening brace."""
        line = int(self.lineFromPosition(self.currentPos()))
        if line == 0:
            return
        indent = indent_after(self.line_text(line), INDENT)
        if indent:
            self.setLineIndentation(line, indent)
            self.gotoPos(self.lineIndentPosition(line))

    def _dedent_closing_brace(self) -> None:
        """Align a '}' typed on an empty line with the line of its opening brace."""
        line = int(self.lineFromPosition(self.currentPos()))
        if self.line_text(line + 1).strip() != "}":
            return
        # braceMatch only pairs braces of the same style: style the brace just typed first.
        self.colourise(0, self.currentPos())
        match = int(self.braceMatch(self.currentPos() - 1, 0))
        if match >= 0:
            indent = int(self.lineIndentation(self.lineFromPosition(match)))
            self.setLineIndentation(line, indent)
            self.gotoPos(self.lineEndPosition(line))

    def _word_before(self, position: int) -> str:
        """The identifier ending at `position`."""
        return self._text_range(int(self.wordStartPosition(position, True)), position)

    def _show_call_tip(self) -> None:
        """Show the signature of a known intrinsic when its '(' is typed."""
        position = int(self.currentPos()) - 1
        tip = cuda.call_tip(self._word_before(position))
        if tip:
            self.callTipShow(position, tip)

    def _complete_member(self) -> None:
        """Offer x, y, z after threadIdx., blockIdx., blockDim. and gridDim."""
        if self._word_before(int(self.currentPos()) - 1) in cuda.CUDA_BUILTINS:
            self.popup_chosen = False
            self.autoCShow(0, " ".join(cuda.DIM_MEMBERS))

    def _complete_word(self) -> None:
        """Offer completions once two characters of a word are typed."""
        position = int(self.currentPos())
        if position - int(self.wordStartPosition(position, True)) >= 2:
            self.show_completions(asked=False)

    def _close_if_complete(self) -> None:
        """Close the list once the word typed is complete and is the entry it shows."""
        position = int(self.currentPos())
        start = int(self.wordStartPosition(position, True))
        prefix = self._text_range(start, position)
        shown = bytes(self.autoCCurrentText().data()).decode("utf-8", "replace")
        if shown == prefix and self._typed_in_full(prefix, start):
            self.autoCCancel()

    def _on_update_ui(self, updated: int) -> None:
        """Match braces and report caret moves."""
        self._match_braces()
        position = int(self.currentPos())
        line = int(self.lineFromPosition(position)) + 1
        self.cursorMoved.emit(line, int(self.column(position)) + 1)
        if line != self._last_line:
            self._last_line = line
            self.cursorLineChanged.emit(line)

    def _match_braces(self) -> None:
        """Highlight the brace at or before the caret and its partner, or flag it unmatched;
        `brace_pair` keeps what is lit (Scintilla cannot be asked)."""
        position = int(self.currentPos())
        for candidate in (position - 1, position):
            if 0 <= candidate < self.textLength() and self.charAt(candidate) & 0xFF in BRACES:
                partner = int(self.braceMatch(candidate, 0))
                if partner >= 0:
                    self.braceHighlight(candidate, partner)
                else:
                    self.braceBadLight(candidate)
                self.brace_pair = (candidate, partner)
                return
        self.braceHighlight(-1, -1)
        self.brace_pair = None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Ctrl+Space opens completion; Enter breaks the line (closing a completion list the
        user has not moved into); everything else is Scintilla's."""
        key = event.key()
        if key == Qt.Key.Key_Space and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.show_completions()
            return
        if self.autoCActive():
            if key in POPUP_KEYS:
                self.popup_chosen = True
            elif key in ENTER_KEYS and not self.popup_chosen:
                self.autoCCancel()
        super().keyPressEvent(event)
