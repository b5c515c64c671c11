"""`kernel-studio`: one command with subcommands, a thin front over the core.

Each subcommand lives in app/cli/commands/<module>.py, named with its help in
app.cli.commands.COMMANDS,
and provides add_arguments(parser) and run(args) -> exit code. Only the command being run is
imported: `kernel-studio --help` imports no command module and `verify` never loads the
assistant. Exit codes (docs/architecture.md): 0 success or passed, 1 the kernel failed,
2 bad usage or a bad spec, 3 could not decide.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from app import __version__
from app.base import settings
from app.base.plaintext import terminal_safe
from app.cli.commands import COMMANDS, find
from app.isolation import offline

# Commands whose every run the audit log records here (compare, bundle and review record their
# own, richer entries).
AUDITED = ("verify", "bench")


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line: the first word that is not an option (the
    top level has only --help and --version, which take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def command_module(name: str) -> ModuleType | None:
    """The module of command `name`, imported now; None for an unknown name."""
    command = find(name)
    return importlib.import_module(f"app.cli.commands.{command.module}") if command else None


def build_parser(loaded: dict[str, ModuleType] | None = None) -> argparse.ArgumentParser:
    """The top-level parser: every command with its help, and the arguments of those in
    `loaded` (the command being run; the others need none to be listed)."""
    loaded = loaded or {}
    parser = argparse.ArgumentParser(
        prog="kernel-studio",
        description="Write, verify and time CUDA kernels fully offline.",
    )
    parser.add_argument("--version", action="version", version=f"kernel-studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        subparser = sub.add_parser(command.name, help=command.help, description=command.help)
        module = loaded.get(command.name)
        if module is not None:
            module.add_arguments(subparser)
            subparser.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the subcommand, return its exit code. Everything any command
    writes to stdout and stderr is escaped on the way (plaintext.terminal_safe): text from a
    file, a compiler, a reference, a model or the audit log never reaches a terminal raw, and a
    new command cannot forget it. JSON stays JSON (json.dumps escapes every C0 control)."""
    with terminal_safe():
        try:
            return _run(argv)
        except Exception:  # a bug: its traceback may quote a file's text, so escape it too
            traceback.print_exc()
            return 1  # what Python itself exits with for an uncaught exception


def _run(argv: Sequence[str] | None) -> int:
    """main's work, inside the escaping streams."""
    offline.enforce()
    words = sys.argv[1:] if argv is None else list(argv)
    name = chosen_command(words)
    module = command_module(name) if name else None
    parser = build_parser({name: module} if name and module else None)
    args = parser.parse_args(words)
    problems = settings.environment_problems() if args.command != "doctor" else []
    if problems:  # said once here, not as a traceback from whichever part reads it first
        print("\n".join(f"kernel-studio: {problem}" for problem in problems), file=sys.stderr)
        print("kernel-studio: `kernel-studio doctor` lists every setting and where its value "
              "comes from", file=sys.stderr)
        return 2
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if args.command in AUDITED:
        from app.review.record import record_command  # only commands that record need it
        warning = record_command(args.command, args.spec, code)
        if warning:
            print(warning, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
