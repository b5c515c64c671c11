"""Issue 25, point 9: the window by keyboard alone, through real key presses on the real
window. Alt+0..8 put the focus in the editor and each pane, F8 / Shift+F8 walk the editor's
diagnostics, Alt+Down / Alt+Up step through the caret line's SASS after a real build, Ctrl+F
starts from the word under the caret, Ctrl+Enter sends the Assistant's question; each key is
in its menu entry and in Help > Keyboard shortcuts."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QWidget
from stand_in import WordTokens

from app.assist.model.answer import Answer
from ui.actions import COMMANDS, FOCUS_TARGETS
from ui.help_dialogs import ShortcutsDialog
from ui.main_window import MainWindow

ALT = Qt.KeyboardModifier.AltModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier
ADD_LINE = 19  # c[i] = a[i] + b[i];  in the vector_add template


@dataclass(frozen=True)
class Note:
    """A diagnostic as the compiler pane hands it to the editor."""

    line: int
    column: int
    severity: str
    message: str


def focused() -> QWidget:
    """The widget with the keyboard focus (asserting there is one)."""
    widget = QApplication.focusWidget()
    assert widget is not None
    return widget


def press(qtbot: Any, window: MainWindow, key: Qt.Key,
          modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """A real key press on whatever has the focus in the window."""
    qtbot.keyClick(QApplication.focusWidget() or window, key, modifiers)


def test_alt_digits_put_the_focus_in_the_editor_and_every_pane(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    order = [name for name, _, _ in FOCUS_TARGETS]
    for digit, name in reversed(list(enumerate(order))):  # the editor last: away, then back
        press(qtbot, window, Qt.Key(Qt.Key.Key_0 + digit), ALT)
        if name == "editor":
            qtbot.waitUntil(lambda: focused() is editor, timeout=2000)
        else:
            dock = window.docks[name]
            qtbot.waitUntil(lambda d=dock: d.isAncestorOf(focused()) or d.widget() is focused(),
                            timeout=2000)
            assert not dock.visibleRegion().isEmpty(), name  # brought forward, not behind a tab
    press(qtbot, window, Qt.Key.Key_8, ALT)
    assert focused() is window.assistant_pane.question  # ready to type the question


def test_f8_and_shift_f8_walk_the_diagnostics_wrapping(qtbot: Any, window: MainWindow,
                                                       kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    editor.set_diagnostics([Note(5, 3, "warning", "unused"), Note(14, 9, "error", "bad"),
                            Note(19, 1, "error", "worse")])
    editor.go_to(1)
    lines = []
    for _ in range(4):
        press(qtbot, window, Qt.Key.Key_F8)
        lines.append(editor.cursor_line())
    assert lines == [5, 14, 19, 5]
    press(qtbot, window, Qt.Key.Key_F8, SHIFT)
    assert editor.cursor_line() == 19  # backwards from the first wraps to the last
    press(qtbot, window, Qt.Key.Key_F8, SHIFT)
    assert editor.cursor_line() == 14
    assert focused() is editor


def test_alt_down_and_up_step_through_the_lines_sass_from_the_editor(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as built:
        press(qtbot, window, Qt.Key.Key_B, CTRL)
    assert built.args[0]["ok"]
    view = window.assembly_view
    editor.go_to(ADD_LINE)
    qtbot.waitUntil(lambda: view.line_label.text().startswith(f"Line {ADD_LINE}:"),
                    timeout=5000)
    rows = view.select_source_line(ADD_LINE)
    assert len(rows) > 2
    assert focused() is editor
    press(qtbot, window, Qt.Key.Key_Down, ALT)
    assert view.current_row() == rows[1]
    press(qtbot, window, Qt.Key.Key_Down, ALT)
    assert view.current_row() == rows[2]
    press(qtbot, window, Qt.Key.Key_Up, ALT)
    press(qtbot, window, Qt.Key.Key_Up, ALT)
    press(qtbot, window, Qt.Key.Key_Up, ALT)  # before the first wraps to the last
    assert view.current_row() == rows[-1]
    assert f"({len(rows)} of {len(rows)})" in view.line_label.text()
    assert not window.docks["assembly"].visibleRegion().isEmpty()  # brought forward
    assert editor.cursor_line() == ADD_LINE and focused() is editor  # the caret stayed


def test_ctrl_f_starts_from_the_word_under_the_caret_or_the_selection(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    editor.go_to(ADD_LINE, 5)  # in "c[i] = a[i] + b[i];": between the 'i' and ']' of a[i]
    line_start = editor.position_of(ADD_LINE, 1)
    text = editor.line_text(ADD_LINE)
    editor.gotoPos(line_start + text.index("a[i]"))  # at the start of "a"
    press(qtbot, window, Qt.Key.Key_F, CTRL)
    bar = window.find_bar
    assert bar.isVisible() and bar.find_field.text() == "a"
    assert focused() is bar.find_field
    press(qtbot, window, Qt.Key.Key_Escape)
    editor.go_to(14)  # int i = blockIdx.x * ...
    start = editor.position_of(14, 1) + editor.line_text(14).index("blockIdx") + 3
    editor.gotoPos(start)  # inside the word
    press(qtbot, window, Qt.Key.Key_F, CTRL)
    assert bar.find_field.text() == "blockIdx"
    press(qtbot, window, Qt.Key.Key_Escape)
    editor.setSel(start - 3, start + 7)  # "blockIdx.x" selected: the selection wins
    press(qtbot, window, Qt.Key.Key_F, CTRL)
    assert bar.find_field.text() == "blockIdx.x"


class QuickSession(WordTokens):
    """A stand-in model that answers at once and keeps what it was asked."""

    def __init__(self, progress: Callable[[str, float], None]) -> None:
        """Loaded at once."""
        progress("ready", 1.0)
        self.asked: list[str] = []

    def generate(self, messages: list[Any], max_new_tokens: int,
                 on_token: Callable[[str], None], stop: threading.Event) -> Answer:
        """One token, then done."""
        self.asked.append(str(messages[-1]["content"]))
        on_token("ok")
        return Answer("ok", "stop", 10, 1, 1.0)


@pytest.fixture
def assisted(qtbot: Any, tmp_path: Path, prompter: Any) -> Iterator[
        tuple[MainWindow, list[QuickSession]]]:
    """A window whose assistant is QuickSession."""
    sessions: list[QuickSession] = []

    def factory(progress: Callable[[str, float], None], _adapter: str) -> QuickSession:
        sessions.append(QuickSession(progress))
        return sessions[-1]

    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=factory)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    yield window, sessions
    if window.assistant is not None:
        window.assistant.shutdown()
    window.runner.shutdown()


def test_ctrl_enter_sends_the_assistants_question(qtbot: Any, assisted: Any,
                                                  kernel_copy: Path) -> None:
    window, sessions = assisted
    window.open_files([kernel_copy])
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    press(qtbot, window, Qt.Key.Key_8, ALT)
    box = window.assistant_pane.question
    assert focused() is box
    qtbot.keyClicks(box, "why a grid")
    press(qtbot, window, Qt.Key.Key_Return)  # Enter alone breaks the line
    qtbot.keyClicks(box, "stride loop?")
    assert not sessions
    press(qtbot, window, Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: bool(sessions) and bool(sessions[0].asked), timeout=30000)
    assert "why a grid\nstride loop?" in sessions[0].asked[0]
    assert "Ctrl+Enter" in window.assistant_pane.send_button.toolTip()


def test_every_key_is_in_its_menu_entry_and_in_the_shortcuts_list(window: MainWindow) -> None:
    dialog = window.show_dialog("shortcuts")
    assert isinstance(dialog, ShortcutsDialog)
    for name in ("next_diagnostic", "previous_diagnostic", "next_instruction",
                 "previous_instruction", *(f"focus_{n}" for n, _, _ in FOCUS_TARGETS)):
        keys = COMMANDS[name][2]
        action = window.actions_by_name[name]
        assert action.shortcut() == QKeySequence(keys)  # shown beside the menu entry
        assert action in window.menuBar().actions()[5].menu().actions()  # the Go menu
        assert dialog.keys_of(COMMANDS[name][1].replace("&", "")) == keys
    assert dialog.keys_of("Send to the assistant") == "Ctrl+Enter"
    dialog.close()


def test_no_two_commands_share_a_key() -> None:
    keys = [QKeySequence(shortcut).toString() for _, _, shortcut, _ in COMMANDS.values()
            if shortcut]
    assert len(keys) == len(set(keys))
