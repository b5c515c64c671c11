"""The Compare pane: the variants' sources side by side; on pages beside them the verdict of
each case, resources and instruction mix per variant, and timing bars with intervals and ratios.
It shows a CompareReport; it never runs anything."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from app.review.model import CompareReport
from app.review.model import duration as format_ms
from ui.compare.sources_view import SourcesView
from ui.compare.timing_bars import BarItem, TimingBars
from ui.compare.variant_table import VariantTable


def bar_items(report: CompareReport) -> list[BarItem]:
    """One bar per variant at the last timed case."""
    rows = report.timing.rows
    last = rows[-1].case if rows else None
    return [BarItem(r.variant, r.median_ms, r.low_ms or r.median_ms, r.high_ms or r.median_ms,
                    f"{format_ms(r.median_ms)}  ratio {r.ratio_words()}",
                    r.variant == report.baseline)
            for r in rows if r.case == last and r.median_ms is not None]


class CompareView(QWidget):
    """Summary over sources, facts and timing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until a compare runs."""
        super().__init__(parent)
        self.summary = QLabel("Compare two or more kernels: Run > Compare kernels\u2026")
        self.summary.setWordWrap(True)
        self.sources = SourcesView()
        self.table = VariantTable()
        self.bars = TimingBars()
        self.report: CompareReport | None = None
        self._build()

    def _build(self) -> None:
        """The summary over three pages: sources, facts, timing. Pages, not a split: in a
        bottom pane of a small window a split left the sources three lines tall."""
        pages = QTabWidget()
        pages.addTab(self.sources, "Sources")
        pages.addTab(self.table, "Verdicts and resources")
        pages.addTab(self.bars, "Timing")
        self.pages = pages
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(pages, 1)

    def show_running(self, names: list[str]) -> None:
        """Say which kernels are being compared."""
        self.summary.setText(f"Comparing {', '.join(names)}\u2026 (compile, verify on the "
                             "same cases and seeds, time where a GPU is)")

    def show_failure(self, message: str) -> None:
        """A compare that produced no report."""
        self.summary.setText(f"Compare did not finish: {message}")

    def show_report(self, report: CompareReport) -> None:
        """Sources, table and bars of a report."""
        self.report = report
        names = [v.name for v in report.variants]
        baseline = names.index(report.baseline) if report.baseline in names else 0
        titles = [f"{v.name} \u2014 {v.source_name}" + (" (baseline)" if i == baseline else "")
                  for i, v in enumerate(report.variants)]
        self.sources.show_sources([(t, v.source) for t, v in zip(titles, report.variants,
                                                                  strict=True)], baseline)
        self.table.show_report(report)
        self.bars.set_bars(bar_items(report), report.timing.note)
        self.summary.setText(f"{report.summary()}; baseline {report.baseline}. "
                             f"{'' if report.timing.rows else report.timing.note}".strip())
