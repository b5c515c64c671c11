"""PTX and SASS views with source correlation and an instruction-mix summary.

Both views show the kernel chosen in the kernel box (shown when a file has several kernels):
its SASS listing and its own part of the module's PTX, not the whole module, coloured, with the
source lines they came from quoted between the instructions. Selecting a source line highlights
the instructions made from it and counts them; Previous and Next step through them. Clicking
an instruction marks it and asks the editor to show its source line (sourceLineRequested).

The header says which architecture the build shown is for; the arch picker asks for a build of
the current text for another one (archChosen), and the Diff menu for the SASS of another
architecture or another tab's kernel to compare with (diffRequested): the window's commands run
those builds and hand the results back (show_assembly, begin_diff, finish_diff). Escape leaves
the diff.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPalette, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.compile.assembly import (
    SassRow,
    mix_text,
    ptx_files,
    ptx_mix,
    ptx_source_lines,
    sass_mix,
    sass_rows,
    sass_rows_for_line,
)
from app.compile.listing import ListingLine, quote_locs, sass_listing
from ui.assembly.arch_box import ArchBox
from ui.assembly.diff_view import SassDiffView
from ui.assembly.highlighter import PTX_RULES, SASS_RULES, AssemblyHighlighter
from ui.fonts import code_font

DIFF_ARCH, DIFF_TAB = "arch", "tab"  # what diffRequested's first argument names
NO_BUILD = "No build shown: Build (Ctrl+B) to see its SASS and PTX."

# Backgrounds: the selected line's instructions, and the one clicked or stepped to.
LINE_COLOURS = {True: ("#2f4a35", "#4f7a3a"), False: ("#e6f4e9", "#b9e0a5")}


def _code_view() -> QPlainTextEdit:
    """A read-only monospace text view without wrapping."""
    view = QPlainTextEdit(readOnly=True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    font = code_font()
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
    """Kernel selector, mix summary, a bar for the selected line's instructions, and SASS and
    PTX tabs."""

    sourceLineRequested = Signal(int)
    archChosen = Signal(str)  # build the current text for this architecture and show it
    diffRequested = Signal(str, str)  # DIFF_ARCH and an architecture, or DIFF_TAB and a tab's id

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_assembly()."""
        super().__init__(parent)
        self.kernel_box = QComboBox()
        self.kernel_label = QLabel("Kernel:")
        self.mix_label = QLabel("Build to see PTX and SASS.")
        self.line_label = QLabel("Put the caret on a source line to see its instructions.")
        # Wrapped, so that the pane can be narrower than its longest sentence (the editor needs
        # the width more at a small window).
        for label in (self.mix_label, self.line_label):
            label.setWordWrap(True)
        self.previous_button = QPushButton("\u25c0 Previous")
        self.next_button = QPushButton("Next \u25b6")
        self.previous_button.setToolTip("The previous instruction made from the caret's line "
                                        "(Alt+Up, from anywhere in the window)")
        self.next_button.setToolTip("The next instruction made from the caret's line "
                                    "(Alt+Down, from anywhere in the window)")
        self.interleave_box = QCheckBox("Source lines")
        self.interleave_box.setChecked(True)
        self.interleave_box.setToolTip("Show the source lines between the instructions made "
                                       "from them")
        self.sass_view = _code_view()
        self.ptx_view = _code_view()
        self.sass_colours = AssemblyHighlighter(self.sass_view.document(), SASS_RULES,
                                                self.palette())
        self.ptx_colours = AssemblyHighlighter(self.ptx_view.document(), PTX_RULES,
                                               self.palette())
        self.tabs = QTabWidget()
        self.header_label = QLabel(NO_BUILD)
        self.header_label.setWordWrap(True)
        self.arch_label = QLabel("Arch:")
        self.arch_box = ArchBox()
        self.diff_button = QToolButton()
        self.diff_button.setText("Diff \u25be")
        self.diff_button.setToolTip("Compare this kernel's SASS with another architecture's or "
                                    "another tab's kernel (Build > SASS diff, Ctrl+Shift+D)")
        self.diff_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.diff_menu = QMenu(self)
        self.diff_menu.setObjectName("menu_sass_diff")
        self.diff_button.setMenu(self.diff_menu)
        self.diff_view = SassDiffView()
        self.pages = QStackedWidget()
        # (buffer id, title) of the other tabs the Diff menu offers; the window's commands set it.
        self.diff_tabs: Callable[[], list[tuple[str, str]]] = list
        self._arch = ""  # the architecture of the build shown
        self._diff_pending = False  # a diff waits for the other build
        self._sass: dict[str, list[SassRow]] = {}
        self._rows: list[SassRow] = []
        self._listing: list[ListingLine] = []
        self._block_of_row: dict[int, int] = {}
        self._ptx_lines: list[int] = []
        self._ptx = ""
        self._module_ptx = ""
        self._ptx_by_kernel: dict[str, str] = {}
        self._source = ""
        self._source_text = ""
        self._line = 0  # the source line whose instructions are highlighted
        self._line_rows: list[int] = []  # their SASS rows
        self._current = -1  # which of them is marked (clicked or stepped to)
        self._syncing = False
        self._build()
        self._update_line_bar()

    def _build(self) -> None:
        """The header with the arch picker and Diff, the kernel selector, then either the
        summary, the line's bar and the two views, or the diff."""
        header = QHBoxLayout()
        header.addWidget(self.header_label, 1)
        header.addWidget(self.arch_label)
        header.addWidget(self.arch_box)
        header.addWidget(self.diff_button)
        top = QHBoxLayout()
        top.addWidget(self.kernel_label)
        top.addWidget(self.kernel_box, 1)
        top.addWidget(self.interleave_box)
        bar = QHBoxLayout()
        bar.addWidget(self.line_label, 1)
        bar.addWidget(self.previous_button)
        bar.addWidget(self.next_button)
        self.tabs.addTab(self.sass_view, "SASS")
        self.tabs.addTab(self.ptx_view, "PTX")
        listings = QWidget()
        inner = QVBoxLayout(listings)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.mix_label)
        inner.addLayout(bar)
        inner.addWidget(self.tabs, 1)
        self.pages.addWidget(listings)
        self.pages.addWidget(self.diff_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(header)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)
        self.arch_box.activated.connect(lambda index: self._arch_activated(
            self.arch_box.itemText(index)))
        self.diff_menu.aboutToShow.connect(self._fill_diff_menu)
        self.diff_view.closeRequested.connect(self.leave_diff)
        self.diff_button.setEnabled(False)
        self.kernel_box.currentTextChanged.connect(self._show_kernel)
        self.tabs.currentChanged.connect(lambda _: self._update_mix())
        self.sass_view.cursorPositionChanged.connect(self._sass_clicked)
        self.ptx_view.cursorPositionChanged.connect(self._ptx_clicked)
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.interleave_box.toggled.connect(lambda _: self._show_kernel(
            self.kernel_box.currentText()))

    def show_assembly(self, ptx: str, sass: Mapping[str, Sequence[dict[str, Any]]],
                      source: str = "",
                      ptx_by_kernel: Mapping[str, str | None] | None = None,
                      source_text: str = "", *, arch: str = "", note: str = "") -> None:
        """Show a build: the module's PTX, each kernel's PTX (`ptx_by_kernel`, cut out of the
        module by app.compile.ptx_function) and SASS; `source` names the edited file and
        `source_text` is the text that was built (quoted between the instructions); `arch` is
        what it was built for, `note` what the header adds about it."""
        self.leave_diff()
        self._arch = arch
        self.arch_box.set_shown(arch)
        if arch:
            self.arch_box.load()
        self.header_label.setText(f"SASS and PTX for {arch}" + (f" ({note})" if note else "")
                                  if arch else NO_BUILD)
        self._source, self._source_text = source, source_text
        # A line chosen in another build (another tab's, maybe) means nothing in this one.
        self._line, self._line_rows, self._current = 0, [], -1
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
        self.diff_button.setEnabled(bool(self._sass))
        self._show_kernel(self.kernel_box.currentText())

    @property
    def arch(self) -> str:
        """The architecture of the build shown ('' when none)."""
        return self._arch

    def _arch_activated(self, arch: str) -> None:
        """The user picked an architecture: ask for its build; the box and the header keep
        saying what is shown until it comes."""
        self.arch_box.set_shown(self._arch)
        if arch and arch != self._arch and self._arch:
            self.header_label.setText(f"SASS and PTX for {self._arch}; building for "
                                      f"{arch}\u2026")
            self.archChosen.emit(arch)

    def arch_refused(self, why: str) -> None:
        """The build for a picked architecture could not start: say so in the header."""
        self.header_label.setText(f"SASS and PTX for {self._arch} ({why})")

    # -- the diff -----------------------------------------------------------------------------

    def open_diff_menu(self) -> None:
        """Pop the Diff menu up under its button (for the menu entry and its key)."""
        self.diff_menu.popup(self.diff_button.mapToGlobal(self.diff_button.rect().bottomLeft()))
        self.diff_menu.setFocus()

    def _fill_diff_menu(self) -> None:
        """The other architectures and the other tabs, as the menu opens."""
        menu = self.diff_menu
        menu.clear()
        if not self._rows:
            menu.addAction("Build first (Ctrl+B) to compare its SASS").setEnabled(False)
            return
        menu.addSection("Against another architecture")
        for arch in self.arch_box.archs:
            if arch != self._arch:
                self._diff_action(arch, f"diff_arch_{arch}", DIFF_ARCH, arch)
        if not self.arch_box.loaded:
            menu.addAction("(asking NVRTC for its architectures\u2026)").setEnabled(False)
        menu.addSection("Against another tab's kernel")
        others = self.diff_tabs()
        for number, (buffer_id, title) in enumerate(others):
            self._diff_action(title, f"diff_tab_{number}", DIFF_TAB, buffer_id)
        if not others:
            menu.addAction("(no other tab open)").setEnabled(False)

    def _diff_action(self, text: str, name: str, kind: str, target: str) -> None:
        """One entry of the Diff menu."""
        action = self.diff_menu.addAction(text)
        action.setObjectName(name)
        action.triggered.connect(lambda _=False: self.diffRequested.emit(kind, target))

    def begin_diff(self, left: str, right: str) -> None:
        """Show the diff page for the kernel shown (from the build named `left`) against the
        build named `right`, which is on its way."""
        self.diff_view.begin(self.kernel_box.currentText(), self._rows, left, right)
        self._diff_pending = True
        self.pages.setCurrentWidget(self.diff_view)
        self.diff_view.listing.setFocus()

    def finish_diff(self, sass: Mapping[str, Sequence[dict[str, Any]]],
                    problem: str = "") -> None:
        """The other build's SASS per kernel (or why there is none): show the diff."""
        if not self._diff_pending:
            return  # left, or replaced by another build, while it was built
        self._diff_pending = False
        self.diff_view.finish({name: sass_rows(rows) for name, rows in sass.items()}, problem)

    def diff_pending(self) -> bool:
        """Whether the diff page waits for the other build."""
        return self._diff_pending

    def in_diff(self) -> bool:
        """Whether the diff page is shown."""
        return self.pages.currentWidget() is self.diff_view

    def leave_diff(self) -> None:
        """Back to the listings."""
        self._diff_pending = False
        self.pages.setCurrentIndex(0)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Escape leaves the diff."""
        if event.key() == Qt.Key.Key_Escape and self.in_diff():
            self.leave_diff()
            self.tabs.currentWidget().setFocus()
            event.accept()
            return
        super().keyPressEvent(event)

    def kernels(self) -> list[str]:
        """The kernels of the build shown, in the file's order."""
        return [self.kernel_box.itemText(i) for i in range(self.kernel_box.count())]

    def _show_kernel(self, name: str) -> None:
        """Fill both views with one kernel: its SASS listing and its PTX (the whole module when
        its own part is unknown), with their source lines quoted."""
        self._rows = self._sass.get(name, [])
        self._ptx = self._ptx_by_kernel.get(name) or self._module_ptx
        self._ptx_lines = ptx_source_lines(self._ptx, self._source, ptx_files(self._module_ptx))
        interleave = self.interleave_box.isChecked()
        self._listing = sass_listing(self._rows, self._source_text, self._source, interleave)
        self._block_of_row = {line.row: block for block, line in enumerate(self._listing)
                              if line.row >= 0}
        ptx_text = quote_locs(self._ptx, self._ptx_lines, self._source_text) if interleave \
            else self._ptx
        self._syncing = True
        self.sass_view.setPlainText("\n".join(line.text for line in self._listing)
                                    if self._listing else "(no SASS)")
        self.ptx_view.setPlainText(ptx_text or "(no PTX)")
        self._syncing = False
        self._update_mix()
        self.select_source_line(self._line)

    def _update_mix(self) -> None:
        """Summarise the visible listing's instruction mix."""
        if self.tabs.currentWidget() is self.ptx_view:
            self.mix_label.setText("PTX: " + mix_text(ptx_mix(self._ptx)))
        else:
            self.mix_label.setText("SASS: " + mix_text(sass_mix(self._rows)))

    # -- rows and blocks ----------------------------------------------------------------------

    def block_of_row(self, row: int) -> int:
        """The block (printed line) of a SASS row."""
        return self._block_of_row.get(row, -1)

    def row_at_block(self, block: int) -> int:
        """The SASS row printed on a block (-1 for a quoted source line)."""
        return self._listing[block].row if 0 <= block < len(self._listing) else -1

    @property
    def rows(self) -> list[SassRow]:
        """The SASS rows of the kernel shown."""
        return list(self._rows)

    # -- the selected line's instructions -----------------------------------------------------

    def select_source_line(self, line: int) -> list[int]:
        """Highlight the SASS and PTX lines made from a source line, count them and mark the
        first; returns the SASS rows (none for line 0, which clears every highlight)."""
        self._line = line
        self._line_rows = sass_rows_for_line(self._rows, line, self._source) if line else []
        self._current = 0 if self._line_rows else -1
        ptx_rows = [i for i, source_line in enumerate(self._ptx_lines)
                    if line and source_line == line]
        self._mark_sass(scroll=True)
        self._mark(self.ptx_view, ptx_rows, -1, scroll=True)
        return list(self._line_rows)

    def step(self, direction: int) -> int:
        """Mark the next (1) or previous (-1) instruction of the selected line, wrapping;
        returns its SASS row (-1 when the line has none)."""
        if not self._line_rows:
            return -1
        self._current = (self._current + direction) % len(self._line_rows)
        self._mark_sass(scroll=True)
        return self._line_rows[self._current]

    def current_row(self) -> int:
        """The SASS row marked as clicked or stepped to (-1 when none)."""
        return self._line_rows[self._current] if self._current >= 0 else -1

    def _mark_sass(self, scroll: bool) -> None:
        """Highlight the line's instructions in the SASS view, the current one more strongly,
        and say how many there are."""
        blocks = [self.block_of_row(row) for row in self._line_rows]
        current = blocks[self._current] if self._current >= 0 else -1
        self._mark(self.sass_view, blocks, current, scroll)
        self._update_line_bar()

    def _update_line_bar(self) -> None:
        """'Line 19: 3 instructions (2 of 3)', with Previous and Next when there are several."""
        count = len(self._line_rows)
        if not self._line:
            text = "Put the caret on a source line to see its instructions."
        elif not count:
            text = f"Line {self._line}: no instructions in this kernel"
        else:
            text = f"Line {self._line}: {count} instruction{'s' if count > 1 else ''} " \
                   f"({self._current + 1} of {count})"
        self.line_label.setText(text)
        for button in (self.previous_button, self.next_button):
            button.setEnabled(count > 1)

    def _colours(self) -> tuple[QColor, QColor]:
        """The line's background and the current instruction's, for the palette."""
        dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
        line, current = LINE_COLOURS[dark]
        return QColor(line), QColor(current)

    def _mark(self, view: QPlainTextEdit, blocks: list[int], current: int,
              scroll: bool) -> None:
        """Give whole lines a background (`current` a stronger one) and scroll to it (or to
        the first)."""
        line_colour, current_colour = self._colours()
        selections = []
        document = view.document()
        for block_number in blocks:
            block = document.findBlockByNumber(block_number)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(current_colour if block_number == current
                                           else line_colour)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        view.setExtraSelections(selections)
        target = current if current >= 0 else (blocks[0] if blocks else -1)
        if scroll and target >= 0:
            self._syncing = True
            view.setTextCursor(QTextCursor(document.findBlockByNumber(target)))
            view.centerCursor()
            self._syncing = False

    def highlighted_rows(self, view: QPlainTextEdit) -> list[int]:
        """Block numbers currently highlighted in a view (for checks)."""
        return [s.cursor.blockNumber() for s in view.extraSelections()]

    def marked_block(self) -> int:
        """The SASS view's block with the current instruction's background (-1 when none)."""
        strong = self._colours()[1]
        return next((s.cursor.blockNumber() for s in self.sass_view.extraSelections()
                     if s.format.background().color() == strong), -1)

    # -- clicks -------------------------------------------------------------------------------

    def _sass_clicked(self) -> None:
        """Mark the clicked instruction among its line's and ask for that source line."""
        if self._syncing:
            return
        row = self.row_at_block(self.sass_view.textCursor().blockNumber())
        if row < 0 or self._rows[row].line <= 0:
            return
        line = self._rows[row].line
        self._line = line
        self._line_rows = sass_rows_for_line(self._rows, line, self._source)
        self._current = self._line_rows.index(row) if row in self._line_rows else -1
        self._mark_sass(scroll=False)
        ptx_rows = [i for i, source_line in enumerate(self._ptx_lines) if source_line == line]
        self._mark(self.ptx_view, ptx_rows, -1, scroll=True)
        self.sourceLineRequested.emit(line)

    def _ptx_clicked(self) -> None:
        """Ask for the source line of the PTX line under the cursor."""
        row = self.ptx_view.textCursor().blockNumber()
        if not self._syncing and 0 <= row < len(self._ptx_lines) and self._ptx_lines[row] > 0:
            self.sourceLineRequested.emit(self._ptx_lines[row])

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch changes the palette: colour the listings and highlights for it."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            for colours in (self.sass_colours, self.ptx_colours):
                colours.set_palette(self.palette())
            self._mark_sass(scroll=False)
            self.diff_view.set_palette_colours()
