"""The real window, offscreen: templates, editing, saving, shortcuts, layout, find/replace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gui_support import ScriptedPrompter
from PySide6.QtCore import Qt

from ui.main_window import MainWindow

EXPECTED_SHORTCUTS = {"save": "Ctrl+S", "build": "Ctrl+B", "verify": "F5", "bench": "Ctrl+F5",
                      "find": "Ctrl+F", "replace": "Ctrl+H", "comment": "Ctrl+/",
                      "new": "Ctrl+N", "open": "Ctrl+O", "cancel": "Shift+F5",
                      "undo": "Ctrl+Z", "redo": "Ctrl+Shift+Z", "cut": "Ctrl+X", "copy": "Ctrl+C",
                      "paste": "Ctrl+V", "go_to_line": "Ctrl+G", "settings": "Ctrl+,",
                      "shortcuts": "F1"}


def test_actions_carry_the_documented_shortcuts(window: MainWindow) -> None:
    shortcuts = {name: window.actions_by_name[name].shortcut().toString()
                 for name in EXPECTED_SHORTCUTS}
    assert shortcuts == EXPECTED_SHORTCUTS
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus == ["&File", "&Edit", "&Build", "&Run", "&View", "&Go", "&Help"]


def test_new_from_template_edit_and_save_with_ctrl_s(qtbot: Any, window: MainWindow,
                                                     tmp_path: Path) -> None:
    editor = window.new_from_template("vector_add", tmp_path)
    assert editor is not None
    source = tmp_path / "vector_add" / "vector_add.cu"
    assert window.tabs.document(editor).path == source
    assert window.spec_panel.path == source.with_suffix(".toml")
    assert window.spec_panel.spec() is not None  # the template's spec validates
    editor.gotoPos(editor.lineEndPosition(0))
    qtbot.keyClicks(editor, " (edited)")
    assert editor.is_modified() and window.tabs.tabText(0).endswith("\u25cf")
    qtbot.keyClick(editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert source.read_text().splitlines()[0].endswith("one thread per element. (edited)")
    assert not editor.is_modified() and window.tabs.tabText(0) == "vector_add.cu"
    assert sorted(p.name for p in source.parent.iterdir()) == [
        "vector_add.cu", "vector_add.toml", "vector_add_ref.py"]  # no temporary files left


def test_a_template_never_overwrites_an_existing_kernel(window: MainWindow,
                                                        tmp_path: Path) -> None:
    (tmp_path / "vector_add").mkdir()
    (tmp_path / "vector_add" / "vector_add.cu").write_text("// mine\n")
    assert window.new_from_template("vector_add", tmp_path) is None
    assert (tmp_path / "vector_add" / "vector_add.cu").read_text() == "// mine\n"
    assert "already exists" in window.messages.messages()[-1][1]


def test_ctrl_slash_comments_lines_from_inside_the_editor(qtbot: Any, window: MainWindow,
                                                          kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    editor.take_focus()
    editor.gotoLine(13)
    qtbot.keyClick(editor, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert editor.line_text(14) == "    // int i = blockIdx.x * blockDim.x + threadIdx.x;"


def test_find_and_replace_bar(qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    editor.take_focus()
    qtbot.keyClick(editor, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    bar = window.find_bar
    assert bar.isVisible() and bar.replace_field.isVisible()
    bar.find_field.setText(r"\b(a|b)\[i\]")
    bar.regex_box.setChecked(True)
    assert bar.status.text() == "2 matches"
    qtbot.keyClick(bar.find_field, Qt.Key.Key_Return)
    assert editor.getSelText().data() == b"a[i]"
    bar.replace_field.setText(r"__ldg(&\1[i])")
    assert bar.replace_all() == 2
    assert "c[i] = __ldg(&a[i]) + __ldg(&b[i]);" in editor.text()
    qtbot.keyClick(bar.find_field, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_a_failed_save_keeps_the_text_and_says_what_to_do(qtbot: Any, window: MainWindow,
                                                          prompter: ScriptedPrompter,
                                                          tmp_path: Path) -> None:
    editor = window.tabs.add_buffer("__global__ void k() {}\n", None)
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    prompter.save_path = str(blocker / "k.cu")
    assert not window.tabs.save(editor)
    level, text = window.messages.messages()[-1]
    assert level == "error" and "Could not save" in text and "Save As" in text
    assert editor.text() == "__global__ void k() {}\n"


def test_closing_with_unsaved_changes_asks_and_cancel_keeps_the_window(
        qtbot: Any, window: MainWindow, prompter: ScriptedPrompter, kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    editor.insertText(0, "// change\n")
    prompter.unsaved = "cancel"
    assert not window.close()
    assert window.isVisible() and window.tabs.count() == 1
    assert prompter.asked[-1] == ("unsaved", "vector_add.cu")
    prompter.unsaved = "discard"


def test_dock_layout_is_saved_and_restored(qtbot: Any, tmp_path: Path,
                                           prompter: ScriptedPrompter) -> None:
    settings = tmp_path / "layout.ini"
    first = MainWindow(settings_path=settings, prompter=prompter, offer_recovery=False)
    qtbot.addWidget(first)
    first.show()
    first.docks["messages"].close()
    first.docks["results"].raise_()
    assert first.close()
    second = MainWindow(settings_path=settings, prompter=prompter, offer_recovery=False)
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert second.docks["messages"].isHidden()
    assert not second.docks["spec"].isHidden()
    second.reset_layout()
    assert not second.docks["messages"].isHidden()


def test_spec_panel_validates_as_you_type_and_a_bad_spec_blocks_a_run(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    panel = window.spec_panel
    panel.fields["block"].setText("256, 0")
    qtbot.waitUntil(lambda: panel.problems.count() > 0, timeout=2000)
    assert "[launch].block" in panel.problems.item(0).text()
    assert "border" in panel.fields["block"].styleSheet()
    assert not window.verify()
    assert "The spec has problems" in window.messages.messages()[-1][1]
    panel.fields["block"].setText("128")
    assert panel.validate_now() == [] and panel.save()
    assert 'block = ["128"]' in kernel_copy.with_suffix(".toml").read_text()


def test_the_status_bar_shows_backend_offline_badge_and_worker_state(
        qtbot: Any, window: MainWindow) -> None:
    status = window.status
    qtbot.waitUntil(lambda: "detecting" not in status.backend_label.text(), timeout=15000)
    assert status.backend_label.text().startswith("backend: ")
    assert status.offline_label.text() in ("OFFLINE", "NOT OFFLINE")
    assert status.worker_label.text() == "worker: idle"


def test_a_builtin_template_is_saved_as_a_copy_never_over_the_gallery(
        window: MainWindow, prompter: ScriptedPrompter, tmp_path: Path) -> None:
    from app.base.paths import RESOURCES

    template = RESOURCES / "kernels" / "vector_add" / "vector_add.cu"
    before = template.read_text()
    editor = window.open_files([template])[0]
    editor.insertText(0, "// mine\n")
    prompter.save_path = str(tmp_path / "mine.cu")
    assert window.tabs.save(editor)
    assert prompter.asked[-1][0] == "save_path" and "kernels" in prompter.asked[-1][1]
    assert template.read_text() == before
    assert (tmp_path / "mine.cu").read_text() == "// mine\n" + before


def test_switching_theme_recolours_open_editors(window: MainWindow, kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    dark = editor.styleBack(32)
    window.set_theme("light")
    assert editor.styleBack(32) != dark and window.themes.theme.name == "light"
    window.set_theme("dark")
    assert editor.styleBack(32) == dark
