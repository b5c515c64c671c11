"""PTX and SASS views with source correlation and an instruction-mix summary.

Both views show the kernel chosen in the kernel box (shown when a file has several kernels):
its SASS listing and its own part of the module's PTX, not the whole module. Selecting a source
line highlights the instructions made from it; clicking an instruction asks the editor to show
its source line (sourceLineRequested).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

from ui.assembly.model import (
    SassRow,
    mix_text,
    ptx_files,
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


def _in_file_order(names: list[str], module_ptx: str) -> list[str]:
    """Kernel names in the order their PTX appears (the source's order; the cubin lists them
    the other way round); names without PTX go last."""
    def position(name: str) -> int:
        """Where the kernel's `.entry` is in the module, or past the end."""
        found = module_ptx.find(f".entry {name}(")
        return found if found >= 0 else len(module_ptx)

    return sorted(names, key=position)


class AssemblyView(QWidget):
    """Kernel selector, mix summary, and SASS and PTX tabs."""

    sourceLineRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_assembly()."""
        super().__init__(parent)
        self.kernel_box = QComboBox()
        self.kernel_label = QLabel("Kernel:")
        self.mix_label = QLabel("Build to see PTX and SASS.")
        self.sass_view = _code_view()
        self.ptx_view = _code_view()
        self.tabs = QTabWidget()
        self._sass: dict[str, list[SassRow]] = {}
        self._rows: list[SassRow] = []
        self._ptx_lines: list[int] = []
        self._ptx = ""
        self._module_ptx = ""
        self._ptx_by_kernel: dict[str, str] = {}
        self._source = ""
        self._syncing = False
        self.highlight = QColor("#3d5a3d")
        self._build()

    def _build(self) -> None:
        """Selector and summary over the two views."""
        top = QHBoxLayout()
        top.addWidget(self.kernel_label)
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

    def show_assembly(self, ptx: str, sass: Mapping[str, Sequence[dict[str, Any]]],
                      source: str = "",
                      ptx_by_kernel: Mapping[str, str | None] | None = None) -> None:
        """Show a build: the module's PTX, each kernel's PTX (`ptx_by_kernel`, cut out of the
        module by app.compile.ptx_function) and SASS; `source` names the edited file."""
        self._source = source
        self._module_ptx = ptx or ""
        self._ptx_by_kernel = {name: text for name, text in (ptx_by_kernel or {}).items() if text}
        self._sass = {name: sass_rows(rows) for name, rows in sass.items()}
        names = _in_file_order(list(dict.fromkeys([*self._sass, *self._ptx_by_kernel])),
                               self._module_ptx)
        self._syncing = True
        self.kernel_box.clear()
        self.kernel_box.addItems(names)
        self._syncing = False
        # A chooser only when there is a choice to make.
        self.kernel_box.setVisible(len(names) > 1)
        self.kernel_label.setVisible(len(names) > 1)
        self._show_kernel(self.kernel_box.currentText())

    def kernels(self) -> list[str]:
        """The kernels of the build shown, in the file's order."""
        return [self.kernel_box.itemText(i) for i in range(self.kernel_box.count())]

    def _show_kernel(self, name: str) -> None:
        """Fill both views with one kernel: its SASS listing and its PTX (the whole module when
        its own part is unknown)."""
        self._rows = self._sass.get(name, [])
        self._ptx = self._ptx_by_kernel.get(name) or self._module_ptx
        self._ptx_lines = ptx_source_lines(self._ptx, self._source, ptx_files(self._module_ptx))
        self._syncing = True
        lines = [f"/*{row.offset:04x}*/  {row.text}" for row in self._rows]
        self.sass_view.setPlainText("\n".join(lines) if lines else "(no SASS)")
        self.ptx_view.setPlainText(self._ptx or "(no PTX)")
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
