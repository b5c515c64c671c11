"""Choosing what to compare: the open kernels (and, for a kernel with unsaved edits, the
edited text beside its saved file), spec files added from disk, and the baseline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.review.variants import same_task


@dataclass(frozen=True)
class Candidate:
    """A kernel that can be compared: its label, its spec, and for the unsaved version of a
    kernel, the editor's text and the file it replaces (None: the files on disk)."""

    label: str
    spec: Path
    text: str | None = None
    source: Path | None = None


class ComparePicker(QDialog):
    """A checklist of candidates and a baseline chooser."""

    def __init__(self, candidates: list[Candidate], ask_specs: Callable[[], list[str]],
                 parent: QWidget | None = None) -> None:
        """The first candidate checked, and the next one of the same task (the same arguments)
        when there is one; `ask_specs` asks for more spec files."""
        super().__init__(parent)
        self.setWindowTitle("Compare kernels")
        self.candidates = list(candidates)
        self.ask_specs = ask_specs
        self.list = QListWidget()
        self.baseline = QComboBox()
        self.hint = QLabel("Check two or more kernels of the same task (the same arguments).")
        self._build()
        for candidate, checked in zip(self.candidates, self._first_pair(), strict=True):
            self._add_item(candidate, checked)
        self._refresh()

    def _first_pair(self) -> list[bool]:
        """Which rows start checked: the first, and the first other one of the same task."""
        alike = same_task([c.spec for c in self.candidates])
        partner = next((i for i, same in enumerate(alike) if i and same), None)
        if self.candidates and partner is None:
            self.hint.setText(f"No other open kernel takes the same arguments as "
                              f"{self.candidates[0].label}: add a spec file of the same task.")
        return [i == 0 or i == partner for i in range(len(self.candidates))]

    def _build(self) -> None:
        """List, add button, baseline, buttons."""
        add = QPushButton("Add a spec file\u2026")
        add.clicked.connect(self.add_from_disk)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.list.itemChanged.connect(lambda _item: self._refresh())
        form = QFormLayout()
        form.addRow("Baseline:", self.baseline)
        layout = QVBoxLayout(self)
        for widget in (self.hint, self.list, add):
            layout.addWidget(widget)
        layout.addLayout(form)
        layout.addWidget(self.buttons)

    def _add_item(self, candidate: Candidate, checked: bool) -> None:
        """One checkable row."""
        item = QListWidgetItem(candidate.label)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        item.setToolTip(str(candidate.spec))
        self.list.addItem(item)

    def add_from_disk(self) -> None:
        """Ask for spec files and add them, checked."""
        for path in self.ask_specs():
            spec = Path(path)
            candidate = Candidate(f"{spec.name} \u2014 {spec.parent.name}", spec)
            self.candidates.append(candidate)
            self._add_item(candidate, checked=True)
        self._refresh()

    def _checked(self) -> list[int]:
        """Indices of the checked rows."""
        return [i for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.CheckState.Checked]

    def _refresh(self) -> None:
        """Baseline choices follow the checked rows; OK needs two."""
        current = self.baseline.currentText()
        self.baseline.clear()
        self.baseline.addItems([self.candidates[i].label for i in self._checked()])
        if current:
            self.baseline.setCurrentText(current)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(len(self._checked()) >= 2)

    def set_checked(self, indices: list[int]) -> None:
        """Check exactly these rows (for keyboard-free use and tests)."""
        for i in range(self.list.count()):
            self.list.item(i).setCheckState(Qt.CheckState.Checked if i in indices
                                            else Qt.CheckState.Unchecked)

    def chosen(self) -> tuple[list[Candidate], int]:
        """The checked candidates and the index of the baseline among them."""
        picked = [self.candidates[i] for i in self._checked()]
        return picked, max(self.baseline.currentIndex(), 0)
