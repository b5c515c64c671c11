"""Issue 17, point 8: the IDE basics, through the real window. Help (shortcuts, about), Edit's
undo/redo/cut/copy/paste, recent files, Go to line, the title, tab tool tips, naming a kernel
made from a template, the Settings dialog, open tabs restored at start, and panes usable at
1400x900."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gui_support import ScriptedPrompter
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMenu, QScrollArea, QWidget

from app import __version__
from app.spec.model import entry_name, load_spec
from app.workspace.templates import create_from_template, list_templates, name_problem
from ui.editor.template_gallery import TemplateGallery
from ui.main_window import MainWindow
from ui.preferences.dialog import PreferencesDialog


def when_modal(kind: type, act: Callable[[Any], None]) -> None:
    """Run `act` on the modal dialog of `kind` once it is up (its exec() blocks the test)."""
    def attempt() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, kind):
            QTimer.singleShot(20, attempt)
            return
        act(dialog)

    QTimer.singleShot(0, attempt)


def ok_button(dialog: QWidget) -> Any:
    """The dialog's OK button."""
    return dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)


def test_help_lists_the_shortcuts_and_says_what_this_is(window: MainWindow) -> None:
    window.actions_by_name["shortcuts"].trigger()
    shortcuts = window.show_dialog("shortcuts")
    assert shortcuts.isVisible()
    assert shortcuts.keys_of("Verify") == "F5" and shortcuts.keys_of("Go to line") == "Ctrl+G"
    assert shortcuts.keys_of("Complete the word") == "Ctrl+Space"
    window.actions_by_name["about"].trigger()
    about = window.show_dialog("about")
    assert f"Kernel Studio {__version__}" in about.text.text()
    assert "offline" in about.text.text() and "Data folder" in about.text.text()


def test_edit_menu_undoes_redoes_cuts_copies_and_pastes(qtbot: Any, window: MainWindow,
                                                        kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    window.activateWindow()
    editor.take_focus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is editor, timeout=3000)
    original = editor.text()
    editor.gotoPos(0)
    editor.insertText(0, "// note\n")
    actions = window.actions_by_name
    actions["undo"].trigger()
    assert editor.text() == original
    actions["redo"].trigger()
    assert editor.text().startswith("// note\n")
    editor.setSel(3, 7)  # "note"
    actions["copy"].trigger()
    assert QApplication.clipboard().text() == "note"
    actions["cut"].trigger()
    assert editor.text().startswith("// \n")
    actions["paste"].trigger()
    actions["paste"].trigger()
    assert editor.text().startswith("// notenote\n")
    window.find_bar.open_find(False)  # focus in a line edit: the commands work there
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not editor, timeout=3000)
    field = QApplication.focusWidget()
    actions["paste"].trigger()
    assert "note" in field.text() and editor.text().startswith("// notenote\n")


def test_go_to_line_recent_files_title_and_tab_tips(
        qtbot: Any, window: MainWindow, kernel_copy: Path, prompter: ScriptedPrompter,
        tmp_path: Path) -> None:
    assert window.windowTitle() == "Kernel Studio"
    other = tmp_path / "other" / "scale.cu"
    other.parent.mkdir()
    other.write_text("__global__ void scale(float* x) {}\n")
    editor = window.open_files([kernel_copy])[0]
    window.open_files([other])
    window.tabs.setCurrentWidget(editor)
    assert window.windowTitle() == "vector_add.cu[*] \u2014 Kernel Studio"
    assert not window.isWindowModified()
    prompter.line = 14
    window.actions_by_name["go_to_line"].trigger()
    assert editor.cursor_line() == 14 and prompter.asked[-1] == ("line", (1, editor.lineCount()))
    editor.insertText(0, " ")
    assert window.isWindowModified()
    window.tabs.save(editor)
    assert not window.isWindowModified()
    assert window.tabs.tabToolTip(window.tabs.indexOf(editor)) == str(kernel_copy)
    untitled = window.tabs.add_buffer("", None)
    assert window.tabs.tabToolTip(window.tabs.indexOf(untitled)) == "untitled.cu (not saved yet)"
    menu = window.findChild(QMenu, "menu_recent")
    menu.aboutToShow.emit()
    entries = [a for a in menu.actions() if a.data()]
    assert [a.data() for a in entries] == [str(kernel_copy.resolve()), str(other.resolve())]
    assert entries[0].text().startswith("&1 vector_add.cu")
    window.tabs.close_tab(window.tabs.indexOf(window.tabs.find_path(other)))
    entries[1].trigger()
    assert window.tabs.find_path(other) is not None


def test_a_kernel_made_from_a_template_gets_the_name_given(qtbot: Any, window: MainWindow,
                                                           tmp_path: Path) -> None:
    problems: list[str] = []

    def fill(gallery: TemplateGallery) -> None:
        assert gallery.select("vector_add") and gallery.kernel_name() == "vector_add"
        gallery.folder_field.setText(str(tmp_path / "mine"))
        gallery.name_field.setText("2sum")
        ok_button(gallery).click()  # refused: not an identifier
        problems.append(gallery.problem.text())
        gallery.name_field.setText("vsum")
        ok_button(gallery).click()

    when_modal(TemplateGallery, fill)
    window.actions_by_name["new"].trigger()
    assert "cannot name a kernel" in problems[0]
    folder = tmp_path / "mine" / "vsum"
    assert sorted(p.name for p in folder.iterdir()) == ["vsum.cu", "vsum.toml", "vsum_ref.py"]
    assert window.windowTitle().startswith("vsum.cu")
    spec = window.spec_panel.spec()
    assert spec is not None and spec.entry == "vsum" and spec.reference == "vsum_ref.py"
    assert "__global__ void vsum(" in (folder / "vsum.cu").read_text()
    assert "// vector_add: c = a + b" in (folder / "vsum.cu").read_text()  # prose kept


