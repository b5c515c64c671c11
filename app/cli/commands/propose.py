"""`kernel-studio propose SPEC.toml`: the local model writes kernels for a spec in K independent
chains of up to R rounds; after each attempt the verifier's answer (compile errors on the
kernel's lines, or the failed verdict) goes back to the model. It stops at the first kernel
that passes. Every attempt is kept in the run folder."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from app.assist.errors import AssistError
from app.assist.refine.attempts import Attempt
from app.assist.refine.loop import Chain, undecided
from app.assist.refine.proposing import Proposal, ProposeSettings, propose_kernels
from app.assist.refine.speed import kept_words
from app.assist.tasks.suite import TaskError
from app.base.paths import proposals_dir
from app.base.plaintext import printable
from app.cli import flags
from app.cli.assistant import (
    StderrProgress,
    add_model_arguments,
    add_speed_rounds,
    batch_model_from_args,
    positive,
    report_error,
    speed_refused,
)
from app.cli.commands.ask import stop_on_interrupt
from app.spec.model import SpecError, load_spec

MAX_CANDIDATES = 50
MAX_ROUNDS = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The spec, what to ask for, the loop, where to write, and the model flags."""
    parser.add_argument("spec", type=Path, help="the kernel's spec file (TOML)")
    parser.add_argument("--description", default="",
                        help="what the kernel must do, in words (default: the spec's "
                             "[task].description, if any)")
    parser.add_argument("-n", "--candidates", type=positive, default=1, metavar="K",
                        help="independent chains (default 1)")
    parser.add_argument("--rounds", type=positive, default=3, metavar="R",
                        help="attempts per chain, each told why the last failed (default 3)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="the run folder (default: proposals/<kernel folder>/<time>/ in the "
                        "data folder; never beside the spec)")
    parser.add_argument("--max-new-tokens", type=positive, default=512, metavar="N",
                        help="longest answer in tokens (default 512)")
    parser.add_argument("--with-source", action="store_true",
                        help="also send the spec's current kernel source to the model")
    parser.add_argument("--no-skills", action="store_true", help="no skills in the prompts")
    parser.add_argument("--no-examples", action="store_true",
                        help="no verified example kernels in the prompts")
    parser.add_argument("--no-verify", action="store_true",
                        help="only write the first round's candidates; run nothing")
    flags.add_backend(parser, "where candidates run when verified")
    parser.add_argument("--batch", type=positive, metavar="N",
                        help="chains answered together (default: all K on a GPU, 1 on the CPU)")
    add_speed_rounds(parser)
    add_model_arguments(parser)
    flags.add_json(parser, "the results")


def exit_code(attempts: list[Attempt], verified: bool) -> int:
    """0 when an attempt passed (or, without verification, every chain wrote a kernel);
    3 when nothing could be decided; 1 otherwise."""
    if any(a.passed for a in attempts):
        return 0
    if not verified:
        return 0 if attempts and all(a.status == "not_verified" for a in attempts) else 1
    if attempts and all(undecided(a.status) for a in attempts):
        return 3
    return 1


def table(attempts: list[Attempt]) -> str:
    """The attempts as a table for people."""
    rows = [f"{'chain':>5} {'round':>5}  {'verdict':<14} {'tokens':>6} {'seconds':>7}  folder"]
    for a in attempts:
        rows.append(f"{a.chain:>5} {a.round:>5}  {a.status:<14} {a.new_tokens:>6} "
                    f"{a.generate_s + a.verify_s:>7.1f}  {a.folder}")
        if a.message:  # it may quote the model's text: no escape sequence reaches the terminal
            rows.append(f"{'':>13}{printable(a.message.splitlines()[0], 300)}")
        if a.redraws:
            rows.append(f"{'':>13}(asked again {a.redraws}x: the answer repeated a kernel this "
                        "chain had tried)")
    return "\n".join(rows)


def _speed_words(made: Proposal) -> str:
    """' (the fastest that passed: 12.0 us, 1.80x the first)' with speed rounds, else ''."""
    said = kept_words(made.passed.time_ms if made.passed else None, made.speedup)
    return f" ({said})" if said else ""


def _announce(chain: Chain, attempt: Attempt) -> None:
    """One line on stderr as each attempt is decided."""
    print(f"chain {attempt.chain} round {attempt.round}: {attempt.status}", file=sys.stderr)


def _run(args: argparse.Namespace, progress: StderrProgress, stop: threading.Event) -> int:
    """Load, run the chains, print."""
    spec = load_spec(args.spec)  # a spec that cannot be read is said before the model loads
    model = batch_model_from_args(args, progress)
    on_gpu = model.load().device == "cuda"
    progress.done()
    out = args.out or proposals_dir(args.spec)
    settings = ProposeSettings(args.candidates, args.rounds, args.max_new_tokens,
                               not args.no_skills, not args.no_examples, not args.no_verify,
                               args.backend, args.batch or (args.candidates if on_gpu else 1),
                               args.speed_rounds)
    with stop_on_interrupt(stop):
        made = propose_kernels(model, spec, args.description, out, settings, stop,
                               None if args.json else _announce)
    if args.json:
        print(json.dumps({"attempts": [a.as_dict() for a in made.attempts],
                          "run_dir": str(out),
                          "passed": made.passed.folder if made.passed else None,
                          "speedup": made.speedup,
                          "kept_as_example": str(made.kept) if made.kept else None}, indent=2))
    else:
        print(table(made.attempts))
        if made.passed is not None:
            print(f"passed: {made.passed.source_path}" + _speed_words(made))
    return exit_code(made.attempts, not args.no_verify)


def run(args: argparse.Namespace) -> int:
    """Propose, refine and verify; print the attempts."""
    if speed_refused("propose", args):
        return 2
    if args.candidates > MAX_CANDIDATES or args.rounds > MAX_ROUNDS:
        print(f"kernel-studio propose: at most {MAX_CANDIDATES} chains and {MAX_ROUNDS} rounds",
              file=sys.stderr)
        return 2
    progress = StderrProgress(quiet=args.json)
    try:
        return _run(args, progress, threading.Event())
    except SpecError as error:
        progress.done()
        print(f"kernel-studio propose: {error}", file=sys.stderr)
        return 2
    except (AssistError, ValueError, TaskError) as error:
        progress.done()
        return report_error("propose", error)
