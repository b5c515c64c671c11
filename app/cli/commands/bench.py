"""`kernel-studio bench SPEC.toml`: time a kernel on the GPU (after verifying it), optionally
against a baseline (--vs) or over sizes (--sweep). A spec of several launches is timed as the
whole sequence; --per-launch times each launch of it too."""

from __future__ import annotations

import argparse
import json
import sys

from app.base.plaintext import clear_line, rewrite_line
from app.cli import flags
from app.cli.commands import bench_pytorch
from app.cli.commands.verify import add_compiler_argument, parse_case
from app.engine.bench.reports import BenchReport
from app.engine.bench.runner import BenchOptions, bench_file, cases_for
from app.engine.verify.results import Status
from app.engine.worker.timing import TimingMode
from app.spec.cases import CaseError, case_text, check_case
from app.spec.model import SpecError, load_spec


def parse_sweep(text: str) -> tuple[str, list[int | float]]:
    """`n=1e4,1e5,1e6` as ('n', [10000, 100000, 1000000])."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not values.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write a sweep as name=v1,v2,... "
                                         "(e.g. n=1e4,1e5,1e6)")
    numbers: list[int | float] = []
    for item in values.split(","):
        value = flags.finite(item)
        numbers.append(int(value) if value.is_integer() else value)
    return name, numbers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The bench flags."""
    parser.add_argument("spec", help="the kernel's spec file (TOML)")
    parser.add_argument("--vs", metavar="OTHER.toml",
                        help="time against this baseline, interleaved (ABAB...) on the same "
                             "inputs, and report the ratio with a 95%% bootstrap interval")
    parser.add_argument("--sweep", type=parse_sweep, metavar="VAR=V1,V2,...",
                        help="time at each value of one size variable (e.g. n=1e4,1e5,1e6)")
    parser.add_argument("--case", type=parse_case, metavar="K=V[,K=V]",
                        help="time this case instead of the spec's [bench] case")
    parser.add_argument("--per-launch", action="store_true",
                        help="also time each launch of a spec of several launches (an event "
                             "between launches); a sample is always the whole sequence")
    parser.add_argument("--hot", action="store_true",
                        help="do not flush L2 between samples (default: cold, flushed)")
    parser.add_argument("--budget-ms", type=flags.finite, default=2000.0,
                        help="time budget per variant and case, in ms (default 2000)")
    parser.add_argument("--min-samples", type=int, default=10, help="at least this many (10)")
    parser.add_argument("--max-samples", type=int, default=10_000, help="at most this many")
    parser.add_argument("--noise", type=flags.finite, default=0.5, metavar="PERCENT",
                        help="stop once the relative standard error is under this (0.5)")
    flags.add_backend(parser, "auto or pycuda time on a GPU; cpu is refused (exit 3)")
    flags.add_timeout(parser, "seconds one launch may take before the worker is killed")
    parser.add_argument("--skip-verify", action="store_true",
                        help="do not run the spec's verification cases first (the first and "
                             "last timed launches are still checked)")
    parser.add_argument("--remeasure-peak", action="store_true",
                        help="measure the device's copy bandwidth again (it is cached)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap interval")
    add_compiler_argument(parser)
    bench_pytorch.add_arguments(parser)
    flags.add_json(parser, "the report, with every sample,")


def _progress(text: str, fraction: float) -> None:
    """Progress on stderr, so that stdout stays the report."""
    if sys.stderr.isatty():
        rewrite_line(f"[{fraction:4.0%}] {text:<60}", 79)


def _usage_error(args: argparse.Namespace) -> str | None:
    """A problem with the flags, or None."""
    if args.budget_ms <= 0:
        return "--budget-ms must be positive"
    if not 1 <= args.min_samples <= args.max_samples:
        return "--min-samples must be at least 1 and at most --max-samples"
    if not 0 < args.noise < 100:
        return "--noise is a percentage between 0 and 100"
    if args.timeout <= 0:
        return "--timeout must be positive"
    return bench_pytorch.usage_error(args)


def run(args: argparse.Namespace) -> int:
    """Time and print the report; the exit code follows docs/spec.md."""
    problem = _usage_error(args)
    if problem:
        print(f"kernel-studio bench: {problem}", file=sys.stderr)
        return 2
    options = BenchOptions(
        backend=args.backend, mode=TimingMode.HOT if args.hot else TimingMode.COLD,
        budget_ms=args.budget_ms,
        min_samples=args.min_samples, max_samples=args.max_samples,
        rse_target=args.noise / 100.0, case=args.case, sweep=args.sweep, vs=args.vs,
        verify_first=not args.skip_verify, timeout=args.timeout,
        remeasure_peaks=args.remeasure_peak, seed=args.seed, compiler=args.compiler,
        per_launch=args.per_launch)
    problem = _case_problem(args.spec, options)
    if problem:
        return _print(BenchReport(Status.SPEC_ERROR, problem), args.json)
    if args.against_pytorch:
        return bench_pytorch.run(args, options, None if args.json else _progress)
    report = bench_file(args.spec, options, progress=None if args.json else _progress)
    if sys.stderr.isatty() and not args.json:
        clear_line(80)
    return _print(report, args.json)


def _print(report: BenchReport, as_json: bool) -> int:
    """Print a report and give its exit code."""
    print(json.dumps(report.to_json(), indent=2) if as_json else report.describe())
    return report.exit_code


def _label(case: dict[str, int | float], options: BenchOptions) -> str:
    """Which flag a bad case came from, with its values."""
    if options.sweep and options.sweep[0] in case:
        name = options.sweep[0]
        return f"--sweep {name}={case[name]}"
    return f"--case {case_text(case)}" if options.case is not None else "[bench].case"


def _case_problem(path: str, options: BenchOptions) -> str | None:
    """What is wrong with the cases to time (--case, --sweep or the spec's [bench].case)
    against the spec and the --vs baseline, found before the GPU is looked for: a bad case
    is bad usage (exit 2) on any machine, not "no GPU". A spec that cannot be read is left
    to bench_file's own report."""
    for item in [path, options.vs] if options.vs else [path]:
        try:
            spec = load_spec(item)
            cases = cases_for(spec, options)
        except SpecError:
            return None
        except CaseError as error:
            return str(error)
        for case in cases:
            problem = check_case(spec, case, _label(case, options))
            if problem:
                return f"{item}: {problem}" if options.vs else problem
    return None
