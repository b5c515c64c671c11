"""The HTML report of a compare: verdicts per case, resources and instruction mix, timing bars
with intervals and ratios, the sources side by side against the baseline, the environment and
the hashes of what was compared."""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path

from app.base.fsutil import atomic_write_text
from app.review import html as h
from app.review.diff import counts, side_by_side
from app.review.model import CompareReport, TimingRow, VariantResult
from app.review.model import duration as format_ms
from app.review.text import case_cell, case_text, runs_of_case


def sha256_text(text: str) -> str:
    """The SHA-256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _verification(report: CompareReport) -> str:
    """Cases down, variants across."""
    rows: list[list[str | h.Cell]] = []
    for case in report.cases:
        cells = [case_cell(runs_of_case(v.verdict.runs, case)) for v in report.variants]
        rows.append([case_text(case), *(h.status_cell(c) for c in cells)])
    rows.append([h.Cell("verdict", "mono"), *(h.status_cell(str(v.verdict.status))
                                             for v in report.variants)])
    notes = [h.paragraph(f"{v.name}: {v.verdict.message}", "note") for v in report.variants
             if not v.verdict.passed]
    header = ["case", *(_title(report, v) for v in report.variants)]
    return h.section(f"Verification ({report.seeds} seeds per case, the same for every variant)",
                     h.table(header, rows), *notes)


def _title(report: CompareReport, variant: VariantResult) -> str:
    """A variant's name, marked when it is the baseline."""
    return variant.name + (" (baseline)" if variant.name == report.baseline else "")


def _resources(report: CompareReport) -> str:
    """Registers, shared memory, spills, occupancy and SASS mix per variant."""
    rows: list[list[str | h.Cell]] = []
    for v in report.variants:
        c = v.compile
        spills = (c.spill_stores_bytes or 0) + (c.spill_loads_bytes or 0)
        occupancy = "-" if c.occupancy is None else f"{c.occupancy:.0%} ({c.occupancy_limiter})"
        top = ", ".join(f"{k} {n}" for k, n in c.opcodes.items())
        rows.append([_title(report, v), h.status_cell("ok" if c.ok else "compile_error"),
                     h.Cell(str(c.registers if c.registers is not None else "-"), "num"),
                     h.Cell(f"{c.shared_static_bytes or 0} B", "num"),
                     h.Cell(f"{spills} B", "num"), occupancy, c.mix_text(),
                     h.Cell(top or c.message, "mono")])
    arches = ", ".join(sorted({v.compile.arch for v in report.variants if v.compile.arch}))
    return h.section(f"Compiled for {arches}", h.table(
        ["variant", "compile", "registers", "shared", "spills", "occupancy", "SASS mix",
         "most frequent opcodes"], rows))


def _bars(rows: list[TimingRow], baseline: str) -> str:
    """One chart per timed case."""
    cases: dict[str, list[TimingRow]] = {}
    for row in rows:
        cases.setdefault(case_text(row.case), []).append(row)
    charts = []
    for case, group in cases.items():
        bars = [h.Bar(r.variant, r.median_ms, r.low_ms or r.median_ms, r.high_ms or r.median_ms,
                      f"{format_ms(r.median_ms)}  ratio {r.ratio_words()}",
                      r.variant == baseline) for r in group if r.median_ms is not None]
        charts.append(h.paragraph(case) + h.bar_chart(bars))
    return "".join(charts)


def _timing(report: CompareReport) -> str:
    """The timing table and bars, or why there is none."""
    timing = report.timing
    if not timing.rows:
        return h.section("Timing", h.paragraph(timing.note, "note"))
    rows: list[list[str | h.Cell]] = [
        [r.variant, case_text(r.case), h.Cell(format_ms(r.median_ms), "num"),
         h.Cell(f"{format_ms(r.low_ms)} .. {format_ms(r.high_ms)}", "num"),
         h.Cell(str(r.samples), "num"), h.Cell(r.ratio_words(), "num"),
         h.status_cell("ok" if r.status == "timed" else r.status)] for r in timing.rows]
    where = timing.environment.get("device") or timing.environment.get("backend") or "?"
    return h.section(
        f"Timing on {where}",
        h.paragraph("Interleaved on the same inputs; medians with 95% bootstrap intervals; "
                    f"ratio = time over {report.baseline}'s time (below 1 is faster)."),
        h.table(["variant", "case", "median", "95% interval", "samples", "ratio (95%)",
                 "checks"], rows),
        _bars(timing.rows, report.baseline), h.paragraph(timing.note, "note"))


def _sources(report: CompareReport) -> str:
    """Each variant against the baseline, side by side."""
    base = report.variant(report.baseline)
    parts = []
    for v in report.variants:
        if v.name == base.name:
            continue
        rows = side_by_side(base.source, v.source)
        removed, added = counts(rows)
        parts.append(h.paragraph(f"{v.name} against {base.name}: {removed} line(s) only in "
                                 f"{base.name}, {added} only in {v.name}"))
        parts.append(h.diff_table(rows, f"{base.name} ({base.source_name})",
                                  f"{v.name} ({v.source_name})"))
    return h.section("Sources", *parts)


def _provenance(report: CompareReport) -> str:
    """Environment and hashes."""
    env = {"host": platform.node(), "python": platform.python_version(),
           "platform": platform.platform(), **{k: v for k, v in
                                                report.timing.environment.items() if v}}
    env_rows: list[list[str | h.Cell]] = [[k, h.Cell(str(v), "mono")] for k, v in env.items()]
    hashes: list[list[str | h.Cell]] = [
        [v.name, h.Cell(v.spec_path, "mono"), h.Cell(sha256_text(v.source), "mono")]
        for v in report.variants]
    return (h.section("Environment", h.table(["what", "value"], env_rows)) +
            h.section("Hashes", h.table(["variant", "spec", "SHA-256 of the kernel source"],
                                        hashes)))


def compare_html(report: CompareReport) -> str:
    """The whole compare report as one self-contained HTML document."""
    code = report.exit_code
    word = {0: "passed", 1: "failed", 2: "bad input", 3: "unverified"}.get(code, "failed")
    body = [f"<p>{h.badge(word)} {h.esc(report.summary())}; baseline "
            f"<b>{h.esc(report.baseline)}</b>.</p>",
            _verification(report), _resources(report), _timing(report), _sources(report),
            _provenance(report)]
    names = " vs ".join(v.name for v in report.variants)
    return h.page(f"Compare: {names}", "kernel-studio compare", body)


def write_report(path: Path, text: str) -> None:
    """Write a report atomically (OSError for the caller to report)."""
    atomic_write_text(path, text)
