"""The Spec pane's launches: one box per launch (entry, arguments, grid, block, shared memory),
run in order on the buffers they share; add, remove and reorder them.

A box is reused, never rebuilt, while the launch count allows: reordering moves the text
between boxes, so the first launch's fields are always the same widgets (the pane's `fields`
names them, as for the one [launch] of a version 1 spec).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from app.spec.form import LaunchRow

KEYS = ("entry", "args", "grid", "block", "shared_bytes")
LABELS = {"shared_bytes": "shared bytes"}
PLACEHOLDERS = {
    "entry": "the __global__ function, e.g. reduce_sum or scale<float, 4>",
    "args": "every argument, in order",
    "grid": "e.g. cdiv(n, 256)",
    "block": "e.g. 256",
    "shared_bytes": "dynamic shared memory in bytes, e.g. 0",
}
TIPS = {"args": "The names of the [[arg]] entries this launch takes, in the kernel's parameter "
                "order, e.g. x, partial, n. Empty: every argument, in the table's order."}
ERROR_STYLE = "border: 1px solid #e53935;"


def new_row(after: LaunchRow | None) -> LaunchRow:
    """A launch to add after `after`: the same shape (most passes share it), no entry yet (the
    pane asks for one), every argument."""
    shape = after or {"grid": "1", "block": "256", "shared_bytes": "0"}
    return {"entry": "", "args": "", "grid": shape["grid"], "block": shape["block"],
            "shared_bytes": shape["shared_bytes"]}


class LaunchEditor(QGroupBox):
    """One launch's fields and its Up, Down and Remove buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty fields."""
        super().__init__(parent)
        self.fields = {key: QLineEdit() for key in KEYS}
        self.up = QPushButton("Up")
        self.down = QPushButton("Down")
        self.remove = QPushButton("Remove")
        layout = QFormLayout(self)
        for key, field in self.fields.items():
            field.setPlaceholderText(PLACEHOLDERS[key])
            field.setToolTip(TIPS.get(key, ""))
            layout.addRow(LABELS.get(key, key), field)
        buttons = QHBoxLayout()
        for button, tip in ((self.up, "Run this launch earlier"),
                            (self.down, "Run this launch later"),
                            (self.remove, "Remove this launch")):
            button.setToolTip(tip)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addRow(buttons)

    def row(self) -> LaunchRow:
        """The fields as typed."""
        return {key: field.text() for key, field in self.fields.items()}

    def set_row(self, row: LaunchRow) -> None:
        """Show a launch (a field already holding the text is left alone: its cursor stays)."""
        for key, field in self.fields.items():
            if field.text() != row.get(key, ""):
                field.setText(row.get(key, ""))

    def focus_order(self) -> list[QWidget]:
        """The widgets Tab visits, top to bottom."""
        return [*self.fields.values(), self.up, self.down, self.remove]


class LaunchList(QWidget):
    """The launches of a run, in order, with an Add launch button under them."""

    changed = Signal()
    countChanged = Signal()  # a launch added or removed (the pane's tab order follows)

    def __init__(self, parent: QWidget | None = None) -> None:
        """One empty launch (a spec has at least one)."""
        super().__init__(parent)
        self.editors: list[LaunchEditor] = []
        self.add_button = QPushButton("Add launch")
        self.add_button.setToolTip("Add a launch that runs after the others, on the same "
                                   "buffers (a spec version 2 [[launch]] table)")
        self.add_button.clicked.connect(self.add_launch)
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addStretch(1)
        self._column.addLayout(row)
        self.set_rows([new_row(None)])

    # -- rows ---------------------------------------------------------------------------------

    def rows(self) -> list[LaunchRow]:
        """Every launch as typed, in order."""
        return [editor.row() for editor in self.editors]

    def set_rows(self, rows: list[LaunchRow]) -> None:
        """Show these launches (at least one), reusing the boxes there are."""
        rows = rows or [new_row(None)]
        count = len(self.editors)
        while len(self.editors) < len(rows):
            self._append_editor()
        while len(self.editors) > len(rows):
            editor = self.editors.pop()
            editor.hide()
            editor.deleteLater()
        for editor, row in zip(self.editors, rows, strict=True):
            editor.set_row(row)
        self._label()
        if len(self.editors) != count:
            self.countChanged.emit()

    def _append_editor(self) -> None:
        """A new box at the end, its edits and buttons connected."""
        editor = LaunchEditor()
        for field in editor.fields.values():
            field.textChanged.connect(self.changed)
        editor.up.clicked.connect(lambda: self.move_launch(self.editors.index(editor), -1))
        editor.down.clicked.connect(lambda: self.move_launch(self.editors.index(editor), 1))
        editor.remove.clicked.connect(lambda: self.remove_launch(self.editors.index(editor)))
        self._column.insertWidget(len(self.editors), editor)
        self.editors.append(editor)

    def _label(self) -> None:
        """Titles say the order; buttons that would do nothing are disabled."""
        count = len(self.editors)
        for index, editor in enumerate(self.editors):
            editor.setTitle(f"Launch {index + 1} of {count}" if count > 1 else "Launch")
            editor.up.setEnabled(index > 0)
            editor.down.setEnabled(index < count - 1)
            editor.remove.setEnabled(count > 1)

    # -- editing ------------------------------------------------------------------------------

    def add_launch(self) -> None:
        """Append a launch and put the cursor in its entry."""
        rows = self.rows()
        self.set_rows([*rows, new_row(rows[-1] if rows else None)])
        self.changed.emit()
        self.editors[-1].fields["entry"].setFocus()

    def remove_launch(self, index: int) -> None:
        """Remove a launch (the last one stays: a run has at least one)."""
        rows = self.rows()
        if len(rows) < 2 or not 0 <= index < len(rows):
            return
        del rows[index]
        self.set_rows(rows)
        self.changed.emit()
        self.editors[min(index, len(rows) - 1)].fields["entry"].setFocus()

    def move_launch(self, index: int, step: int) -> None:
        """Run a launch earlier (-1) or later (1); the focus follows it."""
        rows = self.rows()
        target = index + step
        if not (0 <= index < len(rows) and 0 <= target < len(rows)):
            return
        rows[index], rows[target] = rows[target], rows[index]
        self.set_rows(rows)
        self.changed.emit()
        moved = self.editors[target]
        button = moved.up if step < 0 else moved.down
        (button if button.isEnabled() else moved.fields["entry"]).setFocus()

    # -- problems and focus -------------------------------------------------------------------

    def field(self, index: int, key: str) -> QLineEdit | None:
        """The widget of one launch's field, if that launch is shown."""
        return self.editors[index].fields.get(key) if 0 <= index < len(self.editors) else None

    def outline(self, fields: set[tuple[int, str]]) -> None:
        """Red outline on the (launch, key) fields with problems, none on the others."""
        for index, editor in enumerate(self.editors):
            for key, field in editor.fields.items():
                field.setStyleSheet(ERROR_STYLE if (index, key) in fields else "")

    def focus_order(self) -> list[QWidget]:
        """The widgets Tab visits: each launch's, then Add launch."""
        return [w for editor in self.editors for w in editor.focus_order()] + [self.add_button]
