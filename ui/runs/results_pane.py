"""The Results pane: the verdict as a badge, one row per case and seed, details for failures.

It shows an engine Verdict, or a timing report (a BenchReport) as the report describes itself;
it never runs anything. A timing run that was refused (no GPU here) does not replace the verdict
on show: the refusal gets a line of its own under it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, Qt
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

from app.base import settings
from app.engine.verify.results import PLAIN_WORDS, RunResult, Status, Verdict
from app.review.result_text import (
    case_text,
    first_failure,
    gui_words,
    run_details,
    run_message,
    run_seconds,
    seed_text,
    summary_text,
)
from ui.runs.run_stages import HINTS, job_stage
from ui.stages import StageList

# The timing report imports numpy, loaded with the first timing result (startup time); here only
# for annotations.
if TYPE_CHECKING:
    from app.engine.bench.reports import BenchReport

BADGE_COLOURS: dict[str, str] = {
    Status.PASSED: "#2e7d32", Status.TIMED: "#2e7d32", Status.UNVERIFIED: "#b26a00",
    Status.CANCELLED: "#6d6d6d", Status.SPEC_ERROR: "#8e24aa", Status.REFERENCE_ERROR: "#8e24aa"}
FAILED_COLOUR = "#c62828"
TIMING_STYLE = "color: #d18b00;"
BADGE_STYLE = ("QLabel {{ border-radius: 4px; padding: 3px 10px; color: white; "
               "font-weight: bold; background: {}; }}")

STALE_STYLE = "color: #e65100; font-style: italic;"
NOT_RUN = "#6d6d6d"  # the badge of a tab with nothing run

def badge_colour(status: str) -> str:
    """Green for passed, amber for undecided, red for any failure."""
    return BADGE_COLOURS.get(status, FAILED_COLOUR)


class ResultsPane(QWidget):
    """Badge and message over the runs table and the details of the selected run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_verdict()."""
        super().__init__(parent)
        self.badge = QLabel("NOT RUN")
        self.message = QLabel("Verify with F5, time with Ctrl+F5.")
        self.message.setWordWrap(True)
        self.stale = QLabel("The text changed since this run: these results are for the text "
                            "as it was. Verify again (F5) to check it.")
        self.stale.setWordWrap(True)
        self.stale.setStyleSheet(STALE_STYLE)
        self.stale.setVisible(False)
        self.stages = StageList(job_stage, HINTS)
        self.timing = QLabel()
        self.timing.setWordWrap(True)
        self.timing.setStyleSheet(TIMING_STYLE)
        self.timing.setVisible(False)
        self.runs = QTableWidget(0, 5)
        self.details = QPlainTextEdit(readOnly=True)
        # The time limit of a launch (the window hands in the run controller's), for timeouts.
        self.time_limit: Callable[[], float] = lambda: settings.TIME_LIMIT_S
        self._verdict: Verdict | None = None
        self._build()
        self.set_badge("not run", NOT_RUN)

    def _build(self) -> None:
        """Badge row, then runs and details in a splitter."""
        self.runs.setHorizontalHeaderLabels(["case", "seed", "status", "seconds", "message"])
        self.runs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs.verticalHeader().setVisible(False)
        # Compact rows: at 1400x900 six runs are visible at once.
        self.runs.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.runs.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.runs.currentCellChanged.connect(lambda row, *_: self._show_run(row))
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.runs)
        splitter.addWidget(self.details)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.message)
        layout.addWidget(self.stale)
        layout.addWidget(self.stages)
        layout.addWidget(self.timing)
        layout.addWidget(splitter, 1)

    def set_badge(self, text: str, colour: str) -> None:
        """Show the badge in a colour."""
        self.badge.setText(text.upper().replace("_", " "))
        self.badge.setStyleSheet(BADGE_STYLE.format(colour))

    def mark_stale(self, stale: bool) -> None:
        """Say whether the buffer changed since the results shown were obtained."""
        self.stale.setVisible(stale)

    def _clear_runs(self) -> None:
        """No verdict on show: no rows, no details, no timing line under them."""
        self._verdict = None
        self.runs.setRowCount(0)
        self.details.clear()
        self.timing.setVisible(False)

    def show_running(self, what: str) -> None:
        """Say a run is under way (the rows of an earlier run are not this run's)."""
        self._clear_runs()
        self.set_badge("running", "#1565c0")
        self.message.setText(what)
        self.stages.begin()

    def show_none(self, text: str) -> None:
        """Nothing has run for the active tab: say so, and show nothing of another tab's."""
        self._clear_runs()
        self.stages.reset()
        self.set_badge("not run", NOT_RUN)
        self.message.setText(text)

    def show_progress(self, text: str, fraction: float = -1.0) -> None:
        """News from the running job: a new stage, or how far the current one is."""
        self.stages.advance(text, fraction)

    def show_failure(self, message: str, hint: str = "") -> None:
        """A run that produced no verdict (cancelled, or the engine could not start)."""
        self.stages.finish()
        self._clear_runs()
        status = "cancelled" if message == "cancelled" else "not run"
        self.set_badge(status, badge_colour("cancelled"))
        self.message.setText(gui_words(message) + (f"\n{hint}" if hint else ""))

    def show_verdict(self, verdict: Verdict) -> None:
        """Show a verdict: badge, message with its plain words, backend, runs; the first run
        that failed is selected and its details shown."""
        self.stages.finish()
        self._verdict = verdict
        self._show_badge_and_message(verdict)
        self.timing.setVisible(False)
        self._fill_runs(verdict.runs, verdict.fresh_seeds)
        self.select_run(first_failure(verdict))

    def _show_badge_and_message(self, verdict: Verdict) -> None:
        """The verdict's badge, and its message with plain words and the backend."""
        self.set_badge(verdict.status, badge_colour(verdict.status))
        words = PLAIN_WORDS.get(verdict.status, "")
        device = verdict.device.get("name") or verdict.backend
        emulated = " (CPU emulation)" if verdict.emulated else ""
        # The seeds drawn for this run, so a failure on one of them can be replayed.
        seeds = f"\n{verdict.seeds_line()}" if verdict.fresh_seeds else ""
        self.message.setText(f"{gui_words(verdict.message)}\n{words}\nbackend: "
                             f"{device}{emulated}{seeds}".strip())

    def show_bench(self, report: BenchReport, verdict: Verdict | None = None) -> None:
        """Show a timing report: badge, message, and the report's own table. A refusal to time
        (status unverified: no GPU here, say) is a line under `verdict`, the same kernel's last
        verification, when it has one (never under whatever verdict was on show)."""
        self.stages.finish()
        if report.status == Status.UNVERIFIED:
            self._verdict = verdict
            if verdict is not None:
                self._show_badge_and_message(verdict)
                self._fill_runs(verdict.runs, verdict.fresh_seeds)
                self.select_run(first_failure(verdict))
            self._show_refusal(gui_words(report.message))
            return
        self._verdict = None
        self.set_badge(report.status, badge_colour(report.status))
        self.message.setText(gui_words(report.message))
        self.timing.setVisible(False)
        self.runs.setRowCount(0)
        self.details.setPlainText(report.describe())

    def _show_refusal(self, message: str) -> None:
        """Timing did not run: say why, under the verdict when one is shown."""
        text = f"Not timed: {message.removeprefix('not timed: ')}"
        if self._verdict is None:
            self.set_badge("not timed", badge_colour(Status.UNVERIFIED))
            self.message.setText(text)
            self.runs.setRowCount(0)
            self.details.clear()
            return
        self._show_badge_and_message(self._verdict)
        self.timing.setText(text)
        self.timing.setVisible(True)

    def _fill_runs(self, runs: list[RunResult], fresh: list[int] | None = None) -> None:
        """One row per case and seed (a seed drawn for this run marked fresh), failures
        coloured."""
        self.runs.blockSignals(True)  # the selection is set once the rows are filled
        self.runs.setRowCount(len(runs))
        for row, run in enumerate(runs):
            values = [case_text(run.case), seed_text(run.seed, fresh or []), run.status,
                      run_seconds(run, self.time_limit()), run_message(run)]
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setToolTip(value if column == 4 else "")
                if column == 2:
                    item.setForeground(QColor("white"))
                    item.setBackground(QColor(badge_colour(run.status)))
                self.runs.setItem(row, column, item)
        self.runs.blockSignals(False)
        self.runs.resizeColumnsToContents()

    def select_run(self, row: int) -> None:
        """Select a run and show its details; -1 selects none and shows the summary."""
        if row < 0:
            self.runs.clearSelection()
            self.runs.setCurrentCell(-1, -1)
            self.details.setPlainText(summary_text(self._verdict) if self._verdict else "")
            return
        # Through the selection model, not selectRow(): selectRow() reads the keyboard's
        # modifiers, and with Ctrl held (or a Ctrl+key just pressed) it toggles the row instead.
        flags = QItemSelectionModel.SelectionFlag
        self.runs.selectionModel().setCurrentIndex(self.runs.model().index(row, 0),
                                                   flags.ClearAndSelect | flags.Rows)
        self._show_run(row)

    def selected_run(self) -> int:
        """The row selected in the runs table (-1 when none)."""
        rows = self.runs.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    def _show_run(self, row: int) -> None:
        """Details of the selected run."""
        runs = self._verdict.runs if self._verdict is not None else []
        if 0 <= row < len(runs):
            self.details.setPlainText(run_details(runs[row], self.time_limit()))

    def status(self) -> str:
        """The badge text (for checks)."""
        return self.badge.text()

