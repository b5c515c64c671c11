"""The window's everyday commands: a new kernel from a template (named by the user), Edit's
undo, redo, cut, copy and paste on whatever text has the focus, Go to line, recent files, the
window's title (file name and modified mark), the open tabs restored at start, and the settings
(ui/preferences) applied to the editors and runs.

WorkspaceCommands receives what it works on (the tabs, the run controller, the settings file,
the prompter, a way to open files, to choose the backend and to set the title), never the
window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu, QPlainTextEdit, QTextEdit, QWidget
from pyside6_scintilla import ScintillaEdit

from app.workspace.templates import Template, TemplateExists, create_from_template, list_templates
from ui.editor.cuda_editor import CudaEditor
from ui.editor.prompter import Prompter
from ui.editor.tabs import EditorTabs
from ui.editor.template_gallery import TemplateGallery
from ui.message_log import Reporter
from ui.preferences import table
from ui.preferences.dialog import PreferencesDialog
from ui.runs.controller import RunController

RECENT_KEY = "recent_files"
OPEN_KEY, CURRENT_KEY = "session/open_files", "session/current"
MAX_RECENT = 12
APP_TITLE = "Kernel Studio"
TEXT_WIDGETS = (QLineEdit, QPlainTextEdit, QTextEdit, ScintillaEdit)
EDITS = ("undo", "redo", "cut", "copy", "paste")


def _paths(value: object) -> list[str]:
    """A list of paths as QSettings gives it back (a lone string for one entry)."""
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


class WorkspaceCommands(QObject):
    """Edit commands, Go to line, recent files, title, session and settings."""

    def __init__(self, tabs: EditorTabs, runner: RunController, store: QSettings,
                 prompter: Prompter, *, open_files: Callable[[Iterable[Path]], object],
                 set_backend: Callable[[str], None], set_title: Callable[[str, bool], None],
                 report: Reporter, parent: QWidget) -> None:
        """Work on these; nothing happens until wire()."""
        super().__init__(parent)
        self.tabs, self.runner, self.store, self.prompter = tabs, runner, store, prompter
        self.open_files, self.set_backend, self.set_title = open_files, set_backend, set_title
        self.report = report
        self.dialog_parent = parent
        self.values: dict[str, Any] = table.load(store)

    def wire(self, recent: QMenu | None = None) -> None:
        """Follow the tabs for the title and the recent files (filled into `recent`, File >
        Open recent, as it opens); apply the saved settings."""
        if recent is not None:
            recent.aboutToShow.connect(lambda: self.fill_recent_menu(recent))
        self.tabs.currentEditorChanged.connect(lambda _: self.refresh_title())
        self.tabs.titleChanged.connect(self.refresh_title)
        self.tabs.documentSaved.connect(self._remember_editor)
        self.apply(self.values)
        self.refresh_title()

    # -- edit ---------------------------------------------------------------------------------

    def edit(self, operation: str) -> bool:
        """Undo, redo, cut, copy or paste in the focused text (else the current editor)."""
        assert operation in EDITS
        widget = QApplication.focusWidget()
        target: QWidget | None = widget if isinstance(widget, TEXT_WIDGETS) else \
            self.tabs.current()
        if target is None:
            return False
        getattr(target, operation)()
        return True

    def go_to_line(self) -> bool:
        """Ask for a line of the current file and put the caret there."""
        editor = self.tabs.current()
        if editor is None:
            self.report("info", "No file to go to a line in", "Open a kernel first.")
            return False
        line = self.prompter.ask_line(editor.cursor_line(), editor.lineCount())
        if line is None:
            return False
        editor.go_to(line)
        return True

    # -- new kernels --------------------------------------------------------------------------

    def new_from_template(self, name: str | None = None, folder: Path | None = None,
                          kernel_name: str | None = None) -> CudaEditor | None:
        """Copy a template into a folder under the kernel's name and open it (asks for the
        template, the name and the folder when not given)."""
        if name is None or folder is None:
            gallery = TemplateGallery(Path(str(self.store.value(
                "template_folder", str(Path.home() / "kernels")))), self.dialog_parent)
            accepted = gallery.exec()
            template, folder = gallery.chosen(), gallery.folder()
            kernel_name = gallery.kernel_name()
            gallery.deleteLater()
            if not accepted or template is None:
                return None
        else:
            template = next((t for t in list_templates() if t.name == name), None)
            if template is None:
                self.report("error", f"No template named {name}", "See File > New.")
                return None
        return self._create(template, folder, kernel_name)

    def _create(self, template: Template, folder: Path,
                kernel_name: str | None) -> CudaEditor | None:
        """Copy the template and open its source and spec."""
        name = kernel_name or template.name
        try:
            source = create_from_template(template, folder, name)
        except TemplateExists as error:
            self.report("error", f"Could not create {name}: {error}",
                        "Choose another name or folder, or open the existing kernel.")
            return None
        except ValueError as error:
            self.report("error", f"Could not create the kernel: {error}")
            return None
        except OSError as error:
            self.report("error", f"Could not create {name}: {error.strerror}",
                        "Is the folder writable?")
            return None
        self.store.setValue("template_folder", str(folder))
        self.report("info", f"Created {source.parent}")
        self.open_files([source])
        return self.tabs.find_path(source)

    # -- title --------------------------------------------------------------------------------

    def refresh_title(self) -> None:
        """'vector_add.cu — Kernel Studio', marked while the buffer has unsaved changes."""
        editor = self.tabs.current()
        if editor is None:
            self.set_title("", False)
            return
        self.set_title(self.tabs.distinct_title(self.tabs.document(editor)),
                       editor.is_modified())

    # -- recent files -------------------------------------------------------------------------

    def recent_files(self) -> list[str]:
        """Recently opened or saved files, newest first."""
        return _paths(self.store.value(RECENT_KEY, []))

    def remember(self, path: Path) -> None:
        """Put a file at the top of the recent files."""
        name = str(Path(path).expanduser().resolve())
        kept = [p for p in self.recent_files() if p != name]
        self.store.setValue(RECENT_KEY, [name, *kept][:MAX_RECENT])

    def _remember_editor(self, editor: CudaEditor) -> None:
        """A saved buffer's file becomes recent (Save As gives it a new name)."""
        path = self.tabs.document(editor).path
        if path is not None:
            self.remember(path)

    def fill_recent_menu(self, menu: QMenu) -> None:
        """File > Open recent: one entry per recent file that still exists, then Clear."""
        menu.clear()
        existing = [p for p in self.recent_files() if Path(p).is_file()]
        for number, path in enumerate(existing, 1):
            action = menu.addAction(f"&{number % 10} {Path(path).name}  \u2014  "
                                    f"{Path(path).parent}")
            action.setData(path)
            action.triggered.connect(lambda _=False, p=path: self.open_files([Path(p)]))
        if not existing:
            menu.addAction("(no recent files)").setEnabled(False)
        menu.addSeparator()
        menu.addAction("Clear recent files").triggered.connect(
            lambda: self.store.setValue(RECENT_KEY, []))

    # -- session ------------------------------------------------------------------------------

    def session(self) -> tuple[list[str], int]:
        """The open files (those with a path) and the current tab's index."""
        paths = [str(self.tabs.document(e).path) for e in self.tabs.editors()
                 if self.tabs.document(e).path is not None]
        return paths, self.tabs.currentIndex()

    def save_session(self) -> None:
        """Remember the open files (and which one is current) for the next start."""
        paths, current = self.session()
        self.store.setValue(OPEN_KEY, paths)
        self.store.setValue(CURRENT_KEY, current)

    def restore_session(self) -> int:
        """Reopen the files open when the window last closed (those that still exist)."""
        paths = [Path(p) for p in _paths(self.store.value(OPEN_KEY, [])) if Path(p).is_file()]
        if not paths:
            return 0
        self.open_files(paths)
        current = int(str(self.store.value(CURRENT_KEY, 0) or 0))
        if 0 <= current < self.tabs.count():
            self.tabs.setCurrentIndex(current)
        return len(paths)

    # -- settings -----------------------------------------------------------------------------

    def apply(self, values: dict[str, Any]) -> None:
        """Use settings: the editors' font size, the build's architecture and options, the
        backend and the time limit of later runs."""
        self.values = dict(values)
        self.tabs.font_size = int(values["editor/font_size"])
        for editor in self.tabs.editors():
            editor.set_font_size(self.tabs.font_size)
        self.runner.arch = str(values["build/arch"]) or None
        self.runner.extra_options = table.extra_options(values)
        self.runner.timeout = float(values["run/time_limit"])
        self.set_backend(str(values["run/backend"]))

    def edit_preferences(self) -> bool:
        """The Settings dialog; its values are applied and saved when accepted."""
        self.values["run/backend"] = self.runner.backend  # Run > Backend may have changed it
        dialog = PreferencesDialog(self.values, self.dialog_parent)
        try:
            if not dialog.exec():
                return False
            values = dialog.values()
        finally:
            dialog.deleteLater()
        table.save(self.store, values)
        self.apply(values)
        self.report("info", "Settings saved", "They apply to the next build and run.")
        return True
