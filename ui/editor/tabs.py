"""File tabs: one CUDA editor per open file, with saving, autosave and the unsaved-changes guard.

Never lose the user's text: saves are atomic, a failed save keeps the buffer modified, and every
modified buffer reaches the recovery folder at most AUTOSAVE_MS after its last change.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from app.base.fsutil import atomic_write_text
from app.workspace.recovery import RecoveryStore
from app.workspace.templates import TEMPLATES_DIR
from ui.editor.cuda_editor import CudaEditor
from ui.editor.prompter import Prompter
from ui.theme import Theme

AUTOSAVE_MS = 1500
MAX_OPEN_BYTES = 16 << 20


@dataclass
class Document:
    """What the tabs know about one buffer besides its text."""

    path: Path | None
    untitled_name: str = "untitled.cu"
    buffer_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def title(self) -> str:
        """The file name, or the untitled name."""
        return self.path.name if self.path else self.untitled_name


def is_builtin_template(path: Path) -> bool:
    """Whether a file is one of the app's own templates (saved elsewhere, never over)."""
    try:
        return path.resolve().is_relative_to(TEMPLATES_DIR.resolve())
    except OSError:
        return False


class EditorTabs(QTabWidget):
    """The tabbed editors in the window's centre."""

    problem = Signal(str, str)
    documentSaved = Signal(object)
    currentEditorChanged = Signal(object)
    titleChanged = Signal()  # a tab's name or modified mark changed

    def __init__(self, theme: Theme, recovery: RecoveryStore, prompter: Prompter,
                 parent: QWidget | None = None) -> None:
        """Empty tabs; `recovery` receives autosaves and `prompter` answers questions."""
        super().__init__(parent)
        self.theme = theme
        self.recovery = recovery
        self.prompter = prompter
        self.font_size: int | None = None  # points for every editor (None: the theme's)
        self._documents: dict[CudaEditor, Document] = {}
        self._timers: dict[CudaEditor, QTimer] = {}
        self.setTabsClosable(True)
        self.setMovable(True)
        self.setDocumentMode(True)
        self.tabCloseRequested.connect(lambda index: self.close_tab(index))
        self.currentChanged.connect(lambda _: self.currentEditorChanged.emit(self.current()))

    # -- access -------------------------------------------------------------------------------

    def current(self) -> CudaEditor | None:
        """The editor in the selected tab."""
        widget = self.currentWidget()
        return widget if isinstance(widget, CudaEditor) else None

    def editors(self) -> list[CudaEditor]:
        """Every open editor, in tab order."""
        return [w for i in range(self.count()) if isinstance(w := self.widget(i), CudaEditor)]

    def document(self, editor: CudaEditor) -> Document:
        """The document shown by `editor`."""
        return self._documents[editor]

    def find_path(self, path: Path) -> CudaEditor | None:
        """The editor showing `path`, if it is open."""
        target = path.resolve()
        for editor, document in self._documents.items():
            if document.path is not None and document.path.resolve() == target:
                return editor
        return None

    def editor_of(self, buffer_id: str | None) -> CudaEditor | None:
        """The open editor of a buffer id (None once that buffer is closed)."""
        if buffer_id is None:
            return None
        return next((e for e, d in self._documents.items() if d.buffer_id == buffer_id), None)

    def modified_editors(self) -> list[CudaEditor]:
        """Editors with unsaved changes."""
        return [e for e in self.editors() if e.is_modified()]

    # -- opening ------------------------------------------------------------------------------

    def add_buffer(self, text: str, path: Path | None, untitled_name: str = "untitled.cu",
                   modified: bool = False) -> CudaEditor:
        """Open a tab with `text`; `modified` marks a buffer that is not on disk (recovered)."""
        editor = CudaEditor(self.theme, self)
        if self.font_size:
            editor.set_font_size(self.font_size)
        editor.set_text(text)
        document = Document(path, untitled_name)
        self._documents[editor] = document
        timer = QTimer(editor, singleShot=True, interval=AUTOSAVE_MS)
        timer.timeout.connect(lambda: self.autosave(editor))
        self._timers[editor] = timer
        editor.textEdited.connect(timer.start)
        editor.savePointChanged.connect(lambda _: self._refresh_title(editor))
        index = self.addTab(editor, document.title)
        self._refresh_titles()
        self.setCurrentIndex(index)
        if modified:
            self._force_modified(editor)
        return editor

    def _force_modified(self, editor: CudaEditor) -> None:
        """Mark a buffer as differing from disk (a recovered buffer must not look saved)."""
        editor.beginUndoAction()
        editor.insertText(0, " ")
        editor.deleteRange(0, 1)
        editor.endUndoAction()
        self.autosave(editor)
        self._refresh_title(editor)

    def open_path(self, path: Path) -> CudaEditor | None:
        """Open a file in a tab (or switch to it); report and return None when unreadable."""
        path = Path(path).expanduser()
        existing = self.find_path(path)
        if existing is not None:
            self.setCurrentWidget(existing)
            return existing
        text = self._read(path)
        return None if text is None else self.add_buffer(text, path)

    def _read(self, path: Path) -> str | None:
        """A file's text, or None after reporting why it cannot be opened."""
        try:
            if path.stat().st_size > MAX_OPEN_BYTES:
                self.problem.emit(f"Could not open {path}", "The file is larger than 16 MiB; "
                                  "is it really a kernel source?")
                return None
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            self.problem.emit(f"Could not open {path}", "It is not UTF-8 text.")
        except OSError as error:
            self.problem.emit(f"Could not open {path}: {error.strerror}",
                              "Does the file exist, and may you read it?")
        return None

    # -- saving -------------------------------------------------------------------------------

    def save(self, editor: CudaEditor | None = None) -> bool:
        """Save a buffer to its file (asking for a path when it has none)."""
        editor = editor or self.current()
        if editor is None:
            return False
        document = self._documents[editor]
        if document.path is None or is_builtin_template(document.path):
            return self.save_as(editor)
        return self._write(editor, document.path)

    def save_as(self, editor: CudaEditor | None = None) -> bool:
        """Save a buffer under a path the user picks."""
        editor = editor or self.current()
        if editor is None:
            return False
        document = self._documents[editor]
        suggestion = str(document.path or Path.home() / document.untitled_name)
        if document.path is not None and is_builtin_template(document.path):
            # The gallery's files belong to the app: suggest a copy in the user's kernels.
            suggestion = str(Path.home() / "kernels" / document.path.parent.name /
                             document.path.name)
        chosen = self.prompter.ask_save_path(suggestion)
        if not chosen:
            return False
        # The new name first: whoever hears documentSaved sees where the buffer now lives.
        previous, document.path = document.path, Path(chosen)
        if not self._write(editor, Path(chosen)):
            document.path = previous
            return False
        self._refresh_titles()
        return True

    def _write(self, editor: CudaEditor, path: Path) -> bool:
        """Write atomically; on failure report it and leave the buffer modified."""
        try:
            atomic_write_text(path, editor.text())
        except OSError as error:
            self.problem.emit(f"Could not save {path}: {error.strerror}",
                              "Your text is still here and in the recovery folder. "
                              "Try Save As to another place.")
            self.autosave(editor)
            return False
        editor.mark_saved()
        self._timers[editor].stop()
        self.recovery.drop(self._documents[editor].buffer_id)
        self._refresh_title(editor)
        self.documentSaved.emit(editor)
        return True

    def autosave(self, editor: CudaEditor) -> None:
        """Copy a modified buffer to the recovery folder (and drop the copy once unmodified)."""
        document = self._documents.get(editor)
        if document is None:
            return
        if not editor.is_modified():
            self.recovery.drop(document.buffer_id)
            return
        path = str(document.path) if document.path else None
        try:
            self.recovery.save(document.buffer_id, document.title, path, editor.text())
        except OSError as error:
            self.problem.emit(f"Could not autosave {document.title}: {error.strerror}",
                              "Save the file soon; the recovery folder is not writable.")

    # -- closing ------------------------------------------------------------------------------

    def close_tab(self, index: int) -> bool:
        """Close a tab, asking first when its buffer has unsaved changes."""
        editor = self.widget(index)
        if not isinstance(editor, CudaEditor):
            return False
        if editor.is_modified():
            answer = self.prompter.ask_unsaved(self._documents[editor].title)
            if answer == "cancel" or (answer == "save" and not self.save(editor)):
                return False
        self._discard(index, editor)
        return True

    def _discard(self, index: int, editor: CudaEditor) -> None:
        """Remove a tab and its autosave copy."""
        self._timers.pop(editor).stop()
        document = self._documents.pop(editor)
        self.recovery.drop(document.buffer_id)
        self.removeTab(index)
        editor.deleteLater()
        self._refresh_titles()

    def close_all(self) -> bool:
        """Close every tab; False (and nothing more closed) if the user cancels one."""
        while self.count():
            if not self.close_tab(self.count() - 1):
                return False
        return True

    def _refresh_title(self, editor: CudaEditor) -> None:
        """Tab text: the file name (with as much of its folder as tells it apart from another
        open file of the same name), with a dot while modified."""
        index = self.indexOf(editor)
        document = self._documents.get(editor)
        if index < 0 or document is None:
            return
        mark = " \u25cf" if editor.is_modified() else ""
        self.setTabText(index, self.distinct_title(document) + mark)
        self.setTabToolTip(index, str(document.path) if document.path
                           else f"{document.title} (not saved yet)")
        self.titleChanged.emit()

    def _refresh_titles(self) -> None:
        """Every tab's text (opening or closing one can make a name ambiguous or not)."""
        for editor in list(self._documents):
            self._refresh_title(editor)

    def distinct_title(self, document: Document) -> str:
        """`vector_add.cu`, or `vector_add.cu \u2014 folder` while another open file has the
        same name (more of the path when the folders' names are the same too)."""
        twins = [d.path for d in self._documents.values() if d is not document
                 and d.title == document.title and d.path is not None]
        if not twins or document.path is None:
            return document.title
        parents = document.path.parent.parts
        for depth in range(1, len(parents) + 1):
            tail = parents[-depth:]
            if all(other.parent.parts[-depth:] != tail for other in twins):
                return f"{document.title} \u2014 {'/'.join(tail)}"
        return f"{document.title} \u2014 {document.path.parent}"
