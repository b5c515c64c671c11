"""Compare reports as plain text for the terminal: a table per topic (verdicts, resources,
timing), variants as rows, the baseline marked."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.engine.verify.results import RunResult
from app.review.model import CompareReport, LaunchRow, TimingRow, VariantResult
from app.review.model import duration as format_ms

_NUMBER = re.compile(r"-?[\d.]+(e[-+]?\d+)?( ?[a-zA-Z%]{1,2})?")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell, numbers right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).rjust(w) if i and _numeric(str(c)) else str(c).ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _numeric(text: str) -> bool:
    """Whether a cell reads as a number, perhaps with a short unit (for alignment)."""
    return bool(_NUMBER.fullmatch(text))


def case_text(case: dict[str, int | float]) -> str:
    """n=1000, k=3."""
    return ", ".join(f"{k}={v}" for k, v in case.items()) or "(no size variables)"


def runs_of_case(runs: list[RunResult], case: dict[str, int | float]) -> list[RunResult]:
    """The runs of one case (every seed)."""
    return [r for r in runs if r.case == case]


def case_cell(runs: list[RunResult]) -> str:
    """'3/3 passed', or the first failing status with the passed count, or 'not run'."""
    if not runs:
        return "not run"
    passed = sum(r.passed for r in runs)
    if passed == len(runs):
        return f"{passed}/{len(runs)} passed"
    first = next(r for r in runs if not r.passed)
    return f"{first.status} ({passed}/{len(runs)})"


def _name(report: CompareReport, variant: VariantResult) -> str:
    """The variant's name, the baseline marked with a star."""
    return variant.name + (" *" if variant.name == report.baseline else "")


def _number(value: int | None, unit: str = "") -> str:
    """A count, or '-'."""
    return "-" if value is None else f"{value}{unit}"


def _resources_row(report: CompareReport, v: VariantResult) -> list[str]:
    """Compile facts of one variant."""
    c = v.compile
    if not c.ok:
        return [_name(report, v), "did not compile", "-", "-", "-", "-", c.message[:60]]
    spills = None if c.spill_stores_bytes is None else \
        c.spill_stores_bytes + (c.spill_loads_bytes or 0)
    occupancy = "-" if c.occupancy is None else f"{c.occupancy:.0%} ({c.occupancy_limiter})"
    return [_name(report, v), _number(c.registers), _number(c.shared_static_bytes, " B"),
            _number(spills, " B"), occupancy, str(c.instructions or "-"), c.mix_text()]


def _timing_row(row: TimingRow, baseline: str) -> list[str]:
    """One timed variant at one case."""
    interval = "-" if row.low_ms is None else f"{format_ms(row.low_ms)}..{format_ms(row.high_ms)}"
    name = row.variant + (" *" if row.variant == baseline else "")
    status = "ok" if row.status == "timed" else row.status
    return [name, case_text(row.case), format_ms(row.median_ms), interval, str(row.samples),
            row.ratio_words(), status]


def describe_compare(report: CompareReport) -> str:
    """The whole report for people: verdicts per case, resources, timing, failures."""
    lines = [f"compare: {report.summary()} (* baseline: {report.baseline})", ""]
    header = ["case", *(_name(report, v) for v in report.variants)]
    rows = [[case_text(case), *(case_cell(runs_of_case(v.verdict.runs, case))
                                for v in report.variants)] for case in report.cases]
    rows.append(["verdict", *(str(v.verdict.status) for v in report.variants)])
    lines += ["verification (the same cases and seeds for every variant):", *table(header, rows)]
    lines += ["", f"compiled for {_arch(report)}:"]
    lines += table(["variant", "regs", "shared", "spills", "occupancy", "SASS", "mix"],
                   [_resources_row(report, v) for v in report.variants])
    lines += ["", *_timing_lines(report), *_failure_lines(report)]
    return "\n".join(lines).rstrip()


def _arch(report: CompareReport) -> str:
    """The architecture the variants were compiled for."""
    arches = sorted({v.compile.arch for v in report.variants if v.compile.arch})
    return ", ".join(arches) or "(unknown)"


def _timing_lines(report: CompareReport) -> list[str]:
    """The timing table, or why there is none."""
    timing = report.timing
    if not timing.rows:
        return [timing.note]
    where = timing.environment.get("device") or timing.environment.get("backend") or ""
    lines = [f"timing on {where} ({timing.environment.get('mode', '')}; medians with 95% "
             f"intervals, ratio = time / baseline's time):"]
    lines += table(["variant", "case", "median", "95% CI", "n", "ratio (95% CI)", "checks"],
                   [_timing_row(r, report.baseline) for r in timing.rows])
    lines += _sequence_lines(timing.rows)
    if timing.status != "timed":
        lines.append(f"timing: {timing.status}: {timing.note}")
    return lines


def _sequence_lines(rows: list[TimingRow]) -> list[str]:
    """Which variants' times are sequences of launches, and each launch's part (per-launch)."""
    lines = []
    named: set[str] = set()
    for row in rows:
        if row.sequence and row.variant not in named:
            named.add(row.variant)
            lines.append(f"{row.variant}: each time is the whole sequence of "
                         f"{len(row.sequence)} launches ({', '.join(row.sequence)}), as are "
                         "its bytes and flops")
    timed = [(row, launch) for row in rows for launch in row.launches]
    if not timed:
        return lines
    lines.append("per launch (medians with 95% intervals; share of the sequence's median):")
    lines += table(["variant", "case", "launch", "median", "95% CI", "of sequence"],
                   [_launch_cells(row, number, launch) for row in rows
                    for number, launch in enumerate(row.launches, start=1)])
    return lines


def _launch_cells(row: TimingRow, number: int, launch: LaunchRow) -> list[str]:
    """One launch of one timed variant."""
    interval = "-" if launch.low_ms is None else \
        f"{format_ms(launch.low_ms)}..{format_ms(launch.high_ms)}"
    share = "-" if launch.share is None else f"{launch.share:.1%}"
    return [row.variant, case_text(row.case), f"{number} {launch.entry}",
            format_ms(launch.median_ms), interval, share]


def _failure_lines(report: CompareReport) -> list[str]:
    """What went wrong with each variant that did not pass."""
    lines = []
    for variant in report.variants:
        if not variant.verdict.passed:
            lines += ["", f"{variant.name}: {variant.verdict.status}: {variant.verdict.message}"]
    return lines
