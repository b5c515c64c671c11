"""PTX and SASS views with source correlation and an instruction-mix summary.

Selecting a source line highlights the instructions made from it; clicking an instruction asks
the editor to show its source line (sourceLineRequested).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QFont, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ui.assembly_model import (
    SassRow,
    mix_text,
    ptx_mix,
    ptx_source_lines,
    sass_mix,
    sass_rows,
    sass_rows_for_line,
)


def _code_view() -> QPlainTextEdit:
    """A read-only monospace text view without wrapping."""
    view = QPlainTextEdit(readOnly=True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    font = QFont("DejaVu Sans Mono")
    font.setStyleHint(QFont.StyleHint.Monospace)
    view.setFont(font)
    return view


class AssemblyView(QWidget):
    """Kernel selector, mix summary, and SASS and PTX tabs."""

    sourceLineRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_assembly()."""
        super().__init__(parent)
        self.kernel_box = QComboBox()
        self.mix_label = QLabel("Build to see PTX and SASS.")
        self.sass_view = _code_view()
        self.ptx_view = _code_view()
        self.tabs = QTabWidget()
        self._sass: dict[str, list[SassRow]] = {}
        self._rows: list[SassRow] = []
        self._ptx_lines: list[int] = []
        self._ptx = ""
        self._source = ""
        self._syncing = False
        self.highlight = QColor("#3d5a3d")
        self._build()

    def _build(self) -> None:
        """Selector and summary over the two views."""
        top = QHBoxLayout()
        top.addWidget(QLabel("Kernel:"))
        top.addWidget(self.kernel_box, 1)
        self.tabs.addTab(self.sass_view, "SASS")
        self.tabs.addTab(self.ptx_view, "PTX")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.mix_label)
        layout.addWidget(self.tabs, 1)
        self.kernel_box.currentTextChanged.connect(self._show_kernel)
        self.tabs.currentChanged.connect(lambda _: self._update_mix())
        self.sass_view.cursorPositionChanged.connect(self._sass_clicked)
        self.ptx_view.cursorPositionChanged.connect(self._ptx_clicked)

    def show_assembly(self, ptx: str, sass: dict[str, Sequence[dict[str, Any]]],
                      source: str = "") -> None:
        """Show a build's PTX and per-kernel SASS; `source` names the edited file."""
        self._source = source
        self._ptx = ptx or ""
        self._ptx_lines = ptx_source_lines(self._ptx, source)
        self._sass = {name: sass_rows(rows) for name, rows in sass.items()}
        self._syncing = True
        self.ptx_view.setPlainText(self._ptx or "(no PTX)")
        self.kernel_box.clear()
        self.kernel_box.addItems(list(self._sass))
        self._syncing = False
        self._show_kernel(self.kernel_box.currentText())

    def _show_kernel(self, name: str) -> None:
        """Fill the SASS view with one kernel's listing."""
        self._rows = self._sass.get(name, [])
        self._syncing = True
        lines = [f"/*{row.offset:04x}*/  {row.text}" for row in self._rows]
        self.sass_view.setPlainText("\n".join(lines) if lines else "(no SASS)")
        self._syncing = False
        self._update_mix()

    def _update_mix(self) -> None:
        """Summarise the visible listing's instruction mix."""
        if self.tabs.currentWidget() is self.ptx_view:
            self.mix_label.setText("PTX: " + mix_text(ptx_mix(self._ptx)))
        else:
            self.mix_label.setText("SASS: " + mix_text(sass_mix(self._rows)))

    def select_source_line(self, line: int) -> list[int]:
        """Highlight the SASS and PTX lines made from a source line; returns the SASS rows."""
        rows = sass_rows_for_line(self._rows, line, self._source)
        ptx_rows = [i for i, source_line in enumerate(self._ptx_lines) if source_line == line]
        self._mark(self.sass_view, rows)
        self._mark(self.ptx_view, ptx_rows)
        return rows

    def _mark(self, view: QPlainTextEdit, rows: list[int]) -> None:
        """Give whole lines a background and scroll the first into view."""
        selections = []
        document = view.document()
        for row in rows:
            block = document.findBlockByNumber(row)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(self.highlight)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        view.setExtraSelections(selections)
        if selections:
            self._syncing = True
            view.setTextCursor(selections[0].cursor)
            view.centerCursor()
            self._syncing = False

    @property
    def rows(self) -> list[SassRow]:
        """The SASS rows of the kernel shown."""
        return list(self._rows)

    def highlighted_rows(self, view: QPlainTextEdit) -> list[int]:
        """Block numbers currently highlighted in a view (for checks)."""
        return [s.cursor.blockNumber() for s in view.extraSelections()]

    def _sass_clicked(self) -> None:
        """Ask for the source line of the SASS instruction under the cursor."""
        row = self.sass_view.textCursor().blockNumber()
        if not self._syncing and 0 <= row < len(self._rows) and self._rows[row].line > 0:
            self.sourceLineRequested.emit(self._rows[row].line)

    def _ptx_clicked(self) -> None:
        """Ask for the source line of the PTX line under the cursor."""
        row = self.ptx_view.textCursor().blockNumber()
        if not self._syncing and 0 <= row < len(self._ptx_lines) and self._ptx_lines[row] > 0:
            self.sourceLineRequested.emit(self._ptx_lines[row])
