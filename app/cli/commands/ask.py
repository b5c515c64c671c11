"""`kernel-studio ask "question"`: ask the local model, with the answer streamed to stdout."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from app.assist.errors import AssistError
from app.assist.model.session import GenerationOptions
from app.assist.prompting.prompts import PromptContext, build_prompt
from app.cli import flags
from app.cli.assistant import (
    StderrProgress,
    add_model_arguments,
    positive,
    report_error,
    session_from_args,
    unknown_skill,
)

TEMPERATURE = flags.within(0.0, 100.0, "the temperature", include_low=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The question, the context to send with it, and the model flags."""
    parser.add_argument("question", help="what to ask")
    parser.add_argument("--file", metavar="KERNEL.cu", type=Path,
                        help="send this kernel source with the question")
    parser.add_argument("--skill", action="append", metavar="NAME",
                        help="put this skill into the prompt (repeatable; default: chosen by "
                             "relevance)")
    parser.add_argument("--max-new-tokens", type=positive, default=256, metavar="N",
                        help="longest answer in tokens (default 256)")
    parser.add_argument("--temperature", type=TEMPERATURE, default=0.0,
                        help="sampling temperature; 0 (the default) answers greedily")
    parser.add_argument("--seed", type=int, help="random seed for sampling")
    add_model_arguments(parser)
    flags.add_json(parser, "one object at the end instead of streaming,")


@contextlib.contextmanager
def stop_on_interrupt(stop: threading.Event) -> Iterator[None]:
    """While active, Ctrl-C sets `stop` (the answer ends cleanly) instead of raising."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _context(args: argparse.Namespace) -> PromptContext:
    """The question, with the kernel source when --file names one."""
    source = ""
    if args.file:
        try:
            source = args.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise AssistError(f"cannot read {args.file}: {error}") from None
    return PromptContext(question=args.question, source=source)


def _write(text: str) -> None:
    """Stream one piece of the answer."""
    sys.stdout.write(text)
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    """Build the prompt, say what was cut, stream the answer; 130 when stopped by Ctrl-C."""
    progress = StderrProgress(quiet=args.json)
    stop = threading.Event()
    try:
        session = session_from_args(args, progress)
        prompt = build_prompt("ask", _context(args), session, args.max_new_tokens,
                              skill_names=args.skill)
        for line in prompt.budget.warnings():
            print(f"warning: {line}", file=sys.stderr)
        with stop_on_interrupt(stop):
            session.load()
            progress.done()
            answer = session.generate(prompt.messages, args.max_new_tokens,
                                      None if args.json else _write, stop,
                                      GenerationOptions(temperature=args.temperature,
                                                        seed=args.seed))
    except KeyError as error:
        return report_error("ask", unknown_skill(str(error.args[0])))
    except (AssistError, ValueError) as error:
        progress.done()
        return report_error("ask", error)
    if args.json:
        print(json.dumps({"answer": answer.as_dict(), "budget": prompt.budget.as_dict(),
                          "skills": list(prompt.skills), "model": str(session.folder)},
                         indent=2))
    else:
        print()
        for line in answer.warnings:
            print(f"warning: {line}", file=sys.stderr)
        if answer.stopped:
            print("(stopped)", file=sys.stderr)
    return 130 if answer.stopped else 0
