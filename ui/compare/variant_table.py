"""The facts of every variant in one table: variants across, the verdict of each case, then
resources, instruction mix, and timing down (cells coloured by status)."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem, QWidget

from app.review.model import CompareReport, TimingRow, VariantResult
from app.review.model import duration as format_ms
from app.review.text import case_cell, case_text, runs_of_case

OK, BAD, WARN = "#2e7d32", "#c62828", "#b26a00"


def colour_of(text: str) -> str | None:
    """Green for passed, amber for undecided, red for failures, none for plain facts."""
    if text.endswith("passed") or text in ("passed", "ok"):
        return OK
    if text.startswith(("unverified", "not run", "cancelled")):
        return WARN
    return BAD if text else None


def _resources(variant: VariantResult) -> list[str]:
    """Registers, shared memory, spills, occupancy and mix of one variant."""
    c = variant.compile
    if not c.ok:
        return ["did not compile", "-", "-", "-", c.message[:80]]
    spills = (c.spill_stores_bytes or 0) + (c.spill_loads_bytes or 0)
    occupancy = "-" if c.occupancy is None else f"{c.occupancy:.0%} ({c.occupancy_limiter})"
    return [str(c.registers), f"{c.shared_static_bytes or 0} B", f"{spills} B", occupancy,
            f"{c.instructions} SASS: {c.mix_text()}"]


def _timing(rows: list[TimingRow], name: str) -> list[str]:
    """Median with interval and ratio at the last timed case, or '-'."""
    mine = [r for r in rows if r.variant == name]
    if not mine or mine[-1].median_ms is None:
        return ["-", "-"]
    row = mine[-1]
    return [f"{format_ms(row.median_ms)} ({format_ms(row.low_ms)}..{format_ms(row.high_ms)})",
            row.ratio_words()]


class VariantTable(QTableWidget):
    """Rows of facts, one column per variant."""

    FACTS = ["registers", "shared", "spills", "occupancy", "instruction mix", "median (95%)",
             "ratio to baseline (95%)"]

    def __init__(self, parent: QWidget | None = None) -> None:
        """Empty until show_report()."""
        super().__init__(0, 0, parent)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)

    def show_report(self, report: CompareReport) -> None:
        """Fill the table from a compare report."""
        labels = [case_text(c) for c in report.cases] + ["verdict", *self.FACTS]
        self.setRowCount(len(labels))
        self.setColumnCount(len(report.variants))
        self.setVerticalHeaderLabels(labels)
        self.setHorizontalHeaderLabels([v.name + (" (baseline)" if v.name == report.baseline
                                                  else "") for v in report.variants])
        for column, variant in enumerate(report.variants):
            statuses = [case_cell(runs_of_case(variant.verdict.runs, c)) for c in report.cases]
            facts = _resources(variant) + _timing(report.timing.rows, variant.name)
            for row, text in enumerate([*statuses, str(variant.verdict.status)]):
                self._put(row, column, text, colour_of(text))
            for row, text in enumerate(facts, start=len(statuses) + 1):
                self._put(row, column, text, None)
        self.resizeColumnsToContents()

    def _put(self, row: int, column: int, text: str, colour: str | None) -> None:
        """One cell."""
        item = QTableWidgetItem(text)
        if colour:
            item.setBackground(QColor(colour))
            item.setForeground(QColor("white"))
        self.setItem(row, column, item)

    def cell_text(self, row_label: str, column: int) -> str:
        """The text at a row (by its label) and column, for checks."""
        for row in range(self.rowCount()):
            header = self.verticalHeaderItem(row)
            if header is not None and header.text() == row_label:
                item = self.item(row, column)
                return item.text() if item is not None else ""
        return ""
