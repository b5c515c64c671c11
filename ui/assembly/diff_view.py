"""The PTX / SASS pane's diff page: one kernel's SASS against another build's (another
architecture, another tab's kernel), as a unified listing with removed (-) and added (+) lines
coloured, and the counts above it. The diff itself is app.compile.sass_diff's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QPalette, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.compile.assembly import SassRow
from app.compile.sass_diff import Mark, SassDiff, diff_sass, pick_kernel
from ui.fonts import code_font

# Line backgrounds by mark, for a light and a dark palette (the text keeps the palette's colour).
DIFF_COLOURS = {False: {Mark.REMOVED: "#ffdcdc", Mark.ADDED: "#d6f5dc"},
                True: {Mark.REMOVED: "#5a2a2e", Mark.ADDED: "#234a2e"}}


class SassDiffView(QWidget):
    """Title, counts, the other build's kernel when it has several, the listing, and Close."""

    closeRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until begin()."""
        super().__init__(parent)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.kernel_label = QLabel("Against kernel:")
        self.kernel_box = QComboBox()
        self.close_button = QPushButton("Close diff (Esc)")
        self.close_button.setToolTip("Back to the SASS and PTX listings (Escape)")
        self.listing = QPlainTextEdit(readOnly=True)
        self.listing.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.listing.setFont(code_font())
        self.diff: SassDiff | None = None
        self._left: list[SassRow] = []
        self._left_kernel = ""
        self._names = ("", "")
        self._right: dict[str, list[SassRow]] = {}
        self._build()

    def _build(self) -> None:
        """Title and Close, the counts, the kernel chooser, then the listing."""
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.close_button)
        chooser = QHBoxLayout()
        chooser.addWidget(self.kernel_label)
        chooser.addWidget(self.kernel_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addLayout(chooser)
        layout.addWidget(self.listing, 1)
        self.close_button.clicked.connect(self.closeRequested)
        self.kernel_box.currentTextChanged.connect(lambda _: self._compare())
        self._show_chooser(False)

    def begin(self, kernel: str, rows: Sequence[SassRow], left: str, right: str) -> None:
        """A diff of `kernel` (`rows`, from the build named `left`) against the build named
        `right`, which is still to come."""
        self._left, self._left_kernel, self._names = list(rows), kernel, (left, right)
        self._right, self.diff = {}, None
        self.title.setText(f"{kernel}: {left} (\u2212) against {right} (+)")
        self.summary.setText(f"Building {right}\u2026")
        self._show_chooser(False)
        self.listing.setPlainText("")
        self.listing.setExtraSelections([])

    def finish(self, sass: Mapping[str, Sequence[SassRow]], problem: str = "") -> None:
        """The other build's SASS per kernel arrived (or `problem` says why it did not)."""
        self._right = {name: list(rows) for name, rows in sass.items()}
        names = list(self._right)
        if problem or not names:
            self.summary.setText(problem or f"{self._names[1]} has no SASS to compare with: "
                                 "did its build fail? See the Compile pane.")
            return
        blocked = self.kernel_box.blockSignals(True)
        self.kernel_box.clear()
        self.kernel_box.addItems(names)
        self.kernel_box.setCurrentText(pick_kernel(names, self._left_kernel))
        self.kernel_box.blockSignals(blocked)
        self._show_chooser(len(names) > 1)
        self._compare()

    def _show_chooser(self, visible: bool) -> None:
        """The other build's kernel chooser, only when there is a choice."""
        self.kernel_label.setVisible(visible)
        self.kernel_box.setVisible(visible)

    def _compare(self) -> None:
        """Diff the kernel with the chosen one of the other build and show it."""
        right = self._right.get(self.kernel_box.currentText())
        if right is None:
            return
        self.diff = diff_sass(self._left, right, *self._names)
        self.summary.setText(self.diff.summary())
        self.listing.setPlainText("\n".join(self.diff.printed()) or "(no instructions)")
        self._colour()

    def _colour(self) -> None:
        """Backgrounds for the removed and added lines."""
        if self.diff is None:
            return
        dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
        colours = DIFF_COLOURS[dark]
        document = self.listing.document()
        selections = []
        for number, line in enumerate(self.diff.lines):
            if line.mark == Mark.SAME:
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(colours[line.mark]))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(document.findBlockByNumber(number))
            selections.append(selection)
        self.listing.setExtraSelections(selections)

    def marked_lines(self) -> dict[int, str]:
        """The coloured lines (block number to its text), for checks."""
        document = self.listing.document()
        return {s.cursor.blockNumber(): document.findBlockByNumber(s.cursor.blockNumber()).text()
                for s in self.listing.extraSelections()}

    def set_palette_colours(self) -> None:
        """The theme changed: colour the lines for the new palette."""
        self._colour()
