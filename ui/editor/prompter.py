"""Questions the window asks the user (save changes? where? recover?), in one replaceable place.

Tests hand the window a scripted prompter instead of clicking modal dialogs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from app.workspace.recovery import RecoveredBuffer

SOURCE_FILTER = "CUDA sources (*.cu *.cuh *.h *.hpp);;Kernel specs (*.toml);;All files (*)"
SPEC_FILTER = "Kernel specs (*.toml);;All files (*)"
BUNDLE_FILTER = "Review bundles (*.ksb);;All files (*)"


class Prompter:
    """Modal dialogs parented to the main window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Remember the window the dialogs belong to."""
        self.parent = parent

    def ask_unsaved(self, title: str) -> str:
        """'save', 'discard' or 'cancel' for a buffer with unsaved changes."""
        buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                   | QMessageBox.StandardButton.Cancel)
        answer = QMessageBox.question(
            self.parent, "Unsaved changes", f"{title} has unsaved changes. Save them?",
            buttons, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return "save"
        if answer == QMessageBox.StandardButton.Discard:
            return "discard"
        return "cancel"

    def ask_save_path(self, suggestion: str) -> str | None:
        """A path to save to, or None when the user cancels."""
        path, _ = QFileDialog.getSaveFileName(self.parent, "Save as", suggestion, SOURCE_FILTER)
        return path or None

    def ask_open_paths(self, folder: str, filters: str = SOURCE_FILTER) -> list[str]:
        """Files to open (empty when the user cancels); `filters` are the dialog's file types,
        the first shown first."""
        paths, _ = QFileDialog.getOpenFileNames(self.parent, "Open", folder, filters)
        return list(paths)

    def ask_recover(self, buffers: Sequence[RecoveredBuffer]) -> bool:
        """Whether to reopen buffers that a crashed session autosaved."""
        names = "\n".join(f"  {b.title}" + (f"  ({b.path})" if b.path else "") for b in buffers)
        answer = QMessageBox.question(
            self.parent, "Recover unsaved work",
            "Kernel Studio did not shut down cleanly last time. These buffers had unsaved "
            f"changes:\n{names}\n\nReopen them? (They open as unsaved buffers; nothing is "
            "written to your files until you save.)")
        return answer == QMessageBox.StandardButton.Yes

    def ask_folder(self, suggestion: Path) -> str | None:
        """A folder (for new kernels from a template), or None when the user cancels."""
        path = QFileDialog.getExistingDirectory(self.parent, "Folder for the new kernel",
                                                str(suggestion))
        return path or None

    def ask_line(self, current: int, last: int) -> int | None:
        """A 1-based line to go to (Go to line), or None when the user cancels."""
        line, ok = QInputDialog.getInt(self.parent, "Go to line", f"Line (1 to {last}):",
                                       current, 1, max(last, 1))
        return int(line) if ok else None
