"""`kernel-studio compare A.toml B.toml [C.toml ...]`: variants of one task side by side:
compiled (resources, occupancy, SASS mix), verified on the same cases and seeds, and on a GPU
timed interleaved with each one's ratio to the baseline and its 95% interval. A variant of
several launches is timed as its whole sequence (--per-launch: each launch too)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from app.base.plaintext import clear_line, rewrite_line
from app.cli import flags
from app.cli.commands.bench import parse_sweep
from app.cli.commands.verify import add_compiler_argument
from app.engine.bench.runner import BenchOptions, cases_for
from app.review.compare import compare_variants, fresh_seeds_line
from app.review.evaluate import RunOptions
from app.review.model import CompareReport
from app.review.record import OUTCOMES, record, spec_subject
from app.review.reports import compare_html, write_report
from app.review.text import describe_compare
from app.review.variants import Variant, VariantError, load_variants, pick_baseline
from app.spec.cases import check_case

MILLISECONDS = flags.within(0.0, flags.MAX_SECONDS * 1000, "milliseconds")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The compare flags."""
    parser.add_argument("specs", nargs="+", metavar="SPEC.toml",
                        help="two or more specs of the same task (same arguments)")
    parser.add_argument("--baseline", metavar="NAME",
                        help="the variant the others are measured against (its name, file or "
                             "path; default: the first)")
    parser.add_argument("--sweep", type=parse_sweep, metavar="VAR=V1,V2,...",
                        help="time at each value of one size variable (e.g. n=1e4,1e5,1e6)")
    parser.add_argument("--report", type=Path, metavar="FILE.html",
                        help="also write a self-contained HTML report here")
    flags.add_backend(parser, "where verification runs (timing always needs a GPU)")
    parser.add_argument("--no-timing", action="store_true", help="compile and verify only")
    parser.add_argument("--per-launch", action="store_true",
                        help="also time each launch of a variant of several launches (a "
                             "variant's time is always its whole sequence)")
    parser.add_argument("--budget-ms", type=MILLISECONDS, default=1000.0,
                        help="timing budget per variant and case, in ms (default 1000)")
    flags.add_timeout(parser, "seconds one launch may take before it is killed")
    parser.add_argument("--arch", type=flags.arch,
                        help="compile for this arch when no GPU decides it (default sm_90)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals")
    add_compiler_argument(parser)
    flags.add_json(parser, "the report")


def _progress(text: str, fraction: float) -> None:
    """Progress on stderr, so that stdout stays the report."""
    if sys.stderr.isatty():
        rewrite_line(f"[{fraction:4.0%}] {text:<60}", 79)


def _report_problem(path: Path | None) -> str | None:
    """Why the report cannot be written there, or None."""
    if path is None:
        return None
    if path.suffix.lower() not in (".html", ".htm"):
        return f"--report {path}: name an .html file"
    if not path.parent.is_dir():
        return f"--report {path}: the folder {path.parent} does not exist"
    if path.is_dir():
        return f"--report {path} is a folder: name a file"
    return None


def _record(report: CompareReport, variants_subjects: list[dict[str, object]]) -> None:
    """One audit entry for the whole compare."""
    details = {"baseline": report.baseline,
               "verdicts": {v.name: str(v.verdict.status) for v in report.variants},
               "timing": report.timing.status,
               "ratios": {r.variant: r.ratio for r in report.timing.rows}}
    warning = record("compare", {"variants": variants_subjects},
                     OUTCOMES.get(report.exit_code, "failed"), details)
    if warning:
        print(warning, file=sys.stderr)


def stop_on_terminate() -> None:
    """SIGTERM (the GUI's Cancel) ends the run as Ctrl+C does, so that the engine's cleanup
    runs and the workers it started are stopped with it."""
    def interrupt(_signum: int, _frame: object) -> None:
        """Unwind through every finally block."""
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupt)


def _sweep_problem(variants: list[Variant],
                   sweep: tuple[str, list[int | float]] | None) -> str | None:
    """What is wrong with --sweep for any variant (an unknown variable, a size no case can
    have), found before anything runs; None when it is fine or absent."""
    if sweep is None:
        return None
    name = sweep[0]
    for variant in variants:
        for case in cases_for(variant.spec, BenchOptions(sweep=sweep)):  # what timing runs
            problem = check_case(variant.spec, case, f"--sweep {name}={case[name]}")
            if problem:
                return f"{variant.name}: {problem}"
    return None


def run(args: argparse.Namespace) -> int:
    """Compare, print the table (or JSON), write the report; exit code over every variant."""
    stop_on_terminate()
    problem = _report_problem(args.report)
    if problem:
        print(f"kernel-studio compare: {problem}", file=sys.stderr)
        return 2
    try:
        variants = load_variants(args.specs)
        baseline = pick_baseline(variants, args.baseline)
    except VariantError as error:
        print(f"kernel-studio compare: {error}", file=sys.stderr)
        return 2
    problem = _sweep_problem(variants, args.sweep)
    if problem:
        print(f"kernel-studio compare: {problem}", file=sys.stderr)
        return 2
    options = RunOptions(backend=args.backend, timeout=args.timeout, arch=args.arch,
                         compiler=args.compiler, trusted=None, time=not args.no_timing,
                         budget_ms=args.budget_ms, sweep=args.sweep, seed=args.seed,
                         per_launch=args.per_launch)
    report = compare_variants(variants, baseline, options,
                              progress=None if args.json else _progress)
    if sys.stderr.isatty() and not args.json:
        clear_line(80)
    print(json.dumps(report.to_json(), indent=2) if args.json else describe_compare(report))
    if not args.json and fresh_seeds_line(report):
        print(fresh_seeds_line(report))
    _record(report, [spec_subject(v.spec) for v in variants])
    if args.report is not None:
        try:
            write_report(args.report, compare_html(report))
        except OSError as error:
            print(f"kernel-studio compare: cannot write {args.report}: {error.strerror}",
                  file=sys.stderr)
            return 2
        if not args.json:
            print(f"report: {args.report}")
    return report.exit_code
