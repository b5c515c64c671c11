"""Typed results of timing (`kernel-studio bench`): they describe themselves for people, as
JSON (with every sample), and as the plain arrays the GUI's charts take.

A variant of a spec of several launches is timed as its whole sequence (`sequence` names the
launches' entries; its bytes, flops and rates are the sequence's) and, with --per-launch, each
launch on its own (`launches`). Both keys stay out of the JSON when empty, so a report of
one-launch specs that did not ask for per-launch times reads as it always did.

A refusal (no GPU), a failed check or a crash is a report with a status and a message, never an
exception; the exit codes follow docs/spec.md."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from app.engine.bench.roofline import Flag
from app.engine.bench.stats import Stats
from app.engine.verify.results import RunResult, Status, exit_code_for, known_fields
from app.engine.worker.timing import STOP_WORDS, StopReason

HEADER = ["variant", "median", "p10..p90", "IQR", "n", "noise", "GB/s", "of BW peak",
          "GFLOP/s", "of FP32 peak", "checks"]
MODE_WORDS = {"cold": "cold: L2 flushed before each sample",
              "hot": "hot: no L2 flush between samples"}


def format_ms(value: float | None) -> str:
    """A duration given in milliseconds, in the unit that reads best."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    if value >= 1:
        return f"{value:.4g} ms"
    if value >= 1e-3:
        return f"{value * 1000:.4g} us"
    return f"{value * 1e6:.4g} ns"


def _percent(value: float | None) -> str:
    """0.0123 as '1.23%'."""
    return "-" if value is None else f"{100 * value:.3g}%"


def _number(value: float | None) -> str:
    """A rate with four significant digits."""
    return "-" if value is None else f"{value:.4g}"


@dataclass
class LaunchTiming:
    """One launch of a variant's sequence: its part of every sample, and their summary."""

    entry: str
    samples_ms: list[float] = field(default_factory=list)
    stats: Stats | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LaunchTiming:
        """A launch's timing from its JSON."""
        values = known_fields(cls, data)
        values["stats"] = Stats.from_json(values.get("stats"))
        return cls(**values)

    @property
    def median_ms(self) -> float | None:
        """The median of the launch's parts, when there are any."""
        return self.stats.median if self.stats else None


# VariantTiming's keys that its JSON leaves out when they are empty (one launch, no --per-launch).
OPTIONAL_KEYS = ("sequence", "launches")


def _case_text(case: dict[str, int | float]) -> str:
    """`n=16777216, k=3`."""
    return ", ".join(f"{k}={v}" for k, v in case.items()) or "(no size variables)"


@dataclass
class VariantTiming:
    """One kernel at one case: every sample, their summary, rates and the anti-gaming checks."""

    name: str
    spec_path: str
    case: dict[str, int | float]
    status: Status
    message: str = ""
    samples_ms: list[float] = field(default_factory=list)
    stats: Stats | None = None
    stop_reason: str = ""
    warmup_launches: int = 0
    bytes: float | None = None
    flops: float | None = None
    gbps: float | None = None
    gflops: float | None = None
    intensity: float | None = None
    bandwidth_share: float | None = None
    fp32_share: float | None = None
    checks: list[RunResult] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    # The entries of the launches one sample runs, when there are several; the bytes, flops
    # and rates above are then the whole sequence's.
    sequence: list[str] = field(default_factory=list)
    # Each launch's part of the samples (--per-launch), in launch order.
    launches: list[LaunchTiming] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VariantTiming:
        """A variant's timing from its JSON."""
        values = known_fields(cls, data)
        values["status"] = Status(values["status"])
        values["stats"] = Stats.from_json(values.get("stats"))
        values["checks"] = [RunResult.from_json(r) for r in values.get("checks", [])]
        values["flags"] = [Flag(**f) for f in values.get("flags", [])]
        values["launches"] = [LaunchTiming.from_json(t) for t in values.get("launches", [])]
        return cls(**values)

    def launch_rows(self) -> list[list[str]]:
        """The per-launch table's rows: launch (number and entry), median, p10..p90, share of
        the sequence's median."""
        rows = []
        whole = self.median_ms
        for number, launch in enumerate(self.launches, start=1):
            s = launch.stats
            spread = f"{format_ms(s.p10)}..{format_ms(s.p90)}" if s else "-"
            part = _percent(s.median / whole) if s and whole else "-"
            rows.append([f"{number} {launch.entry}", format_ms(launch.median_ms), spread, part])
        return rows

    @property
    def median_ms(self) -> float | None:
        """The median sample, when there are samples."""
        return self.stats.median if self.stats else None

    def row(self) -> list[str]:
        """The cells of this variant's line in the readable table."""
        s = self.stats
        checks = "ok" if self.status == Status.TIMED else self.status
        if s is None:
            return [self.name, "-", "-", "-", "0", "-", "-", "-", "-", "-", checks]
        spread = f"{format_ms(s.p10)}..{format_ms(s.p90)}"
        return [self.name, format_ms(s.median), spread, format_ms(s.iqr), str(s.count),
                _percent(s.rse), _number(self.gbps), _percent(self.bandwidth_share),
                _number(self.gflops), _percent(self.fp32_share), checks]


