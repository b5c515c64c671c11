"""Colouring the CUDA editor from a theme: lexer styles, margins, markers, indicators."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyside6_scintilla import Scintilla, ScintillaEdit

from app.compile.model import Severity
from ui.editor.search import INDIC_FOUND
from ui.fonts import usable_family
from ui.theme import Theme, abgr, bgr

STYLE_DEFAULT, STYLE_LINENUMBER, STYLE_BRACELIGHT, STYLE_BRACEBAD = 32, 33, 34, 35
STYLE_INDENTGUIDE, STYLE_CALLTIP = 37, 38
INACTIVE_OFFSET = 64

# Lexilla's SCE_C_* style numbers, grouped by the theme's syntax keys.
CPP_STYLES: dict[str, tuple[int, ...]] = {
    "comment": (1, 2, 3, 15, 17, 18, 23, 24),
    "number": (4,),
    "keyword": (5,),
    "string": (6, 7, 12, 13, 20, 21, 22, 27),
    "preprocessor": (9,),
    "operator": (10,),
    "identifier": (11,),
    "cuda_keyword": (16,),
    "cuda_type": (19,),
}


@dataclass(frozen=True)
class StyleIds:
    """Style numbers the editor allocated at run time (sub-styles, annotation styles)."""

    IDENTIFIER = 11
    builtin: int
    intrinsic: int
    annotation: int


def _style(editor: ScintillaEdit, number: int, spec: dict[str, Any]) -> None:
    """Apply one syntax entry (fore, bold, italic) to a style number."""
    editor.styleSetFore(number, bgr(spec.get("fore", "#000000")))
    editor.styleSetBold(number, bool(spec.get("bold", False)))
    editor.styleSetItalic(number, bool(spec.get("italic", False)))


def _base(editor: ScintillaEdit, colours: dict[str, Any]) -> None:
    """Default font and colours, copied to every style before the syntax colours."""
    editor.styleResetDefault()
    editor.styleSetFont(STYLE_DEFAULT, usable_family(str(colours.get("font") or "")))
    editor.styleSetSize(STYLE_DEFAULT, int(colours.get("font_size", 10)))
    editor.styleSetFore(STYLE_DEFAULT, bgr(colours["foreground"]))
    editor.styleSetBack(STYLE_DEFAULT, bgr(colours["background"]))
    editor.styleClearAll()


def _syntax(editor: ScintillaEdit, theme: Theme, ids: StyleIds) -> None:
    """Lexer styles, their inactive (#if 0) twins, and the CUDA sub-styles."""
    inactive = theme.syntax.get("inactive", {"fore": "#808080"})
    for key, numbers in CPP_STYLES.items():
        for number in numbers:
            _style(editor, number, theme.syntax.get(key, {}))
            _style(editor, number + INACTIVE_OFFSET, inactive)
    _style(editor, ids.builtin, theme.syntax.get("builtin", {}))
    _style(editor, ids.intrinsic, theme.syntax.get("intrinsic", {}))


def _chrome(editor: ScintillaEdit, colours: dict[str, Any]) -> None:
    """Margins, caret, current line, selection, guides and braces."""
    element = Scintilla.Element
    editor.styleSetFore(STYLE_LINENUMBER, bgr(colours["margin_foreground"]))
    editor.styleSetBack(STYLE_LINENUMBER, bgr(colours["margin_background"]))
    for margin in range(3):
        editor.setMarginBackN(margin, bgr(colours["margin_background"]))
    editor.setFoldMarginColour(True, bgr(colours["fold_margin"]))
    editor.setFoldMarginHiColour(True, bgr(colours["fold_margin"]))
    editor.setElementColour(int(element.Caret), abgr(colours["caret"]))
    editor.setElementColour(int(element.CaretLineBack), abgr(colours["caret_line"]))
    editor.setElementColour(int(element.SelectionBack), abgr(colours["selection"]))
    editor.setElementColour(int(element.SelectionInactiveBack), abgr(colours["selection"], 160))
    editor.setElementColour(int(element.List), abgr(colours["foreground"]))
    editor.setElementColour(int(element.ListBack), abgr(colours["margin_background"]))
    editor.setElementColour(int(element.ListSelectedBack), abgr(colours["selection"]))
    editor.setElementColour(int(element.ListSelected), abgr(colours["foreground"]))
    editor.styleSetFore(STYLE_INDENTGUIDE, bgr(colours["indent_guide"]))
    editor.styleSetFore(STYLE_BRACELIGHT, bgr(colours["brace_match"]))
    editor.styleSetBold(STYLE_BRACELIGHT, True)
    editor.styleSetFore(STYLE_BRACEBAD, bgr(colours["brace_bad"]))
    editor.styleSetBold(STYLE_BRACEBAD, True)
    editor.indicSetStyle(INDIC_FOUND, int(Scintilla.IndicatorStyle.StraightBox))
    editor.indicSetFore(INDIC_FOUND, bgr(colours["find"]))
    editor.indicSetAlpha(INDIC_FOUND, 70)
    editor.indicSetUnder(INDIC_FOUND, True)
    for number in range(25, 32):
        editor.markerSetFore(number, bgr(colours["margin_background"]))
        editor.markerSetBack(number, bgr(colours["margin_foreground"]))


def _diagnostics(editor: ScintillaEdit, theme: Theme, ids: StyleIds) -> None:
    """Marker, squiggle and annotation colours for errors, warnings and notes."""
    colours = theme.diagnostics
    editor.annotationSetStyleOffset(ids.annotation)
    for index, severity in enumerate(Severity):  # marker 0, 1, 2: error, warning, note
        colour = colours.get(severity, "#ff0000")
        editor.markerSetFore(index, bgr(colour))
        editor.markerSetBack(index, bgr(colour))
        editor.indicSetFore(8 + index, bgr(colour))
        style = ids.annotation + index
        editor.styleSetFore(style, bgr(colour))
        editor.styleSetBack(style, bgr(colours.get(f"{severity}_annotation_back", "#000000")))
        editor.styleSetItalic(style, True)
    editor.markerSetBack(3, bgr(theme.editor.get("correlated_line", "#335533")))


def apply_theme_to_editor(editor: ScintillaEdit, theme: Theme, ids: StyleIds) -> None:
    """Colour the whole editor from `theme`."""
    _base(editor, theme.editor)
    _syntax(editor, theme, ids)
    _chrome(editor, theme.editor)
    _diagnostics(editor, theme, ids)
    editor.colourise(0, -1)
