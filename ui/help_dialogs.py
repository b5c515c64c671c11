"""Help: the keyboard shortcuts (from the window's own action table, so they cannot drift)
and About. Both are ordinary windows of the main window, not modal."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import __version__
from app.base.paths import data_dir
from app.isolation import offline

# Keys the editor and panes handle themselves (no menu entry carries them).
EDITOR_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Complete the word", "Ctrl+Space", "Offer completions for the word before the caret"),
    ("Take a completion", "Tab", "Take the offered word (Enter takes it after the arrow keys "
                                 "moved into the list; otherwise Enter breaks the line)"),
    ("Send to the assistant", "Ctrl+Enter",
     "In the Assistant pane's question box: send the question with the chosen action"),
    ("Show an instruction's source", "Click in PTX / SASS",
     "Marks the instruction and highlights its source line"),
)


class ShortcutsDialog(QDialog):
    """Every command with its keys and what it does."""

    def __init__(self, rows: Sequence[tuple[str, str, str]],
                 parent: QWidget | None = None) -> None:
        """`rows`: (command, keys, what it does), the window's actions first."""
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        everything = [*rows, *EDITOR_KEYS]
        self.table = QTableWidget(len(everything), 3)
        self.table.setHorizontalHeaderLabels(["Command", "Keys", "What it does"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, values in enumerate(everything):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(760, 560)

    def keys_of(self, command: str) -> str:
        """The keys listed for a command ('' when it is not listed)."""
        for row in range(self.table.rowCount()):
            name, keys = self.table.item(row, 0), self.table.item(row, 1)
            if name is not None and keys is not None and name.text() == command:
                return keys.text()
        return ""


def about_text() -> str:
    """What Kernel Studio is, its version, where it keeps data, and that it stays offline."""
    guarded = offline.network_guard_installed()
    return (f"<h3>Kernel Studio {__version__}</h3>"
            "<p>Write, verify and time CUDA kernels, entirely offline. Every kernel, whoever "
            "wrote it, is compiled, run against its reference on random inputs and timed; a "
            "local model proposes and explains kernels.</p>"
            f"<p>Network: {'refused (offline guard active)' if guarded else 'not guarded'}."
            f"<br>Data folder: {data_dir()}"
            f"<br>Qt {qVersion()}, PySide {pyside_version}</p>")


class AboutDialog(QDialog):
    """About Kernel Studio."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """The about text and a Close button."""
        super().__init__(parent)
        self.setWindowTitle("About Kernel Studio")
        self.text = QLabel(about_text())
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(520, 0)
