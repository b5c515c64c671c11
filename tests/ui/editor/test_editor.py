"""The CUDA editor on its own: highlighting, folding, indentation, comments, search,
completion, call tips and diagnostics, driven through its real key handling."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from ui.editor.cuda_editor import (
    INDIC_ERROR,
    INDIC_WARNING,
    MARKER_ERROR,
    MARKER_WARNING,
    CudaEditor,
)
from ui.editor.search import SearchOptions
from ui.theme import load_theme

KERNEL = """__global__ void k(float4* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __syncthreads();
    if (i < n) {
        a[i].x = 1.0f;
    }
}
"""


@pytest.fixture
def editor(qtbot: Any) -> CudaEditor:
    """An editor showing KERNEL."""
    widget = CudaEditor(load_theme("dark"))
    qtbot.addWidget(widget)
    widget.set_text(KERNEL)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def style_of(editor: CudaEditor, word: str) -> int:
    """The lexer style at the first occurrence of `word`."""
    editor.colourise(0, -1)
    return int(editor.styleAt(editor.text().encode().index(word.encode()))) & 0xFF


def type_at_end_of_line(qtbot: Any, editor: CudaEditor, line: int, text: str) -> None:
    """Put the caret at the end of a 1-based line and type."""
    editor.gotoPos(editor.lineEndPosition(line - 1))
    for index, part in enumerate(text.split("\n")):
        if index:
            editor.autoCCancel()
            qtbot.keyClick(editor, Qt.Key.Key_Return)
        qtbot.keyClicks(editor, part)  # QTest cannot type a newline character


def test_cuda_words_are_highlighted_apart_from_cpp(editor: CudaEditor) -> None:
    styles = {word: style_of(editor, word)
              for word in ("int", "__global__", "float4", "threadIdx", "__syncthreads", "k(")}
    assert len({styles["int"], styles["__global__"], styles["float4"], styles["threadIdx"],
                styles["__syncthreads"]}) == 5, styles
    assert styles["threadIdx"] == editor.styles.builtin
    assert styles["__syncthreads"] == editor.styles.intrinsic
    assert styles["k("] == 11  # a plain identifier


def test_blocks_fold_and_the_fold_margin_is_clickable(editor: CudaEditor) -> None:
    header = 0x2000
    assert editor.foldLevel(0) & header and editor.foldLevel(3) & header
    assert not editor.foldLevel(1) & header
    editor.foldLine(3, 0)  # contract the if-block
    assert not editor.foldExpanded(3) and not editor.lineVisible(4)
    assert editor.marginSensitiveN(2) and editor.marginWidthN(0) > 0


def test_new_lines_are_indented_and_closing_braces_dedented(qtbot: Any,
                                                            editor: CudaEditor) -> None:
    type_at_end_of_line(qtbot, editor, 4, "")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.line_text(5) == " " * 8
    qtbot.keyClicks(editor, "a[0].y = 2;")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "}")
    assert editor.line_text(6) == "    }"


def test_toggle_comment_round_trips(editor: CudaEditor) -> None:
    editor.setSel(editor.positionFromLine(1), editor.positionFromLine(3))
    editor.toggle_comment()
    assert editor.line_text(2) == "    // int i = blockIdx.x * blockDim.x + threadIdx.x;"
    assert editor.line_text(3) == "    // __syncthreads();"
    assert editor.line_text(4) == "    if (i < n) {"
    editor.toggle_comment()
    assert editor.text() == KERNEL


def test_find_plain_regex_whole_word_and_replace_all(editor: CudaEditor) -> None:
    assert editor.find_match(SearchOptions("blockdim"))
    assert editor.getSelText().data() == b"blockDim"
    assert not editor.find_match(SearchOptions("blockdim", case_sensitive=True))
    assert editor.find_match(SearchOptions(r"i\s*<\s*n", regex=True))
    assert editor.getSelText().data() == b"i < n"
    assert editor.replace_all(SearchOptions("i", whole_word=True), "idx") == 3
    assert "int idx = " in editor.text() and "a[idx].x" in editor.text()
    assert editor.replace_all(SearchOptions(r"(\w+)Idx\.x", regex=True), r"\1Idx.y") == 2
    assert "blockIdx.y * blockDim.x + threadIdx.y" in editor.text()
    editor.undo()
    assert "blockIdx.x * blockDim.x + threadIdx.x" in editor.text()


def test_completion_offers_cuda_words_and_the_files_identifiers(qtbot: Any,
                                                                editor: CudaEditor) -> None:
    type_at_end_of_line(qtbot, editor, 1, "\nint my_counter;\natomicA")
    assert editor.autoCActive()
    assert editor.autoCCurrentText().data() == b"atomicAdd"
    editor.autoCCancel()
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "my_c")
    assert editor.autoCActive() and editor.autoCCurrentText().data() == b"my_counter"
    editor.autoCCancel()
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "threadIdx.")
    assert editor.autoCActive() and editor.autoCCurrentText().data() == b"x"
    editor.autoCCancel()


def test_typing_an_intrinsic_call_shows_its_signature(qtbot: Any, editor: CudaEditor) -> None:
    type_at_end_of_line(qtbot, editor, 3, "\nfloat v = __shfl_down_sync")
    editor.autoCCancel()
    qtbot.keyClicks(editor, "(")
    assert editor.callTipActive()
    qtbot.keyClicks(editor, "0xffffffff, v, 1)")
    assert not editor.callTipActive()


class Diag:
    """A diagnostic as the compile pane hands it over."""

    def __init__(self, line: int, column: int, severity: str, message: str) -> None:
        """Plain attributes."""
        self.line, self.column, self.severity, self.message = line, column, severity, message


def test_diagnostics_become_markers_squiggles_and_annotations(editor: CudaEditor) -> None:
    editor.set_diagnostics([Diag(2, 13, "error", "identifier \"blockIdy\" is undefined"),
                            Diag(5, 0, "warning", "unused"), Diag(99, 1, "error", "elsewhere")])
    assert editor.diagnostic_lines() == {2: 1 << MARKER_ERROR, 5: 1 << MARKER_WARNING}
    assert editor.annotationText(1).data() == b'error: identifier "blockIdy" is undefined'
    assert editor.annotationStyle(1) == MARKER_ERROR  # relative to the annotation style offset
    assert editor.annotationStyle(4) == MARKER_WARNING
    word = editor.position_of(2, 13)
    assert editor.indicatorValueAt(INDIC_ERROR, word) and \
        editor.indicatorValueAt(INDIC_ERROR, word + 7)
    assert not editor.indicatorValueAt(INDIC_ERROR, word + 9)
    assert editor.indicatorValueAt(INDIC_WARNING, editor.position_of(5, 9))
    editor.clear_diagnostics()
    assert editor.diagnostic_lines() == {} and editor.annotationText(1).data() == b""


def test_snapshots_carry_a_version_that_moves_with_every_edit(qtbot: Any,
                                                             editor: CudaEditor) -> None:
    text, version = editor.snapshot()
    assert text == KERNEL and not editor.is_modified()
    type_at_end_of_line(qtbot, editor, 1, " ")
    assert editor.version > version and editor.is_modified()
