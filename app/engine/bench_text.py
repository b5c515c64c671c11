"""The readable form of a timing report: one table per case, or one table for a size sweep,
then the comparison, flags, clocks, peaks and environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.engine.bench_results import _case_text, _number, format_ms, stop_words

if TYPE_CHECKING:
    from app.engine.bench_results import BenchPoint, BenchReport, VariantTiming

HEADER = ["variant", "median", "p10..p90", "IQR", "n", "noise", "GB/s", "of BW peak",
          "GFLOP/s", "of FP32 peak", "checks"]
MODE_WORDS = {"cold": "cold: L2 flushed before each sample",
              "hot": "hot: no L2 flush between samples"}


def table(rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Rows as aligned columns (first column left, the others right)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i])
                 for i, cell in enumerate(row)]
        lines.append(indent + "  ".join(cells).rstrip())
    return lines


def _check_lines(variant: VariantTiming) -> list[str]:
    """What the checks of the first and last timed launches found, when they failed."""
    lines = []
    for run in variant.checks:
        if run.passed:
            continue
        lines.append(f"  {variant.name}: {run.message or run.status}")
        for finding in run.findings:
            lines.extend("    " + line for line in finding.describe().splitlines())
    return lines


def _point_lines(point: BenchPoint) -> list[str]:
    """One case: the table, how sampling stopped, the comparison."""
    lines = [f"case {_case_text(point.case)}"]
    lines += table([HEADER] + [v.row() for v in point.variants])
    for variant in point.variants:
        if variant.stats is not None:
            lines.append(f"  {variant.name}: {variant.stats.count} samples, stopped because "
                         f"{stop_words(variant.stop_reason)}; {variant.warmup_launches} "
                         "warm-up launches")
        elif variant.message:
            lines.append(f"  {variant.name}: {variant.message}")
        lines += _check_lines(variant)
    if point.comparison is not None:
        lines.append("  " + point.comparison.describe())
        if not point.comparison.same_inputs:
            lines.append("  (the two specs' inputs differ, so each ran on its own inputs)")
    lines.append("  " + _clock_text(point.clocks))
    return lines


def _clock_text(clocks: dict[str, Any]) -> str:
    """SM clock at the start and end of sampling."""
    start, end = clocks.get("start_mhz"), clocks.get("end_mhz")
    if start is None and end is None:
        return "SM clock: not readable here"
    low = clocks.get("min_mhz")
    lowest = f", lowest {low:.0f}" if low is not None and low != end else ""
    return (f"SM clock: {_mhz(start)} at start, {_mhz(end)} at end{lowest} "
            f"({clocks.get('source') or 'unknown source'})")


def _mhz(value: float | None) -> str:
    """'1980 MHz' or '?'."""
    return "?" if value is None else f"{value:.0f} MHz"


def _sweep_lines(report: BenchReport) -> list[str]:
    """A size sweep: one row per size, median and GB/s per variant."""
    variable = report.sweep_variable or "size"
    names = [v.name for v in report.points[0].variants]
    header = [variable] + [f"{n} {what}" for n in names for what in ("median", "GB/s")]
    compared = any(p.comparison is not None for p in report.points)
    if compared:
        header.append("ratio (95% CI)")
    rows = [header]
    for point in report.points:
        row = [str(point.case.get(variable, "?"))]
        for variant in point.variants:
            row += [format_ms(variant.median_ms), _number(variant.gbps)]
        if compared:
            c = point.comparison
            row.append(f"{c.ratio:.3f} ({c.low:.3f}..{c.high:.3f})" if c else "-")
        rows.append(row)
    lines = [f"size sweep over {variable}"] + table(rows)
    for point in report.points:
        for variant in point.variants:
            lines += _check_lines(variant)
    return lines


def _environment_lines(report: BenchReport) -> list[str]:
    """GPU, driver, CUDA versions, and the peaks the shares refer to."""
    env = report.environment
    lines = []
    if report.device.get("kind") != "gpu":
        return [f"method: {env.get('timer', '?')}"] if env else []
    if env:
        lines.append(f"environment: {env.get('gpu_name', '?')} ({env.get('arch', '?')}, "
                     f"{env.get('gpu_uuid') or 'no UUID'}), driver "
                     f"{env.get('driver_version') or '?'}, CUDA {env.get('cuda_driver') or '?'} "
                     f"(driver), pycuda built for CUDA {env.get('pycuda_cuda') or '?'}")
        lines.append(f"method: {env.get('timer', '?')}; flush {env.get('flush', '?')}; "
                     f"helper kernels {env.get('helpers', '?')}")
    peaks = report.peaks
    if peaks:
        lines.append(f"peaks: copy {_number(peaks.get('copy_gbps'))} GB/s measured "
                     f"({peaks.get('copy_note', '')}); theoretical "
                     f"{_number(peaks.get('theoretical_gbps'))} GB/s; FP32 "
                     f"{_number(peaks.get('fp32_gflops'))} GFLOP/s "
                     f"({peaks.get('fp32_note', '')})")
    return lines


def describe_report(report: BenchReport) -> str:
    """The whole readable report."""
    where = report.device.get("name", report.backend) if report.device else report.backend
    lines = [f"{report.status.upper()}: {report.message}"]
    if report.points:
        how = MODE_WORDS.get(report.mode, report.mode) if report.device.get("kind") == "gpu" \
            else "emulated: the host clock, no device caches"
        lines.append(f"  on {where}, {how}")
    for item in report.verification:
        lines.append(f"  verified first: {item.get('spec')}: {item.get('status')} "
                     f"({item.get('message')})")
    if report.sweep_variable and report.points:
        lines += _sweep_lines(report)
    else:
        for point in report.points:
            lines += _point_lines(point)
    flags = report.all_flags()
    if flags:
        lines.append("flags:")
        lines += [f"  ! {flag.code}: {flag.message}" for flag in flags]
    lines += _environment_lines(report)
    lines.append(f"took {report.seconds:.1f} s")
    return "\n".join(lines)
