"""Running variants: each verified on the same cases and seeds, then the ones that passed timed
together on a GPU (interleaved, on the same inputs), with each one's median and its 95%
interval, and its ratio to a baseline with the interval of that ratio.

Kernels and references run where the engine runs them (worker processes, the sandbox); whether
code that came from elsewhere may run at all is app.isolation.trust's decision (`trusted=None`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.base import settings
from app.engine.bench.reports import BenchReport, LaunchTiming, VariantTiming
from app.engine.bench.runner import BenchOptions, bench
from app.engine.bench.stats import bootstrap_median, bootstrap_ratio
from app.engine.verify.results import Status, Verdict
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.seeds import DEFAULT_RANDOM_SEEDS
from app.engine.verify.verifier import verify
from app.engine.worker import backends
from app.review.model import LaunchRow, Timing, TimingRow
from app.spec.model import Case, Spec

Progress = Callable[[str, float], None]
NO_GPU = ("not timed: timing needs an NVIDIA GPU with pycuda, and the CPU emulator's times say "
          "nothing about a GPU")
LEVEL = 0.95


@dataclass
class RunOptions:
    """How variants are verified and timed."""

    backend: str = "auto"
    timeout: float = settings.TIME_LIMIT_S
    arch: str | None = None
    compiler: str | None = None
    # None: app.isolation.trust decides (code from elsewhere); True only for the user's own specs.
    trusted: bool | None = None
    time: bool = True
    budget_ms: float = 1000.0
    sweep: tuple[str, list[int | float]] | None = None
    seed: int = 0
    # Also time each launch of a spec of several launches (compare --per-launch).
    per_launch: bool = False


def verify_on(spec: Spec, cases: list[Case], seeds: int, options: RunOptions,
              progress: Progress | None = None,
              fresh_seeds: tuple[int, ...] | None = None,
              extra_seeds: tuple[int, ...] = ()) -> Verdict:
    """Verify one spec on the given cases and seeds (the same for every variant), then on
    `extra_seeds` (a bundle claim's own drawn seeds), and on `fresh_seeds` (seeds drawn at
    random, shared by every variant) or, without them, on one the engine draws now."""
    verify_options = VerifyOptions(
        backend=options.backend, seeds=seeds, cases=list(cases), timeout=options.timeout,
        arch=options.arch, trusted=options.trusted, compiler=options.compiler,
        extra_seeds=extra_seeds,
        random_seeds=DEFAULT_RANDOM_SEEDS if fresh_seeds is None else 0,
        fresh_seeds=fresh_seeds or ())
    return verify(spec, verify_options, progress=progress)


def gpu_available() -> tuple[bool, str]:
    """Whether kernels can be timed here, and why not."""
    chosen, reason = backends.choose("pycuda")
    return chosen is not None, reason


def time_specs(named: list[tuple[str, Spec]], baseline: str | None, options: RunOptions,
               progress: Progress | None = None) -> Timing:
    """Time the specs together on the GPU; a Timing saying why not when there is none."""
    if not options.time:
        return Timing("not_timed", "not timed: timing was not asked for")
    if not named:
        return Timing("not_timed", "not timed: no variant passed verification")
    ok, reason = gpu_available()
    if not ok:
        return Timing("not_timed", f"{NO_GPU} ({reason})" if reason else NO_GPU)
    # Only specs that just passed verification come here, so app.isolation.trust has already let
    # their
    # reference run (in the sandbox, or as trusted content): timing runs it the same way.
    bench_options = BenchOptions(backend="pycuda", budget_ms=options.budget_ms,
                                 sweep=options.sweep, verify_first=False, seed=options.seed,
                                 timeout=options.timeout, compiler=options.compiler,
                                 per_launch=options.per_launch)
    report = bench([spec for _, spec in named], bench_options, progress=progress)
    return timing_from(report, named, baseline, options.seed)


def _by_path(named: list[tuple[str, Spec]]) -> dict[str, str]:
    """Spec path (as the bench report records it) to the variant's name."""
    return {str(spec.path or ""): name for name, spec in named}


def timing_from(report: BenchReport, named: list[tuple[str, Spec]], baseline: str | None,
                seed: int) -> Timing:
    """Rows with intervals and ratios from a bench report."""
    names = _by_path(named)
    rows: list[TimingRow] = []
    for point in report.points:
        timings = {names.get(v.spec_path, v.name): v for v in point.variants}
        base = timings.get(baseline) if baseline else None
        rows += [_row(name, v, base, seed) for name, v in timings.items()]
    environment = {**report.environment, "backend": report.backend,
                   "device": report.device.get("name"), "mode": report.mode}
    if report.status != Status.TIMED:
        return Timing(str(report.status), report.message, rows, environment)
    # The bench's own sentence compares its first two specs only; this one speaks for all.
    note = (f"{len(named)} variant(s) timed interleaved on {report.device.get('name') or '?'} "
            f"({report.mode}); the first and last timed launches of each matched the reference")
    return Timing("timed", note, rows, environment)


def _launch_row(launch: LaunchTiming, sequence_ms: float | None, seed: int) -> LaunchRow:
    """One launch's median and interval, and its share of the sequence's median."""
    row = LaunchRow(launch.entry)
    if launch.samples_ms:
        row.median_ms, row.low_ms, row.high_ms = bootstrap_median(launch.samples_ms, LEVEL,
                                                                  seed=seed)
        row.share = row.median_ms / sequence_ms if sequence_ms else None
    return row


def _row(name: str, timing: VariantTiming, base: VariantTiming | None, seed: int) -> TimingRow:
    """One row: the median's interval, and the ratio to `base` when both have samples."""
    row = TimingRow(name, dict(timing.case), str(timing.status), timing.message,
                    len(timing.samples_ms), gbps=timing.gbps, sequence=list(timing.sequence))
    if timing.samples_ms:
        row.median_ms, row.low_ms, row.high_ms = bootstrap_median(timing.samples_ms, LEVEL,
                                                                  seed=seed)
    row.launches = [_launch_row(launch, row.median_ms, seed) for launch in timing.launches]
    if base is not None and timing.samples_ms and base.samples_ms:
        interval = bootstrap_ratio(timing.samples_ms, base.samples_ms, LEVEL, seed=seed)
        row.ratio, row.ratio_low, row.ratio_high = interval.ratio, interval.low, interval.high
    return row
