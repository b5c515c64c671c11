"""The Results pane: the verdict as a badge, one row per case and seed, details for failures.

It shows an engine Verdict, or a timing report (a BenchReport) as the report describes itself;
it never runs anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

from app.engine.verify.results import PLAIN_WORDS, Finding, RunResult, Status, Verdict

# The timing report imports numpy, loaded with the first timing result (startup time); here only
# for annotations.
if TYPE_CHECKING:
    from app.engine.bench.reports import BenchReport

BADGE_COLOURS: dict[str, str] = {
    Status.PASSED: "#2e7d32", Status.TIMED: "#2e7d32", Status.UNVERIFIED: "#b26a00",
    Status.CANCELLED: "#6d6d6d", Status.SPEC_ERROR: "#8e24aa", Status.REFERENCE_ERROR: "#8e24aa"}
FAILED_COLOUR = "#c62828"
BADGE_STYLE = ("QLabel {{ border-radius: 4px; padding: 3px 10px; color: white; "
               "font-weight: bold; background: {}; }}")


def badge_colour(status: str) -> str:
    """Green for passed, amber for undecided, red for any failure."""
    return BADGE_COLOURS.get(status, FAILED_COLOUR)


def _case_text(case: dict[str, int | float]) -> str:
    """{n=1000, m=3}."""
    return ", ".join(f"{k}={v}" for k, v in case.items())


def finding_text(finding: Finding) -> str:
    """A finding in words: buffer, message, what its kind means, how many elements are wrong,
    first bad indices with values, largest errors."""
    lines = [f"{finding.buffer}: {finding.message}"]
    words = PLAIN_WORDS.get(finding.kind)
    if words:
        lines.append(f"    ({words})")
    if finding.count:
        lines.append(f"    {finding.count} of {finding.total} elements are wrong")
    for index, want, got in zip(finding.first_indices, finding.expected, finding.actual,
                                strict=False):
        lines.append(f"    at {tuple(index)}: expected {want}, got {got}")
    if finding.max_abs_error is not None:
        lines.append(f"    largest errors: absolute {finding.max_abs_error:.3g}, "
                     f"relative {finding.max_rel_error or 0:.3g}")
    return "\n".join(lines)


def run_details(run: RunResult) -> str:
    """Everything known about one run, in plain words."""
    lines = [f"case {{{_case_text(run.case)}}}, seed {run.seed}: {run.status}"]
    if PLAIN_WORDS.get(run.status):
        lines.append(PLAIN_WORDS[run.status])
    if run.message:
        lines.append(run.message)
    lines.extend(finding_text(f) for f in run.findings)
    return "\n".join(lines)


def sanitizer_text(verdict: Verdict) -> str:
    """compute-sanitizer's reports, one line each (the engine keeps them as plain records)."""
    return "\n".join(f"{s.get('tool')}: {s.get('kind')} in {s.get('kernel')} at "
                     f"{s.get('location') or 'unknown line'}" for s in verdict.sanitizer)


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
        self._verdict: Verdict | None = None
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

    def show_verdict(self, verdict: Verdict) -> None:
        """Show a verdict: badge, message with its plain words, backend, runs."""
        self._verdict = verdict
        self.set_badge(verdict.status, badge_colour(verdict.status))
        words = PLAIN_WORDS.get(verdict.status, "")
        device = verdict.device.get("name") or verdict.backend
        emulated = " (CPU emulation)" if verdict.emulated else ""
        self.message.setText(f"{verdict.message}\n{words}\nbackend: {device}{emulated}".strip())
        self._fill_runs(verdict.runs)
        self.details.setPlainText(self._first_failure_text(verdict))

    def show_bench(self, report: BenchReport) -> None:
        """Show a timing report: badge, message, and the report's own table."""
        self._verdict = None
        self.set_badge(report.status, badge_colour(report.status))
        self.message.setText(report.message)
        self.runs.setRowCount(0)
        self.details.setPlainText(report.describe())

    def _fill_runs(self, runs: list[RunResult]) -> None:
        """One row per case and seed, failures coloured."""
        self.runs.setRowCount(len(runs))
        for row, run in enumerate(runs):
            values = [_case_text(run.case), str(run.seed), run.status, f"{run.seconds:.3f}",
                      run.message]
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                if column == 2:
                    item.setForeground(QColor("white"))
                    item.setBackground(QColor(badge_colour(run.status)))
                self.runs.setItem(row, column, item)
        self.runs.resizeColumnsToContents()

    @staticmethod
    def _first_failure_text(verdict: Verdict) -> str:
        """Details of the first failing run, or sanitizer findings, or a short all-clear."""
        failed = next((run for run in verdict.runs if not run.passed), None)
        if failed is not None:
            return run_details(failed)
        if verdict.sanitizer:
            return sanitizer_text(verdict)
        return "Every run passed." if verdict.runs else ""

    def _show_run(self, row: int) -> None:
        """Details of the selected run."""
        runs = self._verdict.runs if self._verdict is not None else []
        if 0 <= row < len(runs):
            self.details.setPlainText(run_details(runs[row]))

    def status(self) -> str:
        """The badge text (for checks)."""
        return self.badge.text()

