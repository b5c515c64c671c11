"""The Spec panel: a form over the kernel's spec TOML that validates as you type.

It reads and writes the same file the CLI uses (save goes through app.spec.edit, atomically,
rewriting only the values that changed so the file's comments survive).
Problems from app.spec.model are listed by field, and the fields they name are outlined in red
(a launch's problem on that launch's field); activating a problem puts the cursor in its field.
The launches are a list (ui.spec.launches): a version 1 spec's one [launch] stays one when saved,
unless a second launch is added.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.spec.limits import loads_bounded
from ui.spec.checker import CHECK_DELAY_MS, SpecChecker, headline, summary_lines
from ui.spec.launches import LaunchList

# app.spec.model, app.spec.dtypes and the form helpers import numpy: they load with the first spec,
# not
# at start-up (the window must be on screen fast); here only for annotations.
if TYPE_CHECKING:
    from app.spec.form import ArgRow
    from app.spec.model import Problem, Spec

KINDS = ("in", "out", "inout", "scratch", "scalar")
SCRATCH_DETAIL = ("A scratch buffer has no init: it is poisoned before each run (a kernel must "
                  "write what it reads there)")

LINE_FIELDS = ("source", "options", "reference", "rtol", "atol", "bench_case", "bench_bytes",
               "bench_flops")
# The first launch's fields, which `fields` also names (the one [launch] of most specs).
FIRST_LAUNCH = ("entry", "grid", "block", "shared_bytes")
PROBLEM_FIELDS = {
    "[kernel].source": "source", "[kernel].options": "options",
    "[reference].python": "reference", "[verify].cases": "cases", "[verify].seeds": "seeds",
    "[verify].rtol": "rtol", "[verify].atol": "atol", "[bench].case": "bench_case",
    "[bench].bytes": "bench_bytes", "[bench].flops": "bench_flops", "[[launch]]": "launches",
}
ERROR_STYLE = "border: 1px solid #e53935;"
VALIDATE_MS = 250
DETAIL = 4  # the arguments table's init / value column


def launch_key(index: int, key: str) -> str:
    """The field name of one launch's field: launch1.grid is the second launch's grid."""
    return f"launch{index}.{key}"


def field_for(problem: Problem) -> str:
    """The form field a problem is about ('args' for argument problems, launch_key() for a
    launch's: '[launch].grid[0]' is the first launch's grid, 'launch[1] (k).block' the
    second's block)."""
    from app.spec.form import launch_field

    if problem.field.startswith(("arg[", "arg (", "[[arg]]")):
        return "args"
    launch = launch_field(problem.field)
    if launch is not None:
        return launch_key(*launch)
    for prefix, name in PROBLEM_FIELDS.items():
        if problem.field.startswith(prefix):
            return name
    return ""


class SpecPanel(QWidget):
    """Form, problem list and Save/Reload for one spec file."""

    specSaved = Signal(object)
    validityChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        """An empty panel; load() fills it."""
        super().__init__(parent)
        self.path: Path | None = None
        self.launches = LaunchList()
        self.fields: dict[str, QLineEdit] = {name: QLineEdit() for name in LINE_FIELDS}
        # The first launch's entry, grid, block and shared bytes (its box is never replaced).
        self.fields.update({name: self.launches.editors[0].fields[name] for name in FIRST_LAUNCH})
        self._launch_tables = False  # the file lists its launches as [[launch]] tables
        self.cases = QPlainTextEdit()
        self.cases.setPlaceholderText("one case per line, e.g. n = 1000")
        self.cases.setMaximumHeight(90)
        self.seeds = QSpinBox(minimum=1, maximum=1000)
        self.args = QTableWidget(0, 5)
        self.problems = QListWidget()
        self.problems_label = QLabel("Problems:")
        self.status = QLabel("No spec. Open a kernel that has a .toml spec beside it.")
        self.status.setWordWrap(True)
        self.save_button = QPushButton("Save spec")
        self.reload_button = QPushButton("Reload")
        self._arg_buttons: list[QPushButton] = []
        self._spec: Spec | None = None
        self._problems: list[Problem] = []
        self._modified = False
        self._loading = False
        self._timer = QTimer(self, singleShot=True, interval=VALIDATE_MS)
        self._timer.timeout.connect(self.validate_now)
        self.check_label = QLabel("")
        self.check_label.setWordWrap(True)
        self.check_list = QListWidget()
        self.checker = SpecChecker(self)
        self.checker.checked.connect(self._show_check)
        self.checker.failed.connect(lambda message: self.check_label.setText(
            f"Spec check: could not run ({message})"))
        self._check_timer = QTimer(self, singleShot=True, interval=CHECK_DELAY_MS)
        self._check_timer.timeout.connect(self.check_strength)
        self._build()
        self.setEnabled(False)

    # -- layout -------------------------------------------------------------------------------

    def _build(self) -> None:
        """Groups for kernel, arguments, launch, verification and timing, then problems."""
        form = QWidget()
        column = QVBoxLayout(form)
        column.addWidget(self._group("Kernel", ("source", "options")))
        column.addWidget(self._args_group())
        launches = QGroupBox("Launches (run in order, on the same buffers)")
        QVBoxLayout(launches).addWidget(self.launches)
        column.addWidget(launches)
        verify = self._group("Verify", ("reference", "rtol", "atol"))
        layout = verify.layout()
        assert isinstance(layout, QFormLayout)
        layout.insertRow(1, "cases", self.cases)
        layout.insertRow(2, "seeds", self.seeds)
        column.addWidget(verify)
        column.addWidget(self._group("Bench", ("bench_case", "bench_bytes", "bench_flops")))
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(form)
        self._scroll = scroll
        buttons = QHBoxLayout()
        self.reload_button.clicked.connect(lambda: self.load(self.path) if self.path else None)
        self.save_button.clicked.connect(self.save)
        buttons.addWidget(self.reload_button)
        buttons.addWidget(self.save_button)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        outer.addWidget(self.status)
        outer.addWidget(scroll, 1)
        outer.addWidget(self.problems_label)
        self.problems.setMaximumHeight(110)
        self.problems.setToolTip("Enter or double-click a problem to go to its field")
        self.problems.itemActivated.connect(
            lambda item: self.go_to_problem(self.problems.row(item)))
        outer.addWidget(self.problems)
        outer.addWidget(self.check_label)
        self.check_list.setMaximumHeight(110)
        self.check_list.setVisible(False)
        outer.addWidget(self.check_list)
        outer.addLayout(buttons)
        self._connect_changes()
        self._tab_order()

    def _group(self, title: str, names: tuple[str, ...]) -> QGroupBox:
        """A titled form of line edits."""
        group = QGroupBox(title)
        layout = QFormLayout(group)
        for name in names:
            label = name.removeprefix("bench_").replace("_", " ")
            layout.addRow(label, self.fields[name])
        self.fields["rtol"].setPlaceholderText("default for the dtype")
        self.fields["atol"].setPlaceholderText("default for the dtype")
        return group

    def _args_group(self) -> QGroupBox:
        """The arguments table with add, remove and move buttons."""
        group = QGroupBox("Arguments (one per kernel parameter, in order)")
        self.args.setHorizontalHeaderLabels(["name", "kind", "dtype", "shape", "init / value"])
        self.args.horizontalHeader().setStretchLastSection(True)
        self.args.verticalHeader().setVisible(False)
        # Room for the header and five or six arguments without scrolling (most have fewer).
        rows = self.args.verticalHeader().defaultSectionSize()
        self.args.setMinimumHeight(self.args.horizontalHeader().sizeHint().height() + 6 * rows
                                   + 2 * self.args.frameWidth())
        row = QHBoxLayout()
        for text, slot in (("Add", self.add_arg), ("Remove", self._remove_arg),
                           ("Up", lambda: self._move_arg(-1)), ("Down", lambda: self._move_arg(1))):
            button = QPushButton(text)
            button.clicked.connect(slot)
            row.addWidget(button)
            self._arg_buttons.append(button)
        row.addStretch(1)
        layout = QVBoxLayout(group)
        layout.addWidget(self.args)
        layout.addLayout(row)
        return group

    def _connect_changes(self) -> None:
        """Every edit marks the spec modified and schedules validation."""
        for name in LINE_FIELDS:
            self.fields[name].textChanged.connect(self._changed)
        self.cases.textChanged.connect(self._changed)
        self.seeds.valueChanged.connect(self._changed)
        self.args.itemChanged.connect(self._changed)
        self.launches.changed.connect(self._changed)
        self.launches.countChanged.connect(self._tab_order)

    def _tab_order(self) -> None:
        """Tab goes down the form as it reads, launches included (a launch added later would
        otherwise come last), then the problems and the buttons."""
        chain: list[QWidget] = [self.fields["source"], self.fields["options"], self.args,
                                *self._arg_buttons, *self.launches.focus_order(),
                                self.fields["reference"], self.cases, self.seeds,
                                self.fields["rtol"], self.fields["atol"],
                                *(self.fields[f"bench_{key}"] for key in ("case", "bytes",
                                                                          "flops")),
                                self.problems, self.check_list, self.reload_button,
                                self.save_button]
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)

    # -- arguments ----------------------------------------------------------------------------

    def add_arg(self, row: ArgRow | None = None) -> None:
        """Append an argument row (a float32 input by default)."""
        row = row or {"name": "", "kind": "in", "dtype": "float32", "shape": "n",
                      "detail": "normal"}
        index = self.args.rowCount()
        self.args.insertRow(index)
        self._fill_arg(index, row)
        self._changed()

    def _fill_arg(self, index: int, row: ArgRow) -> None:
        """Put a row's values in the table's cells and combos."""
        from app.spec.dtypes import DTYPES

        self.args.setItem(index, 0, QTableWidgetItem(row["name"]))
        for column, key, choices in ((1, "kind", KINDS), (2, "dtype", tuple(DTYPES))):
            combo = QComboBox()
            combo.addItems(list(choices))
            if row[key] not in choices:
                combo.addItem(row[key])
            combo.setCurrentText(row[key])
            combo.currentTextChanged.connect(self._changed)
            self.args.setCellWidget(index, column, combo)
        kind = self.args.cellWidget(index, 1)
        assert isinstance(kind, QComboBox)
        kind.currentTextChanged.connect(lambda text: self._kind_changed(kind, text))
        self.args.setItem(index, 3, QTableWidgetItem(row["shape"]))
        self.args.setItem(index, DETAIL, QTableWidgetItem(row["detail"]))
        self._show_detail(index, row["kind"])

    def _kind_changed(self, combo: QComboBox, kind: str) -> None:
        """A new kind for the argument whose kind combo this is (rows move: look it up)."""
        for index in range(self.args.rowCount()):
            if self.args.cellWidget(index, 1) is combo:
                self._show_detail(index, kind)

    def _show_detail(self, index: int, kind: str) -> None:
        """A scratch buffer's init cell is read-only and says why; what was typed there stays
        (kind back to in, it is used again)."""
        item = self.args.item(index, DETAIL)
        if item is None:
            return
        self.args.blockSignals(True)  # a look, not an edit
        flags = item.flags() | Qt.ItemFlag.ItemIsEditable
        if kind == "scratch":
            flags &= ~Qt.ItemFlag.ItemIsEditable
        item.setFlags(flags)
        item.setToolTip(SCRATCH_DETAIL if kind == "scratch" else "")
        item.setForeground(self.palette().placeholderText() if kind == "scratch"
                           else self.palette().text())
        self.args.blockSignals(False)

    def arg_rows(self) -> list[ArgRow]:
        """The table as rows."""
        rows = []
        for index in range(self.args.rowCount()):
            kind = self.args.cellWidget(index, 1)
            dtype = self.args.cellWidget(index, 2)
            assert isinstance(kind, QComboBox) and isinstance(dtype, QComboBox)
            rows.append({"name": self._cell(index, 0), "kind": kind.currentText(),
                         "dtype": dtype.currentText(), "shape": self._cell(index, 3),
                         "detail": self._cell(index, 4)})
        return rows

    def _cell(self, row: int, column: int) -> str:
        """Text of a table cell ('' when empty)."""
        item = self.args.item(row, column)
        return item.text() if item is not None else ""

    def _remove_arg(self) -> None:
        """Remove the selected argument."""
        if self.args.currentRow() >= 0:
            self.args.removeRow(self.args.currentRow())
            self._changed()

    def _move_arg(self, step: int) -> None:
        """Move the selected argument up or down (parameter order matters)."""
        index = self.args.currentRow()
        rows = self.arg_rows()
        target = index + step
        if not (0 <= index < len(rows) and 0 <= target < len(rows)):
            return
        rows[index], rows[target] = rows[target], rows[index]
        self._set_args(rows)
        self.args.setCurrentCell(target, 0)
        self._changed()

    def _set_args(self, rows: list[ArgRow]) -> None:
        """Replace every row."""
        self.args.setRowCount(0)
        for index, row in enumerate(rows):
            self.args.insertRow(index)
            self._fill_arg(index, row)

    # -- loading, validating, saving ----------------------------------------------------------

    def load(self, path: Path) -> bool:
        """Read a spec file into the form; False (with the reason shown) when it is unreadable."""
        path = Path(path)
        try:
            data = loads_bounded(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            self.path = None
            self.setEnabled(False)
            self.status.setText(f"Could not read {path.name}: {error}. Open it as text to fix.")
            return False
        from app.spec.form import arg_row, fields_from_data, has_launch_tables, launch_rows

        self._loading = True
        self.path = path
        fields = fields_from_data(data)
        for name in LINE_FIELDS:
            self.fields[name].setText(fields.get(name, ""))
        self._launch_tables = has_launch_tables(data)
        self.launches.set_rows(launch_rows(data))
        self.cases.setPlainText(fields["cases"])
        self.seeds.setValue(int(fields["seeds"] or 3) if fields["seeds"].isdigit() else 3)
        self._set_args([arg_row(a) for a in data.get("arg") or [] if isinstance(a, dict)])
        self._loading = False
        self._modified = False
        self.setEnabled(True)
        self.validate_now()
        return True

    def _changed(self, *_: Any) -> None:
        """An edit: mark modified, validate shortly."""
        if self._loading:
            return
        self._modified = True
        self._timer.start()
        self._show_status()

    def form_data(self) -> dict[str, Any]:
        """The TOML data the form describes."""
        from app.spec.form import build_data

        fields = {name: self.fields[name].text() for name in LINE_FIELDS}
        fields["cases"] = self.cases.toPlainText()
        fields["seeds"] = str(self.seeds.value())
        return build_data(fields, self.arg_rows(), self.launches.rows(), self._launch_tables)

    def validate_now(self) -> list[Problem]:
        """Validate the form, list the problems and outline their fields."""
        from app.spec.form import shown_problem, validate
        from app.spec.model import Spec

        self._timer.stop()
        if self.path is None:
            return []
        outcome = validate(self.form_data(), self.path.resolve().parent, self.path)
        problems = outcome if isinstance(outcome, list) else []
        self._problems = problems
        self._spec = outcome if isinstance(outcome, Spec) else None
        self.problems.clear()
        count = len(self.launches.editors)
        self.problems.addItems([shown_problem(p, count) for p in problems])
        # Only a spec with problems gives the list room; a valid one leaves it to the form.
        self.problems.setVisible(bool(problems))
        self.problems_label.setVisible(bool(problems))
        self._outline({field_for(p) for p in problems})
        self._show_status()
        self.validityChanged.emit(not problems)
        if problems:
            self.checker.stop()
            self._check_timer.stop()
            self._show_unchecked("not run: fix the problems listed first")
        else:
            self._check_timer.start()
        return problems

    def _show_unchecked(self, why: str) -> None:
        """No spec-check answer describes the form as it is: say why, and list nothing."""
        self.check_label.setText(f"Spec check: {why}")
        self.check_list.clear()
        self.check_list.setVisible(False)

    def check_strength(self) -> None:
        """Run spec-check on the spec as the form has it (a private copy when unsaved)."""
        if self.path is None or self._spec is None:
            return
        target = self.path
        if self._modified:
            spec = self._spec
            target = self.checker.private_copy(self.path, [spec.reference_path,
                                                           spec.source_path])
            if not self.write_copy(target):
                return
        self.check_label.setText("Spec check: checking\u2026")
        self.checker.check(target)

    def _show_check(self, report: dict[str, Any]) -> None:
        """Show spec-check's answer: a headline, then what would pass and the warnings."""
        lines = summary_lines(report)
        self.check_label.setText(headline(report))
        self.check_list.clear()
        self.check_list.addItems(lines)
        self.check_list.setVisible(bool(lines))

    def _outline(self, fields: set[str]) -> None:
        """Red outline on fields with problems, none on the others."""
        for name in LINE_FIELDS:
            self.fields[name].setStyleSheet(ERROR_STYLE if name in fields else "")
        self.cases.setStyleSheet(ERROR_STYLE if "cases" in fields else "")
        self.args.setStyleSheet(ERROR_STYLE if "args" in fields else "")
        self.launches.outline({(index, key) for index, key in map(_launch_of, fields)
                               if index >= 0})

    def widget_for(self, name: str) -> QWidget | None:
        """The widget of a field name (field_for()'s answer), None for one not shown."""
        index, key = _launch_of(name)
        if index >= 0:
            return self.launches.field(index, key)
        named: dict[str, QWidget] = {"args": self.args, "cases": self.cases,
                                     "seeds": self.seeds, "launches": self.launches}
        return named.get(name) or self.fields.get(name)

    def go_to_problem(self, row: int) -> None:
        """Put the cursor in the field of the listed problem `row`, scrolled into view."""
        if not 0 <= row < len(self._problems):
            return
        widget = self.widget_for(field_for(self._problems[row]))
        if widget is not None:
            self._scroll.ensureWidgetVisible(widget)
            widget.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show_status(self) -> None:
        """Path, validity and unsaved state in one line."""
        if self.path is None:
            return
        state = "valid" if self._spec is not None else f"{self.problems.count()} problem(s)"
        self.status.setText(f"{self.path.name}: {state}" + (" \u2014 unsaved" if self._modified
                                                            else ""))

    def save(self) -> bool:
        """Write the form to the spec file (atomically), keeping the file's comments and layout
        (templates are commented for learners); refused while the form has problems."""
        if self.path is None or self.validate_now() or self._spec is None:
            return False
        from app.spec.edit import save_spec_keeping_layout

        try:
            save_spec_keeping_layout(self._spec, self.path)
        except OSError as error:
            self.status.setText(f"Could not save {self.path}: {error.strerror}. Your edits are "
                                "still in the form.")
            return False
        self._modified = False
        self._show_status()
        self.specSaved.emit(self.path)
        return True

    def write_copy(self, path: Path) -> bool:
        """Write the form into another spec file (a run's private copy), keeping that file's
        layout; the panel's own file and its unsaved state are left as they are."""
        if self.path is None or self.validate_now() or self._spec is None:
            return False
        from app.spec.edit import save_spec_keeping_layout

        save_spec_keeping_layout(self._spec, path)
        return True

    def spec(self) -> Spec | None:
        """The spec as last validated (None while it has problems)."""
        return self._spec

    def is_modified(self) -> bool:
        """Whether the form has edits not yet saved."""
        return self._modified


def _launch_of(name: str) -> tuple[int, str]:
    """(launch index, key) of a launch_key() name, (-1, '') for another field."""
    head, _, key = name.partition(".")
    if head.startswith("launch") and head[len("launch"):].isdigit() and key:
        return int(head[len("launch"):]), key
    return -1, ""