@pytest.mark.parametrize("template", list_templates(), ids=lambda t: t.name)
def test_every_template_can_be_renamed(template: Any, tmp_path: Path) -> None:
    source = create_from_template(template, tmp_path, "my_kernel")
    spec = load_spec(source.with_suffix(".toml"))
    assert spec.source_path == source and spec.reference_path.is_file()
    original = load_spec(template.spec)
    if len(original.entries) > 1:  # a template of several kernels keeps their names
        assert spec.entries == original.entries
        return
    # A template's entry may be an instantiation of the renamed function (my_kernel<float, 4>).
    assert entry_name(spec.entry) == "my_kernel"
    # Launch bounds may stand between the return type and the name (nf4_gemv has them).
    assert re.search(r"__global__\s+void\s+(__launch_bounds__\([^)]*\)\s*)?my_kernel\s*\(",
                     source.read_text())
    assert name_problem("float4") and name_problem("") and not name_problem("my_kernel")


def test_settings_are_declared_once_edited_checked_applied_and_kept(
        qtbot: Any, window: MainWindow, kernel_copy: Path, tmp_path: Path,
        prompter: ScriptedPrompter) -> None:
    editor = window.open_files([kernel_copy])[0]
    problems: list[str] = []

    def fill(dialog: PreferencesDialog) -> None:
        fields = dialog.fields
        fields["editor/font_size"].setValue(14)
        fields["build/arch"].setText("compute_80")
        fields["build/options"].setText("-lineinfo")
        fields["run/backend"].setCurrentText("cpu")
        fields["run/time_limit"].setValue(3.0)
        ok_button(dialog).click()  # refused: compute_80 is not a real architecture
        problems.append(dialog.problem.text())
        fields["build/arch"].setText("sm_80")
        ok_button(dialog).click()

    when_modal(PreferencesDialog, fill)
    assert window.workspace.edit_preferences()
    assert problems[0].startswith("Default architecture: ") and "sm_80" in problems[0]
    assert editor.font_size() == 14
    runner = window.runner
    assert (runner.arch, runner.extra_options, runner.backend, runner.timeout) == (
        "sm_80", ("-lineinfo",), "cpu", 3.0)
    assert window.findChild(type(window.actions_by_name["verify"]), "backend_cpu").isChecked()
    with qtbot.waitSignal(window.buildFinished, timeout=120000):
        assert window.build()
    assert "sm_80" in window.compile_pane.summary.text()
    window.settings.sync()
    again = MainWindow(settings_path=tmp_path / "settings.ini", prompter=prompter,
                       offer_recovery=False)
    qtbot.addWidget(again)
    assert again.runner.arch == "sm_80" and again.runner.backend == "cpu"
    assert again.open_files([kernel_copy])[0].font_size() == 14
    again.runner.shutdown()


def test_open_tabs_come_back_at_the_next_start(qtbot: Any, tmp_path: Path,
                                               prompter: ScriptedPrompter,
                                               kernel_copy: Path) -> None:
    settings = tmp_path / "session.ini"
    other = kernel_copy.with_name("vector_add_ref.py")
    first = MainWindow(settings_path=settings, prompter=prompter, offer_recovery=False)
    qtbot.addWidget(first)
    first.show()
    first.open_files([kernel_copy, other])
    first.tabs.setCurrentIndex(0)
    first.close()
    second = MainWindow(settings_path=settings, prompter=prompter, offer_recovery=False)
    qtbot.addWidget(second)
    second.show()
    qtbot.waitUntil(lambda: second.tabs.count() == 2, timeout=5000)
    paths = [second.tabs.document(e).path for e in second.tabs.editors()]
    assert paths == [kernel_copy, other] and second.tabs.currentIndex() == 0
    shutil.rmtree(kernel_copy.parent)
    second.close()
    third = MainWindow(settings_path=settings, prompter=prompter, offer_recovery=False)
    qtbot.addWidget(third)
    third.show()
    qtbot.wait(50)
    assert third.tabs.count() == 0  # files that are gone are not reopened
    third.close()


def test_at_1400_by_900_the_panes_have_room(qtbot: Any, window: MainWindow,
                                            kernel_copy: Path) -> None:
    window.resize(1400, 900)
    window.open_files([kernel_copy])
    window.show_pane("spec")
    window.show_pane("results")
    qtbot.waitUntil(lambda: window.spec_panel.args.isVisible(), timeout=3000)
    args = window.spec_panel.args
    assert args.rowCount() == 4
    last = args.visualRect(args.model().index(3, 0))
    assert last.bottom() <= args.viewport().height()  # the fourth argument is not cut...
    scroll = window.spec_panel.findChild(QScrollArea).viewport()
    bottom = args.viewport().mapTo(scroll, last.bottomLeft()).y()
    assert 0 < bottom <= scroll.height()  # ...nor hidden below the spec pane's fold
    runs = window.results_pane.runs
    assert runs.viewport().height() >= 6 * runs.verticalHeader().defaultSectionSize()
    assert window.tabs.height() >= 450  # about thirty lines of code
