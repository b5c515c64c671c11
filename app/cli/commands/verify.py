"""`kernel-studio verify SPEC.toml`: run a kernel against its reference on random inputs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from app.base import settings
from app.base.plaintext import clear_line, rewrite_line
from app.cli import flags
from app.engine.verify import sanitizer

# The engine (numpy and the rest) loads when a verification runs, not for --help.
if TYPE_CHECKING:
    from app.engine.verify.results import Verdict
    from app.spec.model import Spec


def parse_case(text: str) -> dict[str, int | float]:
    """`n=1000` or `rows=3,cols=5` as a case."""
    case: dict[str, int | float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip().isidentifier():
            raise argparse.ArgumentTypeError(f"{text!r}: write a case as name=value[,name=value]")
        try:
            number: int | float = int(value.replace("_", ""))
        except ValueError:
            number = flags.finite(value)
        if name.strip() in case:
            # A second value would silently win; the user meant one of them.
            raise argparse.ArgumentTypeError(f"{text!r}: {name.strip()!r} is given twice; "
                                             "give each variable once")
        case[name.strip()] = number
    return case


def case_problem(spec: Spec | None, cases: list[dict[str, int | float]] | None) -> str | None:
    """What is wrong with the cases to verify, named by where they come from, or None:
    --case values (variables the spec does not use or lacks, sizes it cannot resolve), else
    the spec's own cases (sizes it cannot resolve). A spec that cannot be read (None) is left
    to the verification's own spec_error."""
    from app.spec.cases import CaseError, case_text, check_case, resolve

    if spec is None:
        return None
    for case in cases or []:
        problem = check_case(spec, case, f"--case {case_text(case)}")
        if problem:
            return problem
    for index, case in enumerate([] if cases else spec.cases):
        try:
            resolve(spec, case)
        except CaseError as error:
            return f"[verify].cases[{index}] {case_text(case)}: {error}"
    return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verify flags."""
    parser.add_argument("spec", help="the kernel's spec file (TOML)")
    flags.add_backend(parser)
    parser.add_argument("--sanitize", choices=sanitizer.TOOLS,
                        help="also run every case under compute-sanitizer with this tool")
    parser.add_argument("--case", action="append", type=parse_case, metavar="K=V[,K=V]",
                        help="verify this case instead of the spec's (repeatable)")
    parser.add_argument("--seeds", type=int, help="random inputs per case (default: the spec's)")
    flags.add_random_seeds(parser, "also run N seeds drawn now, printed so a failure can be "
                           "replayed: the spec's seeds give inputs anyone can compute, so a "
                           "kernel could recognise them; 0 for runs that repeat exactly")
    parser.add_argument("--seed", type=int, action="append", metavar="S",
                        help="run exactly this seed instead of the spec's (repeatable; replays a "
                             "--random-seeds failure)")
    flags.add_timeout(parser)
    parser.add_argument("--arch", type=flags.arch,
                        help="compile for this arch when no GPU decides it (sm_90)")
    add_compiler_argument(parser)
    flags.add_json(parser, "the verdict")


def add_compiler_argument(parser: argparse.ArgumentParser) -> None:
    """--compiler, shared by verify and bench."""
    flags.add_compiler(parser, "compile with NVRTC or nvcc (default: the spec's [kernel] "
                       "compiler, else nvrtc); nvcc also takes files with host code")


def _seeds_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the seed flags, if anything; `--random-seeds` defaults to 1, or to
    none with --seed (a replay)."""
    from app.engine.verify.seeds import DEFAULT_RANDOM_SEEDS

    if args.random_seeds is None:
        args.random_seeds = 0 if args.seed else DEFAULT_RANDOM_SEEDS
    if not 0 <= args.random_seeds <= settings.RANDOM_SEEDS_MAX:
        return f"--random-seeds must be from 0 to {settings.RANDOM_SEEDS_MAX}"
    if args.seed and any(not 0 <= s < 2**32 for s in args.seed):
        return "--seed takes whole numbers from 0 to 4294967295"
    if args.seed and (args.random_seeds or args.seeds is not None):
        return "--seed names the seeds to run; leave out --seeds and --random-seeds with it"
    return None


def _readable_spec(path: str) -> Spec | None:
    """The spec, read once for the checks made before verifying; None when it cannot be read
    (the verification then reports it as its spec_error)."""
    from app.spec.model import SpecError, load_spec

    try:
        return load_spec(path)
    except SpecError:
        return None


def _progress(text: str, fraction: float) -> None:
    """Progress on stderr, so that stdout stays the verdict."""
    if sys.stderr.isatty():
        rewrite_line(f"[{fraction:4.0%}] {text:<50}", 60)


def run(args: argparse.Namespace) -> int:
    """Verify and print the verdict; the exit code follows docs/spec.md."""
    from app.engine.verify.results import Status, Verdict
    from app.engine.verify.runs import VerifyOptions
    from app.engine.verify.verifier import verify_file

    if args.seeds is not None and not 1 <= args.seeds <= 1000:
        print("kernel-studio verify: --seeds must be from 1 to 1000", file=sys.stderr)
        return 2
    seeds_problem = _seeds_problem(args)
    if seeds_problem:
        print(f"kernel-studio verify: {seeds_problem}", file=sys.stderr)
        return 2
    unsupported = flags.unsupported_arch(args.arch) if args.arch else None
    if unsupported:
        print(f"kernel-studio verify: --arch: {unsupported}", file=sys.stderr)
        return 2
    spec = _readable_spec(args.spec)
    problem = case_problem(spec, args.case)
    if problem:
        return _print(Verdict(Status.SPEC_ERROR, problem, spec_path=args.spec), args.json)
    options = VerifyOptions(backend=args.backend, seeds=args.seeds, cases=args.case,
                            timeout=args.timeout, sanitize=args.sanitize, arch=args.arch,
                            only_seeds=tuple(args.seed) if args.seed else None,
                            random_seeds=args.random_seeds, compiler=args.compiler)
    # Drawn here rather than in the engine so they are printed before anything runs (none for
    # a spec that cannot be read: nothing will run).
    if spec is not None:
        options = options.with_fresh_seeds(spec.seeds)
    extra = options.fresh_seeds
    if extra:
        replay = " ".join(f"--seed {s}" for s in extra)
        print(f"random seeds: {', '.join(map(str, extra))} (replay one with {replay})",
              file=sys.stderr)
    verdict = verify_file(args.spec, options, progress=None if args.json else _progress)
    if sys.stderr.isatty() and not args.json:
        clear_line(60)
    print(json.dumps(verdict.to_json(), indent=2) if args.json else verdict.describe())
    if verdict.passed and not args.json and not args.case and spec is not None:
        _warn_if_weak(spec)
    return verdict.exit_code


def _print(verdict: Verdict, as_json: bool) -> int:
    """Print a verdict found before anything ran, the same way as any other; its exit code."""
    print(json.dumps(verdict.to_json(), indent=2) if as_json else verdict.describe())
    return verdict.exit_code


def _warn_if_weak(spec: Spec) -> None:
    """A pass proves only what the spec can catch: say so when spec-check finds it weak."""
    from app.engine.verify.speccheck import brief_warnings

    for line in brief_warnings(spec):
        print(f"  spec warning: {line}")
