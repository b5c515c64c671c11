"""The Results pane: the verdict as a badge, one row per case and seed, details for failures.

It shows the JSON form of an engine Verdict (Verdict.to_json()); it never runs anything.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

try:
    from app.engine.verify.results import PLAIN_WORDS
except ImportError:  # pragma: no cover - the engine is not in every checkout yet
    PLAIN_WORDS = {}

BADGE_COLOURS = {"passed": "#2e7d32", "timed": "#2e7d32", "unverified": "#b26a00",
                 "cancelled": "#6d6d6d", "spec_error": "#8e24aa", "reference_error": "#8e24aa"}
FAILED_COLOUR = "#c62828"
BADGE_STYLE = ("QLabel {{ border-radius: 4px; padding: 3px 10px; color: white; "
               "font-weight: bold; background: {}; }}")


def badge_colour(status: str) -> str:
    """Green for passed, amber for undecided, red for any failure."""
    return BADGE_COLOURS.get(status, FAILED_COLOUR)


def _case_text(case: dict[str, Any]) -> str:
    """{n=1000, m=3}."""
    return ", ".join(f"{k}={v}" for k, v in case.items())


def finding_text(finding: dict[str, Any]) -> str:
    """A finding in words: buffer, message, first bad indices with values, largest errors."""
    lines = [f"{finding.get('buffer', '?')}: {finding.get('message', '')}"]
    words = PLAIN_WORDS.get(str(finding.get("kind", "")))
    if words:
        lines.append(f"    ({words})")
    if finding.get("count"):
        lines.append(f"    {finding['count']} of {finding.get('total', '?')} elements are wrong")
    for index, want, got in zip(finding.get("first_indices") or [], finding.get("expected") or [],
                                finding.get("actual") or [], strict=False):
        lines.append(f"    at {tuple(index)}: expected {want}, got {got}")
    if finding.get("max_abs_error") is not None:
        lines.append(f"    largest errors: absolute {finding['max_abs_error']:.3g}, "
                     f"relative {finding.get('max_rel_error') or 0:.3g}")
    return "\n".join(lines)


def run_details(run: dict[str, Any]) -> str:
    """Everything known about one run, in plain words."""
    status = str(run.get("status", ""))
    lines = [f"case {{{_case_text(run.get('case') or {})}}}, seed {run.get('seed')}: {status}"]
    if PLAIN_WORDS.get(status):
        lines.append(PLAIN_WORDS[status])
    if run.get("message"):
        lines.append(str(run["message"]))
    lines.extend(finding_text(f) for f in run.get("findings") or [])
    return "\n".join(lines)


class ResultsPane(QWidget):
    """Badge and message over the runs table and the details of the selected run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_verdict()."""
        super().__init__(parent)
        self.badge = QLabel("NOT RUN")
        self.message = QLabel("Verify with F5, time with Ctrl+F5.")
        self.message.setWordWrap(True)
        self.runs = QTableWidget(0, 5)
        self.details = QPlainTextEdit(readOnly=True)
        self._verdict: dict[str, Any] = {}
        self._build()
        self.set_badge("not run", "#6d6d6d")

    def _build(self) -> None:
        """Badge row, then runs and details in a splitter."""
        self.runs.setHorizontalHeaderLabels(["case", "seed", "status", "seconds", "message"])
        self.runs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs.verticalHeader().setVisible(False)
        self.runs.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.runs.currentCellChanged.connect(lambda row, *_: self._show_run(row))
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.runs)
        splitter.addWidget(self.details)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.message)
        layout.addWidget(splitter, 1)

    def set_badge(self, text: str, colour: str) -> None:
        """Show the badge in a colour."""
        self.badge.setText(text.upper().replace("_", " "))
        self.badge.setStyleSheet(BADGE_STYLE.format(colour))

    def show_running(self, what: str) -> None:
        """Say a run is under way."""
        self.set_badge("running", "#1565c0")
        self.message.setText(what)

    def show_failure(self, message: str, hint: str = "") -> None:
        """A run that produced no verdict (cancelled, or the engine could not start)."""
        status = "cancelled" if message == "cancelled" else "not run"
        self.set_badge(status, badge_colour("cancelled"))
        self.message.setText(message + (f"\n{hint}" if hint else ""))

    def show_verdict(self, verdict: dict[str, Any]) -> None:
        """Show a verdict: badge, message with its plain words, backend, runs."""
        self._verdict = verdict
        status = str(verdict.get("status", "unverified"))
        self.set_badge(status, badge_colour(status))
        words = verdict.get("plain_words") or PLAIN_WORDS.get(status, "")
        device = (verdict.get("device") or {}).get("name") or verdict.get("backend", "")
        emulated = " (CPU emulation)" if verdict.get("emulated") else ""
        self.message.setText(f"{verdict.get('message', '')}\n{words}\n"
                             f"backend: {device}{emulated}".strip())
        self._fill_runs(verdict.get("runs") or [])
        self.details.setPlainText(self._first_failure_text())

    def show_bench(self, report: dict[str, Any]) -> None:
        """Show a timing report: badge, message, and the report's own table."""
        status = str(report.get("status", "unverified"))
        self.set_badge(status, badge_colour(status))
        self.message.setText(str(report.get("message", "")))
        self.runs.setRowCount(0)
        self.details.setPlainText(str(report.get("text") or report.get("message", "")))

    def _fill_runs(self, runs: list[dict[str, Any]]) -> None:
        """One row per case and seed, failures coloured."""
        self.runs.setRowCount(len(runs))
        for row, run in enumerate(runs):
            status = str(run.get("status", ""))
            values = [_case_text(run.get("case") or {}), str(run.get("seed", "")), status,
                      f"{float(run.get('seconds') or 0):.3f}", str(run.get("message", ""))]
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                if column == 2:
                    item.setForeground(QColor("white"))
                    item.setBackground(QColor(badge_colour(status)))
                self.runs.setItem(row, column, item)
        self.runs.resizeColumnsToContents()

    def _first_failure_text(self) -> str:
        """Details of the first failing run, or sanitizer findings, or a short all-clear."""
        for run in self._verdict.get("runs") or []:
            if run.get("status") != "passed":
                return run_details(run)
        sanitizer = self._verdict.get("sanitizer") or []
        if sanitizer:
            return "\n".join(f"{s.get('tool')}: {s.get('kind')} in {s.get('kernel')} at "
                             f"{s.get('location') or 'unknown line'}" for s in sanitizer)
        return "Every run passed." if self._verdict.get("runs") else ""

    def _show_run(self, row: int) -> None:
        """Details of the selected run."""
        runs = self._verdict.get("runs") or []
        if 0 <= row < len(runs):
            self.details.setPlainText(run_details(runs[row]))

    def status(self) -> str:
        """The badge text (for checks)."""
        return self.badge.text()

