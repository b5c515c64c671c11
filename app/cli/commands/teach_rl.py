"""`kernel-studio teach rl`: GRPO on a taught adapter with the verifier's reward
(app.assist.teach.rl). Its options, progress, Ctrl+C and exit codes are `teach train`'s: exit 0
written, 2 bad input, 130 cancelled (a checkpoint is kept; --resume continues it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.assist.errors import AssistError
from app.assist.model import quant
from app.assist.model.adapters import DEFAULT_NAME
from app.assist.model.convert import resolve_model
from app.assist.model.session import cpu_threads
from app.assist.tasks.suite import TaskError, load_suite
from app.assist.teach.guard import Guard
from app.assist.teach.recipe import reinforce_adapter
from app.assist.teach.rl import RLSettings
from app.base.paths import data_dir
from app.cli import flags
from app.cli.assistant import broken_suite, positive


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `teach rl`."""
    d = RLSettings()
    add = parser.add_argument
    add("--data", type=Path, required=True,
        help="a train.jsonl of teach data: its prompts (guarded again) and references")
    add("--out", required=True, metavar="NAME", help="the new adapter's name")
    add("--from", dest="start", default=DEFAULT_NAME, metavar="ADAPTER",
        help=f"the taught adapter to start from and stay near (default {DEFAULT_NAME})")
    add("--steps", type=positive, default=d.steps, help=f"steps (default {d.steps})")
    add("--prompts", type=positive, default=d.prompts,
        help=f"prompts per step (default {d.prompts})")
    add("--group", type=positive, default=d.group,
        help=f"answers sampled per prompt, scored against each other (default {d.group})")
    add("--rounds", type=positive, default=d.rounds,
        help=f"rounds per prompt; later ones carry the verifier's feedback (default {d.rounds})")
    add("--seed", type=int, default=0, help="the seed (default 0)")
    add("--temperature", type=float, default=d.temperature,
        help=f"sampling temperature (default {d.temperature})")
    add("--max-new-tokens", type=positive, default=d.max_new_tokens,
        help=f"an answer's tokens at most (default {d.max_new_tokens})")
    add("--max-tokens", type=positive, default=d.max_tokens,
        help=f"prompt and answer at most; bounds the memory (default {d.max_tokens})")
    add("--learning-rate", type=float, default=d.learning_rate,
        help=f"AdamW's learning rate (default {d.learning_rate})")
    add("--clip", type=float, default=d.clip, help=f"the ratio clip (default {d.clip})")
    add("--inner", type=positive, default=d.inner,
        help=f"gradient passes over each step's answers (default {d.inner})")
    add("--beta", type=float, default=d.beta,
        help=f"the KL penalty to the starting adapter (default {d.beta}; 0 for none)")
    add("--checkpoint-every", type=positive, default=d.checkpoint_every,
        help=f"steps between checkpoints (default {d.checkpoint_every})")
    add("--resume", action="store_true", help="continue the cancelled run from its checkpoint")
    add("--model", metavar="PATH", help="a model folder or name (default: the default model)")
    add("--threads", type=positive, default=cpu_threads(),
        help="CPU threads (default: every core but one)")
    add("--device", choices=("auto", "cpu", "cuda"), default="auto",
        help="where to train (default: the GPU when there is one)")
    add("--quantization", choices=("auto", "none", "nf4"), default="auto",
        help="the base model's weights on a GPU (default nf4); the CPU trains in float32")
    add("--runs", type=Path, default=None,
        help="folder for every answer and its verdict (default: the data folder's "
             "teach/rl/NAME)")
    flags.add_backend(parser, "where answers are verified (auto: the best there is)")


def _settings(args: argparse.Namespace) -> RLSettings:
    """The run's settings; AssistError for a GPU asked for where there is none."""
    device = quant.resolve_device(args.device)
    quantization = "none" if device == "cpu" else (
        "nf4" if args.quantization == "auto" else args.quantization)
    return RLSettings(steps=args.steps, seed=args.seed, prompts=args.prompts, group=args.group,
                      rounds=args.rounds, temperature=args.temperature,
                      max_new_tokens=args.max_new_tokens, max_tokens=args.max_tokens,
                      learning_rate=args.learning_rate, clip=args.clip, inner=args.inner,
                      beta=args.beta, checkpoint_every=args.checkpoint_every, device=device,
                      quantization=quantization)


def _check(settings: RLSettings) -> str:
    """What is wrong with the settings ('' when nothing)."""
    if settings.group < 2:
        return "--group must be at least 2: GRPO scores answers against each other"
    if settings.max_new_tokens >= settings.max_tokens:
        return "--max-new-tokens must be below --max-tokens (the prompt needs room)"
    if settings.temperature <= 0 or not 0 <= settings.clip < 1 or settings.beta < 0:
        return "--temperature must be above 0, --clip in [0, 1), --beta at least 0"
    return ""


def run(args: argparse.Namespace) -> int:
    """Run `teach rl`."""
    try:
        settings = _settings(args)
        wrong = _check(settings)
        if wrong:
            print(f"kernel-studio teach rl: {wrong}", file=sys.stderr)
            return 2
        guard = Guard.of(load_suite())
        runs = args.runs or data_dir() / "teach" / "rl" / args.out
        folder = reinforce_adapter(resolve_model(args.model), args.data, args.out, args.start,
                                   guard, settings, _say, runs, args.resume, args.threads,
                                   args.backend)
    except TaskError as error:
        return broken_suite("teach rl", error)
    except AssistError as error:
        print(f"kernel-studio teach rl: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cancelled: a checkpoint is kept; continue with: kernel-studio teach rl --data "
              f"{args.data} --out {args.out} --resume (same settings)", file=sys.stderr)
        return 130
    print(f"adapter {args.out} written to {folder}; keep it only if it helps: eval --split "
          f"heldout --json with --adapter {args.start} and with --adapter {args.out}, then "
          "kernel-studio teach judge")
    return 0


def _say(line: str) -> None:
    """A progress line, on stderr."""
    print(line, file=sys.stderr)
