"""What the assistant's commands share: model flags, building a session from them, progress on
stderr and mapping errors to exit codes (docs/spec.md: 2 bad input, 3 could not do it)."""

from __future__ import annotations

import argparse
import sys

from app.assist.errors import AssistError, GenerationFailed
from app.assist.model.adapters import AUTO, resolve_adapter
from app.assist.model.batch import BatchModel
from app.assist.model.convert import resolve_model
from app.assist.model.quant import DEVICES, QUANTIZATIONS
from app.assist.model.session import ModelSession
from app.assist.prompting.skills import load_skills, skill_folders
from app.base.plaintext import clear_line, rewrite_line
from app.cli import flags


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """--model, --device, --quantization, --context-tokens, --threads."""
    parser.add_argument("--model", metavar="PATH",
                        help="a model folder, a GGUF file (converted once), or a model name "
                             "(default: the prepared SmolLM2-135M-Instruct)")
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where the model runs (default: the GPU when there is one)")
    parser.add_argument("--quantization", choices=QUANTIZATIONS, default="auto",
                        help="bitsandbytes nf4 or int8, or none (default: nf4 on a GPU, the "
                             "measured fastest on the CPU)")
    parser.add_argument("--context-tokens", type=positive, metavar="N",
                        help="use at most N tokens of context (default: the model's)")
    parser.add_argument("--threads", type=positive, metavar="N",
                        help="CPU threads for the model (default: torch's choice)")
    parser.add_argument("--adapter", metavar="NAME", default=AUTO,
                        help="the model's LoRA adapter to load over it: a name (kernel-studio "
                             "teach adapters lists them), 'none' for the base model alone, or "
                             "'auto' (the default): the adapter named 'default' when the model "
                             "has one")


# Speed rounds after a pass: as many as the window's Speed box offers, and then some.
SPEED_ROUNDS = flags.whole(0, 10, "--speed-rounds")


def add_speed_rounds(parser: argparse.ArgumentParser) -> None:
    """--speed-rounds N: keep the fastest that passes (a GPU times each kernel that passes)."""
    parser.add_argument("--speed-rounds", type=SPEED_ROUNDS, default=0, metavar="N",
                        help="after a chain's first pass, N more rounds ask for a faster "
                             "kernel; the fastest that passes is kept (needs a GPU to time "
                             "on; default 0)")


def speed_refused(command: str, args: argparse.Namespace) -> bool:
    """Say why --speed-rounds cannot run here (True), before any model loads."""
    if not args.speed_rounds:
        return False
    from app.assist.refine.speed import speed_refusal

    reason = speed_refusal(args.backend)
    if reason:
        print(f"kernel-studio {command}: {reason}; leave out --speed-rounds, or run on a "
              "machine with an NVIDIA GPU", file=sys.stderr)
    return bool(reason)


def positive(text: str) -> int:
    """An argparse type: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


class StderrProgress:
    """Load progress on stderr, on one rewritten line when stderr is a terminal."""

    def __init__(self, quiet: bool = False) -> None:
        """Say nothing when quiet (--json) or when stderr is not a terminal."""
        self.enabled = not quiet and sys.stderr.isatty()
        self.last = ""

    def __call__(self, message: str, fraction: float) -> None:
        """Show '[ 42%] message'."""
        line = f"[{fraction:4.0%}] {message}"[:78]
        if self.enabled and line != self.last:
            self.last = line
            rewrite_line(line, 78)

    def done(self) -> None:
        """Clear the progress line."""
        if self.enabled and self.last:
            clear_line(78)


def session_from_args(args: argparse.Namespace, progress: StderrProgress) -> ModelSession:
    """A (not yet loaded) session for the model the flags name."""
    folder = resolve_model(args.model, progress)
    return ModelSession(folder, device=args.device, quantization=args.quantization,
                        context_tokens=args.context_tokens, progress=progress,
                        threads=args.threads, adapter=resolve_adapter(folder, args.adapter))


def batch_model_from_args(args: argparse.Namespace, progress: StderrProgress) -> BatchModel:
    """session_from_args, for commands that answer many requests at once (propose, eval)."""
    folder = resolve_model(args.model, progress)
    return BatchModel(folder, device=args.device, quantization=args.quantization,
                      context_tokens=args.context_tokens, progress=progress,
                      threads=args.threads, adapter=resolve_adapter(folder, args.adapter))


def report_error(command: str, error: Exception) -> int:
    """Print an assistant error for people; return its exit code."""
    print(f"kernel-studio {command}: {error}", file=sys.stderr)
    if isinstance(error, GenerationFailed):
        return 3
    return 2 if isinstance(error, AssistError | ValueError | KeyError) else 3


def broken_suite(command: str, error: Exception) -> int:
    """Say that the task suite could not be read, so its held-out tasks cannot be kept out of
    what is taught; the exit code (2)."""
    print(f"kernel-studio {command}: the task suite is broken, so held-out tasks cannot be "
          f"kept out: {error}", file=sys.stderr)
    return 2


def unknown_skill(names: str) -> AssistError:
    """The error for --skill names that do not exist, listing those that do."""
    skills, _problems = load_skills()
    where = ", ".join(str(f) for f in skill_folders())
    return AssistError(f"unknown skill: {names}",
                       f"available: {', '.join(sorted(skills)) or 'none'} (from {where})")
