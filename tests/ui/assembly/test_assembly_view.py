"""Issue 17, point 7: the PTX / SASS pane after a real build in the real window. Listings are
coloured and quote their source lines, the caret's line shows how many instructions it made and
steps through them, a clicked instruction is marked, highlights go when the caret moves, and the
compiler's output is in a fixed-width font."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QFont, QFontInfo

from ui.assembly.view import AssemblyView
from ui.editor.cuda_editor import MARKER_CORRELATED, CudaEditor
from ui.main_window import MainWindow

ADD_LINE = 19  # c[i] = a[i] + b[i];  in the vector_add template
INDEX_LINE = 14  # int i = blockIdx.x * blockDim.x + threadIdx.x;
COMMENT_LINE = 2


@pytest.fixture
def built(qtbot: Any, window: MainWindow, kernel_copy: Path) -> CudaEditor:
    """vector_add built in the window; its editor."""
    editor = window.open_files([kernel_copy])[0]
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        assert window.build()
    assert blocker.args[0]["ok"]
    window.show_pane("assembly")
    return editor


def caret_to(qtbot: Any, editor: CudaEditor, view: AssemblyView, line: int) -> None:
    """Move the editor's caret and wait for the pane to follow (Scintilla reports when idle)."""
    editor.go_to(line)
    qtbot.waitUntil(lambda: view.line_label.text().startswith(f"Line {line}:"), timeout=5000)


def formats_of(view: AssemblyView, block: int) -> list[Any]:
    """The colour ranges the highlighter gave a block of the SASS view."""
    return list(view.sass_view.document().findBlockByNumber(block).layout().formats())


def test_sass_quotes_its_source_lines_and_is_coloured(built: CudaEditor,
                                                      window: MainWindow) -> None:
    view = window.assembly_view
    text = view.sass_view.toPlainText().splitlines()
    quoted = [line for line in text if line.startswith("//")]
    assert f"//   {ADD_LINE} | c[i] = a[i] + b[i];" in quoted
    assert len(quoted) >= 3 and len(text) == len(view.rows) + len(quoted)
    index = next(i for i, row in enumerate(view.rows) if row.text.startswith("S2R R0"))
    first = view.block_of_row(index)
    assert view.sass_colours.kind_at(first, text[first].index("S2R") + 1) == "opcode"
    assert view.sass_colours.kind_at(first, text[first].index("R0")) == "register"
    source_block = text.index(f"//   {ADD_LINE} | c[i] = a[i] + b[i];")
    assert view.sass_colours.kind_at(source_block, 10) == "source"
    bold = [r for r in formats_of(view, first) if r.format.fontWeight() == QFont.Weight.Bold]
    assert bold and text[first][bold[0].start:bold[0].start + bold[0].length] == "S2R"
    assert any(".loc" in line and "// c[i] = a[i] + b[i];" in line
               for line in view.ptx_view.toPlainText().splitlines())
    view.interleave_box.setChecked(False)
    assert not any(line.startswith("//") for line in view.sass_view.toPlainText().splitlines())
    assert view.row_at_block(0) == 0


def test_the_carets_line_counts_its_instructions_and_steps_through_them(
        qtbot: Any, built: CudaEditor, window: MainWindow) -> None:
    view = window.assembly_view
    caret_to(qtbot, built, view, ADD_LINE)
    rows = [i for i, row in enumerate(view.rows) if row.line == ADD_LINE]
    assert len(rows) > 1
    assert view.line_label.text() == f"Line {ADD_LINE}: {len(rows)} instructions (1 of {len(rows)})"
    assert view.marked_block() == view.block_of_row(rows[0])
    view.next_button.click()
    assert view.current_row() == rows[1] and view.marked_block() == view.block_of_row(rows[1])
    assert view.line_label.text().endswith(f"(2 of {len(rows)})")
    view.previous_button.click()
    view.previous_button.click()  # wraps round to the last
    assert view.current_row() == rows[-1]
    assert sorted(view.highlighted_rows(view.sass_view)) == [view.block_of_row(r) for r in rows]


def test_a_clicked_instruction_is_marked_and_highlights_go_when_the_caret_moves(
        qtbot: Any, built: CudaEditor, window: MainWindow) -> None:
    view = window.assembly_view
    rows = [i for i, row in enumerate(view.rows) if row.line == INDEX_LINE]
    clicked = rows[-1]
    cursor = view.sass_view.textCursor()
    cursor.setPosition(view.sass_view.document().findBlockByNumber(
        view.block_of_row(clicked)).position())
    view.sass_view.setTextCursor(cursor)
    assert view.marked_block() == view.block_of_row(clicked)
    assert view.line_label.text().endswith(f"({len(rows)} of {len(rows)})")
    assert built.markerGet(INDEX_LINE - 1) & (1 << MARKER_CORRELATED)
    caret_to(qtbot, built, view, COMMENT_LINE)
    assert not built.markerGet(INDEX_LINE - 1) & (1 << MARKER_CORRELATED)
    assert view.highlighted_rows(view.sass_view) == [] and view.marked_block() == -1
    assert view.line_label.text() == f"Line {COMMENT_LINE}: no instructions in this kernel"
    assert not view.next_button.isEnabled()


def test_the_compilers_output_is_in_a_fixed_width_font(built: CudaEditor,
                                                       window: MainWindow) -> None:
    assert QFontInfo(window.compile_pane.log.font()).fixedPitch()