@dataclass
class Comparison:
    """A against B (the baseline): the ratio of medians and its bootstrap interval."""

    candidate: str
    baseline: str
    ratio: float
    low: float
    high: float
    level: float
    no_difference: bool
    same_inputs: bool

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Comparison | None:
        """A comparison from its JSON (None stays None)."""
        return None if data is None else cls(**known_fields(cls, data))

    @property
    def speedup(self) -> float:
        """How many times faster the candidate is (the baseline's time over the candidate's)."""
        return 1.0 / self.ratio if self.ratio else float("inf")

    def describe(self) -> str:
        """One sentence, with the interval."""
        interval = (f"time ratio {self.candidate}/{self.baseline} = {self.ratio:.4f} "
                    f"({self.level:.0%} CI {self.low:.4f}..{self.high:.4f})")
        if self.no_difference:
            return f"{interval}: no measurable difference"
        if self.ratio < 1:
            return f"{interval}: {self.candidate} is {self.speedup:.3g}x faster"
        return f"{interval}: {self.candidate} is {self.ratio:.3g}x slower"


@dataclass
class BenchPoint:
    """One case (one size of a sweep): each variant, their order, the clocks, the comparison."""

    case: dict[str, int | float]
    variants: list[VariantTiming]
    order: list[int] = field(default_factory=list)
    comparison: Comparison | None = None
    clocks: dict[str, float | None] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    sampling_ms: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchPoint:
        """A point from its JSON."""
        values = known_fields(cls, data)
        values["variants"] = [VariantTiming.from_json(v) for v in values.get("variants", [])]
        values["comparison"] = Comparison.from_json(values.get("comparison"))
        values["flags"] = [Flag(**f) for f in values.get("flags", [])]
        return cls(**values)


@dataclass
class BenchReport:
    """The outcome of `bench`: status "timed" when every variant was timed and checked."""

    status: Status
    message: str
    mode: str = "cold"
    backend: str = ""
    device: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    peaks: dict[str, Any] = field(default_factory=dict)
    sweep_variable: str | None = None
    points: list[BenchPoint] = field(default_factory=list)
    verification: list[dict[str, Any]] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 timed, 1 a kernel failed, 2 bad spec or usage, 3 could not decide (no GPU)."""
        return exit_code_for(self.status, Status.TIMED)

    def all_flags(self) -> list[Flag]:
        """The report's flags, then every point's and variant's, without repeats."""
        found: list[Flag] = list(self.flags)
        for point in self.points:
            found += point.flags
            for variant in point.variants:
                found += variant.flags
        return list(dict.fromkeys(found))

    # -- the GUI's charts: plain arrays ---------------------------------------------------------

    def samples_chart(self, point: int = -1) -> tuple[list[str], list[list[float]]]:
        """Variant names and their samples (ms) at one point (the last, by default)."""
        if not self.points:
            return [], []
        chosen = self.points[point]
        return [v.name for v in chosen.variants], [list(v.samples_ms) for v in chosen.variants]

    def sweep_series(self) -> tuple[list[float], dict[str, tuple[list[float], list[float]]]]:
        """Sizes (the sweep variable's values) and, per variant, median times (ms) and GB/s
        (NaN where unknown), as SweepChart.set_sweep takes them."""
        variable = self.sweep_variable
        sizes = [float(p.case.get(variable, 0)) if variable else float(i)
                 for i, p in enumerate(self.points)]
        series: dict[str, tuple[list[float], list[float]]] = {}
        for point in self.points:
            for variant in point.variants:
                times, rates = series.setdefault(variant.name, ([], []))
                times.append(_or_nan(variant.median_ms))
                rates.append(_or_nan(variant.gbps))
        return sizes, series

    def roofline_points(self) -> dict[str, Any]:
        """Peaks and one point per variant of the last case, as RooflineChart.set_roofline
        takes them (points without both bytes and flops are left out)."""
        names: list[str] = []
        intensity: list[float] = []
        gflops: list[float] = []
        for variant in self.points[-1].variants if self.points else []:
            if variant.intensity is not None and variant.gflops is not None:
                names.append(variant.name)
                intensity.append(variant.intensity)
                gflops.append(variant.gflops)
        return {"peak_gflops": self.peaks.get("fp32_gflops"),
                "peak_gbps": self.peaks.get("copy_gbps") or self.peaks.get("theoretical_gbps"),
                "names": names, "intensity": intensity, "gflops": gflops}

    def charts(self) -> dict[str, Any]:
        """Every chart's arrays."""
        names, samples = self.samples_chart()
        sizes, series = self.sweep_series()
        return {"samples": {"names": names, "samples_ms": samples},
                "sweep": {"variable": self.sweep_variable, "sizes": sizes,
                          "series": {k: {"time_ms": t, "gbps": g}
                                     for k, (t, g) in series.items()}},
                "roofline": self.roofline_points()}

    def to_json(self) -> dict[str, Any]:
        """Everything, with every sample, as JSON-ready data (NaN and infinity become null)."""
        data = asdict(self)
        for point in data["points"]:
            point["variants"] = [_without_empty(v) for v in point["variants"]]
        data["exit_code"] = self.exit_code
        data["flags_all"] = [asdict(f) for f in self.all_flags()]
        if len(self.points) > 1 or self.sweep_variable:
            data["charts"] = self.charts()
        else:
            data["charts"] = {k: v for k, v in self.charts().items() if k != "sweep"}
        return _clean(data)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchReport:
        """A report from to_json's data (across the GUI's job pipe, say); NaN that to_json
        turned into null stays null."""
        values = known_fields(cls, data)
        values["status"] = Status(values["status"])
        values["points"] = [BenchPoint.from_json(p) for p in values.get("points", [])]
        values["flags"] = [Flag(**f) for f in values.get("flags", [])]
        return cls(**values)

    # -- for people ----------------------------------------------------------------------------

    def describe(self) -> str:
        """A readable report: a table per case (or a sweep table), then flags and environment."""
        return describe_report(self)


