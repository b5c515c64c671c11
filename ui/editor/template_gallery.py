"""New from template: a dialog listing the template gallery with a preview of each kernel."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.workspace.templates import Template, list_templates, name_problem
from ui.fonts import code_font


class TemplateGallery(QDialog):
    """Pick a template and a folder; accept() leaves the choice in chosen() and folder()."""

    def __init__(self, default_folder: Path, parent: QWidget | None = None) -> None:
        """List every template, the first selected."""
        super().__init__(parent)
        self.setWindowTitle("New kernel from template")
        self.templates = list_templates()
        self.list = QListWidget()
        self.preview = QPlainTextEdit(readOnly=True)
        self.preview.setFont(code_font())
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.folder_field = QLineEdit(str(default_folder))
        self.name_field = QLineEdit()
        self.name_field.setToolTip("Names the folder, the files, the __global__ function and "
                                   "the spec's entry")
        self.problem = QLabel()
        self.problem.setStyleSheet("color: #e53935;")
        self._named = False  # the user typed a name: keep it when another template is picked
        self._build()
        for template in self.templates:
            item = QListWidgetItem(template.name)
            item.setToolTip(template.description)
            self.list.addItem(item)
        self.list.currentRowChanged.connect(self._show)
        self.list.setCurrentRow(0)
        self.resize(900, 560)

    def _build(self) -> None:
        """List and preview side by side; folder and buttons below."""
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.list)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.description)
        column.addWidget(self.preview, 1)
        splitter.addWidget(right)
        splitter.setSizes([200, 700])
        name_row = QHBoxLayout()
        name_row.addWidget(QLabel("Kernel name:"))
        name_row.addWidget(self.name_field, 1)
        self.name_field.textEdited.connect(self._name_edited)
        folder_row = QHBoxLayout()
        folder_row.addWidget(QLabel("Create in folder:"))
        folder_row.addWidget(self.folder_field, 1)
        browse = QPushButton("Browse\u2026")
        browse.clicked.connect(self._browse)
        folder_row.addWidget(browse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(name_row)
        layout.addLayout(folder_row)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)

    def _show(self, row: int) -> None:
        """Preview the selected template's source."""
        if not 0 <= row < len(self.templates):
            return
        template = self.templates[row]
        self.description.setText(f"<b>{template.name}</b>: {template.description}")
        if not self._named:
            self.name_field.setText(template.name)
        try:
            self.preview.setPlainText(template.source.read_text(encoding="utf-8"))
        except OSError as error:
            self.preview.setPlainText(f"cannot read {template.source}: {error.strerror}")

    def _browse(self) -> None:
        """Choose the folder with a file dialog."""
        chosen = QFileDialog.getExistingDirectory(self, "Create in folder",
                                                  self.folder_field.text())
        if chosen:
            self.folder_field.setText(chosen)

    def select(self, name: str) -> bool:
        """Select a template by name (False when there is none)."""
        for row, template in enumerate(self.templates):
            if template.name == name:
                self.list.setCurrentRow(row)
                return True
        return False

    def _name_edited(self) -> None:
        """The user named the kernel: say at once what is wrong with the name, if anything."""
        self._named = True
        self.problem.setText(name_problem(self.kernel_name()))

    def kernel_name(self) -> str:
        """The name the new kernel gets."""
        return self.name_field.text().strip()

    def accept(self) -> None:
        """Create only with a usable name and no kernel of that name in the folder."""
        problem = name_problem(self.kernel_name())
        if not problem and (self.folder() / self.kernel_name()).exists():
            problem = f"{self.folder() / self.kernel_name()} already exists: choose another name"
        self.problem.setText(problem)
        if not problem:
            super().accept()

    def chosen(self) -> Template | None:
        """The selected template."""
        row = self.list.currentRow()
        return self.templates[row] if 0 <= row < len(self.templates) else None

    def folder(self) -> Path:
        """The folder the new kernel goes in (a subfolder named after the kernel)."""
        return Path(self.folder_field.text()).expanduser()
