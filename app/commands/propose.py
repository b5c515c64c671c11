"""`kernel-studio propose SPEC.toml`: the local model writes K candidate kernels for a spec;
each is written beside a copy of the spec and verified like any other kernel."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from app.assist.candidates import Candidate, ProposeRun, propose, propose_prompt
from app.assist.errors import AssistError
from app.assist.frontend import (
    StderrProgress,
    add_model_arguments,
    positive,
    report_error,
    session_from_args,
)
from app.commands.ask import stop_on_interrupt
from app.spec import SpecError, load_spec

HELP = ("the local model proposes K kernels for a spec; each is verified (exit 0 when one "
        "passed, 1 none passed, 3 none could be verified)")
MAX_CANDIDATES = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The spec, what to ask for, where to write, and the model flags."""
    parser.add_argument("spec", type=Path, help="the kernel's spec file (TOML)")
    parser.add_argument("--description", default="",
                        help="what the kernel must do, in words (the spec says how it is run)")
    parser.add_argument("-n", "--candidates", type=positive, default=1, metavar="K",
                        help="how many candidates to write (default 1)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where candidates go (default: proposals/ beside the spec)")
    parser.add_argument("--max-new-tokens", type=positive, default=512, metavar="N",
                        help="longest answer in tokens (default 512)")
    parser.add_argument("--with-source", action="store_true",
                        help="also send the spec's current kernel source to the model")
    parser.add_argument("--no-verify", action="store_true",
                        help="only write the candidates; run nothing")
    parser.add_argument("--backend", choices=["auto", "pycuda", "cpu"], default="auto",
                        help="where candidates run when verified (default auto)")
    add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def exit_code(candidates: list[Candidate], verified: bool) -> int:
    """0 when a candidate passed (or, without verification, all were written with code);
    3 when nothing could be decided; 1 otherwise."""
    if any(c.passed for c in candidates):
        return 0
    if not verified:
        return 0 if candidates and all(c.status == "not_verified" for c in candidates) else 1
    if candidates and all(c.status in ("unverified", "cancelled", "stopped") for c in candidates):
        return 3
    return 1


def table(candidates: list[Candidate]) -> str:
    """The verdicts as a table for people."""
    rows = [f"{'#':>3}  {'verdict':<14}  {'tokens':>6}  {'seconds':>7}  folder / message"]
    for c in candidates:
        rows.append(f"{c.index:>3}  {c.status:<14}  {c.answer.new_tokens:>6}  "
                    f"{c.answer.seconds:>7.1f}  {c.folder}")
        rows.append(f"{'':>3}  {c.message.splitlines()[0] if c.message else ''}")
    return "\n".join(rows)


def _announce(candidate: Candidate) -> None:
    """One line on stderr as each candidate is done."""
    print(f"candidate {candidate.index}: {candidate.status}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Generate, write and verify the candidates; print the table of verdicts."""
    if args.candidates > MAX_CANDIDATES:
        print(f"kernel-studio propose: at most {MAX_CANDIDATES} candidates", file=sys.stderr)
        return 2
    progress = StderrProgress(quiet=args.json)
    stop = threading.Event()
    try:
        spec = load_spec(args.spec)
        session = session_from_args(args, progress)
        settings = ProposeRun(session, spec, args.out or args.spec.parent / "proposals",
                              args.candidates, args.max_new_tokens, not args.no_verify,
                              args.backend, None, None if args.json else _announce, stop,
                              args.with_source)
        prompt = propose_prompt(settings, args.description)
        for line in prompt.budget.warnings():
            print(f"warning: {line}", file=sys.stderr)
        with stop_on_interrupt(stop):
            candidates = propose(settings, prompt)
    except SpecError as error:
        print(f"kernel-studio propose: {error}", file=sys.stderr)
        return 2
    except (AssistError, ValueError) as error:
        progress.done()
        return report_error("propose", error)
    progress.done()
    if args.json:
        print(json.dumps({"candidates": [c.as_dict() for c in candidates],
                          "budget": prompt.budget.as_dict(), "skills": list(prompt.skills)},
                         indent=2))
    else:
        print(table(candidates))
    return exit_code(candidates, not args.no_verify)