def stop_words(reason: str) -> str:
    """Why sampling stopped, in words (a word this version does not know, as it is)."""
    known = reason in StopReason.__members__.values()
    return STOP_WORDS[StopReason(reason)] if known else reason


def _without_empty(variant: dict[str, Any]) -> dict[str, Any]:
    """A variant's JSON without the OPTIONAL_KEYS that are empty."""
    return {k: v for k, v in variant.items() if k not in OPTIONAL_KEYS or v}


def _or_nan(value: float | None) -> float:
    """A float for a chart: NaN where unknown."""
    return float("nan") if value is None else float(value)


def _clean(value: Any) -> Any:
    """JSON-safe data: non-finite floats become None."""
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


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
        warmups = "warm-up runs of the sequence" if variant.sequence else "warm-up launches"
        if variant.stats is not None:
            lines.append(f"  {variant.name}: {variant.stats.count} samples, stopped because "
                         f"{stop_words(variant.stop_reason)}; {variant.warmup_launches} "
                         f"{warmups}")
        elif variant.message:
            lines.append(f"  {variant.name}: {variant.message}")
        lines += _sequence_lines(variant)
        lines += _check_lines(variant)
    if point.comparison is not None:
        lines.append("  " + point.comparison.describe())
        if not point.comparison.same_inputs:
            lines.append("  (the two specs' inputs differ, so each ran on its own inputs)")
    lines.append("  " + _clock_text(point.clocks))
    return lines


def _sequence_lines(variant: VariantTiming) -> list[str]:
    """What a sample of a sequence is, and each launch's part of it (--per-launch)."""
    lines = []
    if variant.sequence:
        counted = "time, bytes and flops ([bench])" if variant.bytes or variant.flops \
            else "time"
        lines.append(f"  {variant.name}: a sample is the whole sequence of "
                     f"{len(variant.sequence)} launches ({', '.join(variant.sequence)}); its "
                     f"{counted} are the sequence's")
    if variant.launches:
        lines.append(f"  {variant.name} per launch (an event between launches):")
        lines += table([["launch", "median", "p10..p90", "of sequence"]]
                       + variant.launch_rows(), indent="    ")
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
    lines += _sweep_launch_lines(report, variable)
    for point in report.points:
        for variant in point.variants:
            lines += _check_lines(variant)
    return lines


def _sweep_launch_lines(report: BenchReport, variable: str) -> list[str]:
    """A sweep's sequences in a sentence, and each launch's median per size (--per-launch)."""
    lines = []
    first = report.points[0].variants
    for variant in first:
        if variant.sequence:
            lines.append(f"  {variant.name}: each time is the whole sequence of "
                         f"{len(variant.sequence)} launches ({', '.join(variant.sequence)}), "
                         "as are its bytes and flops")
    if not any(v.launches for v in first):
        return lines
    header = [variable] + [f"{v.name} {k + 1} {launch.entry}" for v in first
                           for k, launch in enumerate(v.launches)]
    rows = [header]
    for point in report.points:
        rows.append([str(point.case.get(variable, "?"))]
                    + [format_ms(launch.median_ms) for v in point.variants
                       for launch in v.launches])
    return lines + ["per launch (medians):"] + table(rows)


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
