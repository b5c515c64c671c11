"""The Eval view: every evaluation in the local results store (kernel-studio eval appends one
line per run) as a table, pass@1 of each arm over the runs as a chart, and the lift of the last
run with its interval. It only reads the store; evaluations run from the command line."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.assist.evaluation.store import load_results, store_path
from ui.eval.chart import PassChart

HEADERS = ["started", "tasks", "K", "R", "arm", "pass@1", "pass@K", "compile errors",
           "rounds to pass", "tokens", "seconds", "lift (95% interval)"]
EMPTY = ("No evaluation yet. Run one from a terminal, for example:\n"
         "  kernel-studio eval --limit 3 -k 1 --rounds 2\n"
         "  kernel-studio eval --split dev -k 4 --rounds 3 --skills both")


def _rate(value: Any) -> str:
    """A rate for a cell."""
    return "-" if value is None else f"{float(value):.3f}"


def _lift(result: dict[str, Any], arm: str) -> str:
    """The lift of this arm over the other, with its interval, when it is the treatment."""
    for item in result.get("lifts", []):
        if item.get("treatment") == arm and item.get("mean") is not None:
            return (f"{item['mean']:+.3f} ({item['low']:+.3f} to {item['high']:+.3f}, "
                    f"{item['tasks']} tasks)")
    return ""


def rows(results: list[dict[str, Any]]) -> list[list[str]]:
    """One row per run and arm, newest run first."""
    found = []
    for result in reversed(results):
        settings = result.get("settings", {})
        started = str(result.get("started", ""))[:19] + (" (stopped)" if result.get(
            "stopped") else "")
        for arm, s in result.get("summaries", {}).items():
            found.append([started, str(s.get("tasks")), str(settings.get("k")),
                          str(settings.get("rounds")), arm, _rate(s.get("pass_at_1")),
                          _rate(s.get("pass_at_k")), _rate(s.get("compile_error_rate")),
                          _rate(s.get("rounds_to_pass")), str(s.get("new_tokens")),
                          f"{float(result.get('seconds', 0)):.0f}", _lift(result, arm)])
    return found


def series(results: list[dict[str, Any]]) -> dict[str, tuple[list[int], list[float]]]:
    """pass@1 of each arm by run number (runs where the arm had no decided task left out)."""
    found: dict[str, tuple[list[int], list[float]]] = {}
    for index, result in enumerate(results):
        for arm, s in result.get("summaries", {}).items():
            if s.get("pass_at_1") is not None:
                xs, ys = found.setdefault(arm, ([], []))
                xs.append(index + 1)
                ys.append(float(s["pass_at_1"]))
    return found


class EvalView(QWidget):
    """The table and the chart of the stored evaluations."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Read the store once; Refresh reads it again."""
        super().__init__(parent)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.chart = PassChart()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.refresh_button = QPushButton("Refresh")
        self._build()
        self.refresh()

    def _build(self) -> None:
        """Note and Refresh on top, the table, the chart."""
        top = QHBoxLayout()
        top.addWidget(self.note, 1)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.chart, 1)
        self.refresh_button.clicked.connect(self.refresh)

    def refresh(self) -> None:
        """Read the store and show what it holds."""
        results, skipped = load_results()
        table_rows = rows(results)
        self.table.setRowCount(len(table_rows))
        for r, row in enumerate(table_rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.chart.set_series(series(results))
        note = f"{len(results)} evaluation(s) in {store_path()}" if results else EMPTY
        if skipped:
            note += f" ({skipped} line(s) could not be read and were skipped)"
        self.note.setText(note)

class EvalDialog(QDialog):
    """The Eval view in a window of its own."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """The view, sized for its table."""
        super().__init__(parent)
        self.setWindowTitle("Evaluations of the local model")
        self.view = EvalView(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.view)
        self.resize(1000, 600)
