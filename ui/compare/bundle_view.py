"""A checked review bundle: each spec's claims beside what was obtained here, differences in
red, notes in amber; the manifest's digest and signer above. Below, the bundled sources (one
shown at a time, or diffed against a local copy) and the reviewer's decision, recorded in the
audit log (the window's commands do the recording: this view only asks)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.base.plaintext import printable
from app.review.model import BundleCheck
from ui.fonts import code_font

# How much of a bundle's text the view shows (the rest is cut with a count).
NOTE_LIMIT = 2000
CELL_LIMIT = 300

DIFFERS, NOTE, SAME = "#c62828", "#b26a00", "#2e7d32"


class BundleView(QWidget):
    """Summary over one row per compared item, then the sources and the decision."""

    HEADER = ["spec", "what", "claimed", "here", ""]
    diffRequested = Signal(str)  # the bundled member to diff against a local copy
    decisionRequested = Signal(bool, str)  # accepted, note

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
        self.sources = QListWidget()
        self.source_text = QPlainTextEdit(readOnly=True)
        self.source_text.setFont(code_font())
        self.texts: dict[str, str] = {}
        self.sources.currentTextChanged.connect(self._show_source)
        self.diff_button = QPushButton("Diff with a local copy\u2026")
        self.diff_button.clicked.connect(self._ask_diff)
        self.note = QLineEdit(placeholderText="Why you accept or reject it (kept in the audit "
                                              "log)")
        self.accept_button = QPushButton("Accept")
        self.reject_button = QPushButton("Reject")
        self.accept_button.clicked.connect(lambda: self._decide(True))
        self.reject_button.clicked.connect(lambda: self._decide(False))
        self.decision = QLabel("")
        self.decision.setWordWrap(True)
        self._build()
        self.check: BundleCheck | None = None
        self._set_reviewable(False)

    def _build(self) -> None:
        """Summary, then the claims and the sources with the decision as two pages (a pane of a
        small window keeps room for the editor)."""
        sources = QSplitter(Qt.Orientation.Horizontal)
        sources.addWidget(self.sources)
        sources.addWidget(self.source_text)
        sources.setStretchFactor(1, 3)
        source_page = QWidget()
        source_layout = QVBoxLayout(source_page)
        source_layout.setContentsMargins(0, 0, 0, 0)
        source_layout.addWidget(sources, 1)
        decide = QHBoxLayout()
        for widget in (self.diff_button, self.note, self.accept_button, self.reject_button):
            decide.addWidget(widget, 1 if widget is self.note else 0)
        source_layout.addLayout(decide)
        source_layout.addWidget(self.decision)
        self.pages = QTabWidget()
        self.pages.addTab(self.table, "Claims")
        self.pages.addTab(source_page, "Sources and decision")
        for view in (self.table, self.sources, self.source_text):
            view.setMinimumHeight(40)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.pages, 1)

    def _set_reviewable(self, on: bool) -> None:
        """Diff and decide only once a bundle was checked."""
        for widget in (self.diff_button, self.note, self.accept_button, self.reject_button):
            widget.setEnabled(on)

    def show_sources(self, texts: dict[str, str]) -> None:
        """The bundled sources by member name (already made safe to show), the first shown."""
        self.texts = dict(texts)
        self.sources.clear()
        self.sources.addItems(list(self.texts))
        if self.texts:
            self.sources.setCurrentRow(0)
        self._set_reviewable(True)

    def _show_source(self, name: str) -> None:
        """One bundled file."""
        self.source_text.setPlainText(self.texts.get(name, ""))

    def _ask_diff(self) -> None:
        """Ask the window to diff the member shown against a local copy."""
        item = self.sources.currentItem()
        if item is not None:
            self.diffRequested.emit(item.text())

    def show_diff(self, name: str, diff: str) -> None:
        """A member against its local copy (the same when the diff is empty)."""
        self.source_text.setPlainText(diff or f"{name}: the local copy is the same.")

    def _decide(self, accepted: bool) -> None:
        """Ask the window to record the decision, with its note."""
        if not self.note.text().strip():
            self.decision.setText("Say why in the note first: it is kept in the audit log.")
            self.note.setFocus()
            return
        self.decisionRequested.emit(accepted, self.note.text())

    def show_decision(self, text: str) -> None:
        """What was recorded (or why nothing could be)."""
        self.decision.setText(text)

    def show_running(self, path: str) -> None:
        """Say a bundle is being checked."""
        self.summary.setText(f"Checking {path}: manifest first, then every result again "
                             "here\u2026")

    def show_failure(self, message: str) -> None:
        """A bundle refused, or a check that did not finish."""
        self.summary.setText(f"Bundle not checked: {message}")
        self.table.setRowCount(0)
        self.show_sources({})
        self._set_reviewable(False)

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
