"""Issue 17, point 3: completion stays out of comments and strings and off words typed in full,
and Enter breaks the line unless the user moved into the list. Typed into the real window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from ui.editor.cuda_editor import CudaEditor
from ui.main_window import MainWindow


def new_line_at_end(qtbot: Any, window: MainWindow, kernel: Path) -> CudaEditor:
    """The kernel open in the window, the caret on a fresh line after its last line."""
    editor = window.open_files([kernel])[0]
    editor.take_focus()
    editor.gotoPos(editor.textLength())
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    return editor


def test_no_list_opens_inside_comments_or_strings(qtbot: Any, window: MainWindow,
                                                  kernel_copy: Path) -> None:
    editor = new_line_at_end(qtbot, window, kernel_copy)
    qtbot.keyClicks(editor, "// blockD")
    assert not editor.autoCActive()
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "/* atomicA */ const char* s = \"threadI")
    assert not editor.autoCActive()
    qtbot.keyClicks(editor, "\"; int t = threa")
    assert editor.autoCActive()  # code again: the list opens
    editor.autoCCancel()


def test_a_word_typed_in_full_opens_nothing(qtbot: Any, window: MainWindow,
                                            kernel_copy: Path) -> None:
    editor = new_line_at_end(qtbot, window, kernel_copy)
    qtbot.keyClicks(editor, "int x = blockIdx")  # complete, even though blockIdx.x follows
    assert not editor.autoCActive()
    qtbot.keyClicks(editor, ".x + blockD")
    assert editor.autoCActive()
    editor.autoCCancel()
    qtbot.keyClicks(editor, "im.x; float v = __restrict__")  # in the file already: complete
    assert not editor.autoCActive()


def test_enter_breaks_the_line_unless_the_user_moved_into_the_list(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    editor = new_line_at_end(qtbot, window, kernel_copy)
    lines = editor.lineCount()
    qtbot.keyClicks(editor, "int t = thre")
    assert editor.autoCActive()
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert not editor.autoCActive()
    assert editor.lineCount() == lines + 1
    assert editor.line_text(lines) == "int t = thre"  # nothing was completed
    qtbot.keyClicks(editor, "int u = atomicA")
    assert editor.autoCActive()
    qtbot.keyClick(editor, Qt.Key.Key_Down)
    qtbot.keyClick(editor, Qt.Key.Key_Up)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.line_text(lines + 1) == "int u = atomicAdd"  # chosen from the list
    assert editor.lineCount() == lines + 1
    qtbot.keyClicks(editor, " + atomicA")
    qtbot.keyClick(editor, Qt.Key.Key_Tab)  # Tab takes the word without moving first
    assert editor.line_text(lines + 1) == "int u = atomicAdd + atomicAdd"
