"""A checked review bundle: each spec's claims beside what was obtained here, differences in
red, notes in amber; the manifest's digest and signer above."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.base.plaintext import printable
from app.review.model import BundleCheck

# How much of a bundle's text the view shows (the rest is cut with a count).
NOTE_LIMIT = 2000
CELL_LIMIT = 300

DIFFERS, NOTE, SAME = "#c62828", "#b26a00", "#2e7d32"


class BundleView(QWidget):
    """Summary over one row per compared item."""

    HEADER = ["spec", "what", "claimed", "here", ""]

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_check()."""
        super().__init__(parent)
        self.summary = QLabel("Open a review bundle: File > Open review bundle\u2026")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)  # a bundle's note is not markup
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(self.HEADER))
        self.table.setHorizontalHeaderLabels(self.HEADER)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.check: BundleCheck | None = None

    def show_running(self, path: str) -> None:
        """Say a bundle is being checked."""
        self.summary.setText(f"Checking {path}: manifest first, then every result again "
                             "here\u2026")

    def show_failure(self, message: str) -> None:
        """A bundle refused, or a check that did not finish."""
        self.summary.setText(f"Bundle not checked: {message}")
        self.table.setRowCount(0)

    def show_check(self, check: BundleCheck) -> None:
        """Every item of every spec."""
        self.check = check
        count = sum(len(s.differences) for s in check.specs)
        signed = f"signed by key {check.signer}" if check.signer else "not signed"
        verdict = "every claim holds" if check.claims_hold else f"{count} difference(s)"
        note = f"\nnote: {printable(check.note, NOTE_LIMIT)}" if check.note else ""
        self.summary.setText(f"{check.path}: {verdict} (manifest {check.digest[:16]}\u2026, "
                             f"{signed}){note}")
        rows = [(s.name, i) for s in check.specs for i in s.items]
        self.table.setRowCount(len(rows))
        for row, (name, item) in enumerate(rows):
            mark, colour = ("differs", DIFFERS) if item.differs else (
                ("note", NOTE) if item.note else ("same", SAME))
            texts = [name, item.what, item.claimed, item.obtained, mark]
            for column, text in enumerate(texts):
                # Everything but the mark came from the bundle (or names what it claims).
                cell = QTableWidgetItem(printable(text, CELL_LIMIT))
                cell.setToolTip(printable(item.note, NOTE_LIMIT))
                if column == 4:
                    cell.setBackground(QColor(colour))
                    cell.setForeground(QColor("white"))
                self.table.setItem(row, column, cell)
        self.table.resizeColumnsToContents()
