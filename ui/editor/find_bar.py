"""The find and replace bar under the editor tabs (plain text or regular expressions)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from ui.editor.cuda_editor import CudaEditor
from ui.editor.search import SearchOptions, highlight_matches, replace_selection


class FindBar(QWidget):
    """Find and replace in whichever editor `editor_source` returns (the current tab)."""

    def __init__(self, editor_source: Callable[[], CudaEditor | None],
                 parent: QWidget | None = None) -> None:
        """Build the fields; hidden until find or replace is asked for."""
        super().__init__(parent)
        self._editor_source = editor_source
        self.find_field = QLineEdit(placeholderText="Find")
        self.replace_field = QLineEdit(placeholderText="Replace with")
        self.regex_box = QCheckBox("Regex")
        self.case_box = QCheckBox("Match case")
        self.word_box = QCheckBox("Whole word")
        self.status = QLabel()
        self._build()
        self.hide()

    def _button(self, text: str, slot: Callable[[], object]) -> QPushButton:
        """A push button wired to `slot`."""
        button = QPushButton(text)
        button.clicked.connect(slot)
        button.setAutoDefault(False)
        return button

    def _build(self) -> None:
        """Lay out two rows: find with its options, replace with its buttons."""
        layout = QGridLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.find_field, 0, 0)
        layout.addWidget(self._button("Next", self.find_next), 0, 1)
        layout.addWidget(self._button("Previous", self.find_previous), 0, 2)
        layout.addWidget(self.regex_box, 0, 3)
        layout.addWidget(self.case_box, 0, 4)
        layout.addWidget(self.word_box, 0, 5)
        layout.addWidget(self.status, 0, 6)
        layout.addWidget(self._button("Close", self.close_bar), 0, 7)
        layout.addWidget(self.replace_field, 1, 0)
        self.replace_button = self._button("Replace", self.replace_one)
        self.replace_all_button = self._button("Replace all", self.replace_all)
        layout.addWidget(self.replace_button, 1, 1)
        layout.addWidget(self.replace_all_button, 1, 2)
        layout.setColumnStretch(0, 1)
        self.find_field.returnPressed.connect(self.find_next)
        self.find_field.textChanged.connect(self._refresh_highlights)
        self.replace_field.returnPressed.connect(self.replace_one)
        for box in (self.regex_box, self.case_box, self.word_box):
            box.toggled.connect(self._refresh_highlights)

    def options(self) -> SearchOptions:
        """The search as the fields describe it."""
        return SearchOptions(self.find_field.text(), self.regex_box.isChecked(),
                             self.case_box.isChecked(), self.word_box.isChecked())

    def open_find(self, replace: bool = False) -> None:
        """Show the bar (with the replace row when asked), seeded with the selected text or
        else the word under the caret (a multi-line selection leaves the field as it was)."""
        editor = self._editor_source()
        seed = editor.word_at_caret() if editor is not None else ""
        if seed and "\n" not in seed:
            self.find_field.setText(seed)
        for widget in (self.replace_field, self.replace_button, self.replace_all_button):
            widget.setVisible(replace)
        self.show()
        self.find_field.setFocus()
        self.find_field.selectAll()
        self._refresh_highlights()

    def close_bar(self) -> None:
        """Hide the bar, clear match highlights, give focus back to the editor."""
        self.hide()
        editor = self._editor_source()
        if editor is not None:
            highlight_matches(editor, SearchOptions(""))
            editor.take_focus()

    def find_next(self) -> bool:
        """Select the next match."""
        return self._find(backwards=False)

    def find_previous(self) -> bool:
        """Select the previous match."""
        return self._find(backwards=True)

    def _find(self, backwards: bool) -> bool:
        """Search in the current editor and say so when nothing matches."""
        editor = self._editor_source()
        if editor is None:
            return False
        found = editor.find_match(self.options(), backwards)
        self.status.setText("" if found else "No match")
        return found

    def replace_one(self) -> bool:
        """Replace the selected match, then move to the next one."""
        editor = self._editor_source()
        if editor is None:
            return False
        done = replace_selection(editor, self.options(), self.replace_field.text())
        self.find_next()
        return done

    def replace_all(self) -> int:
        """Replace every match in the current editor and report the count."""
        editor = self._editor_source()
        if editor is None:
            return 0
        count = editor.replace_all(self.options(), self.replace_field.text())
        self.status.setText(f"Replaced {count}")
        return count

    def _refresh_highlights(self) -> None:
        """Highlight every match of the current search in the editor."""
        editor = self._editor_source()
        if editor is None or not self.isVisible():
            return
        count = highlight_matches(editor, self.options())
        self.status.setText(f"{count} matches" if self.find_field.text() else "")

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Escape closes the bar."""
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
            return
        super().keyPressEvent(event)
