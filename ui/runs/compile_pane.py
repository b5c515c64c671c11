"""The Compile pane: clickable diagnostics, the resource table and the compiler's raw output.

It shows the plain data a compile job returns (JSON from app.jobs.server); it never compiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.compile.model import Severity
from ui.fonts import code_font
from ui.runs.run_stages import HINTS, job_stage
from ui.stages import StageList

# "fatal" is a word of compiler logs that app.compile folds into Severity.ERROR.
SEVERITY_ORDER = {"fatal": 0, Severity.ERROR: 0, Severity.WARNING: 1}


@dataclass(frozen=True)
class Diagnostic:
    """One compiler message as the pane and the editor use it."""

    file: str
    line: int
    column: int
    severity: str
    message: str
    raw: str = ""


def diagnostics_from(data: dict[str, Any]) -> list[Diagnostic]:
    """Diagnostics out of a compile result's JSON, most severe first, then by line."""
    found = []
    for item in data.get("diagnostics") or []:
        found.append(Diagnostic(str(item.get("file") or ""), int(item.get("line") or 0),
                                int(item.get("column") or 0),
                                str(item.get("severity") or Severity.NOTE),
                                str(item.get("message") or ""), str(item.get("raw") or "")))
    found.sort(key=lambda d: (SEVERITY_ORDER.get(d.severity, 2), d.line, d.column))
    return found


def _label(key: str) -> str:
    """A column header from a field name: shared_static_bytes -> shared static bytes."""
    return key.replace("_", " ")


def _occupancy_text(value: Any) -> str:
    """Occupancy in a few characters, whatever shape the core returned."""
    if value is None:
        return ""
    if isinstance(value, dict):
        if "error" in value:
            return f"n/a ({value['error']})"
        for key in ("occupancy", "fraction", "ratio"):
            if isinstance(value.get(key), int | float):
                limiter = value.get("limiter") or value.get("limited_by") or ""
                return f"{100 * float(value[key]):.0f}%" + (f" ({limiter})" if limiter else "")
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, float) and value <= 1.0:
        return f"{100 * value:.0f}%"
    return str(value)


class CompilePane(QWidget):
    """Diagnostics list, resources table and raw log, in tabs."""

    diagnosticActivated = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_result()."""
        super().__init__(parent)
        self.summary = QLabel("Not built yet. Build with Ctrl+B.")
        self.stages = StageList(job_stage, HINTS)
        self.diagnostics = QTableWidget(0, 4)
        self.resources = QTableWidget(0, 0)
        self.log = QPlainTextEdit(readOnly=True)
        # The compiler's caret lines point at columns: they need a fixed-width font.
        self.log.setFont(code_font())
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._items: list[Diagnostic] = []
        self._build()

    def _build(self) -> None:
        """Summary line over tabs: Diagnostics, Resources, Output."""
        self.diagnostics.setHorizontalHeaderLabels(["severity", "line", "col", "message"])
        for table in (self.diagnostics, self.resources):
            table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            table.verticalHeader().setVisible(False)
        self.diagnostics.horizontalHeader().setSectionResizeMode(
            3, QHeaderView.ResizeMode.Stretch)
        self.diagnostics.cellClicked.connect(self._activate)
        self.diagnostics.cellActivated.connect(self._activate)
        tabs = QTabWidget()
        tabs.addTab(self.diagnostics, "Diagnostics")
        tabs.addTab(self.resources, "Resources")
        tabs.addTab(self.log, "Output")
        self.tabs = tabs
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.stages)
        layout.addWidget(tabs)

    def show_running(self) -> None:
        """Say a build is under way."""
        self.summary.setText("Building\u2026")
        self.stages.begin()

    def show_progress(self, text: str, fraction: float = -1.0) -> None:
        """News from the running build: a new stage, or how far the current one is."""
        self.stages.advance(text, fraction)

    def show_failure(self, message: str) -> None:
        """Say the build did not produce a result at all (not a compile error: a tool failure)."""
        self.stages.finish()
        self.summary.setText(f"Build did not run: {message}")

    def show_result(self, data: dict[str, Any], stale: bool = False) -> list[Diagnostic]:
        """Fill every tab from a compile result; returns its diagnostics for the editor."""
        self.stages.finish()
        self._items = diagnostics_from(data)
        self._fill_diagnostics()
        self._fill_resources(data.get("kernels") or [], data.get("occupancy") or {})
        self.log.setPlainText(self._log_text(data))
        self.summary.setText(self._summary(data) + (" (the text changed since)" if stale else ""))
        # Problems first; a clean build shows what it costs (registers, spills, occupancy).
        self.tabs.setCurrentWidget(self.diagnostics if self._items or not data.get("ok")
                                   else self.resources)
        return self._items

    def _summary(self, data: dict[str, Any]) -> str:
        """'Built 1 kernel with nvrtc for sm_90' or '2 errors, 1 warning'."""
        errors = sum(1 for d in self._items if SEVERITY_ORDER.get(d.severity) == 0)
        warnings = sum(1 for d in self._items if d.severity == Severity.WARNING)
        if not data.get("ok"):
            if not self._items:  # refused before compiling (an arch, an option, a limit)
                return f"Build failed: {data.get('message') or 'see Output'}"
            return f"Build failed: {errors} error(s), {warnings} warning(s)"
        where = " ".join(str(data[k]) for k in ("backend", "arch") if data.get(k))
        kernels = len(data.get("kernels") or [])
        text = f"Built {kernels} kernel(s)" + (f" ({where})" if where else "")
        return text + (f", {warnings} warning(s)" if warnings else "")

    def _log_text(self, data: dict[str, Any]) -> str:
        """The compiler's own words: its log if the result carries one, else the raw lines."""
        for key in ("log", "output", "stderr"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key])
        if not self._items and data.get("message"):
            return str(data["message"])
        return "\n".join(d.raw or f"{d.line}:{d.column}: {d.severity}: {d.message}"
                         for d in self._items)

    def _fill_diagnostics(self) -> None:
        """One row per diagnostic."""
        self.diagnostics.setRowCount(len(self._items))
        for row, item in enumerate(self._items):
            values = (item.severity, str(item.line or ""), str(item.column or ""), item.message)
            for column, value in enumerate(values):
                cell = QTableWidgetItem(value)
                cell.setToolTip(item.raw or item.message)
                self.diagnostics.setItem(row, column, cell)
        self.diagnostics.resizeColumnsToContents()

    def _fill_resources(self, kernels: list[dict[str, Any]], occupancy: dict[str, Any]) -> None:
        """One row per kernel: registers, shared memory, spills, ..., occupancy."""
        keys = [k for k in dict.fromkeys(k for kernel in kernels for k in kernel)
                if k != "name" and not isinstance(kernels[0].get(k), list | dict)]
        headers = ["kernel", *map(_label, keys), "occupancy"]
        self.resources.setColumnCount(len(headers))
        self.resources.setHorizontalHeaderLabels(headers)
        self.resources.setRowCount(len(kernels))
        for row, kernel in enumerate(kernels):
            name = str(kernel.get("name", ""))
            cells = [name, *(str(kernel.get(k, "")) for k in keys),
                     _occupancy_text(occupancy.get(name))]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                self.resources.setItem(row, column, item)
        self.resources.resizeColumnsToContents()

    def _activate(self, row: int, _column: int) -> None:
        """Jump to the clicked diagnostic's line."""
        if 0 <= row < len(self._items) and self._items[row].line > 0:
            item = self._items[row]
            self.diagnosticActivated.emit(item.line, item.column)

    def items(self) -> list[Diagnostic]:
        """The diagnostics shown."""
        return list(self._items)

