"""`kernel-studio`: one command with subcommands, a thin front over the core.

Each subcommand lives in app/commands/<name>.py (an underscore in the module's name is a hyphen
in the command's: spec_check.py is `spec-check`) and provides HELP, add_arguments(parser) and
run(args) -> exit code. Exit codes (DESIGN.md): 0 success or passed, 1 the kernel failed,
2 bad usage or a bad spec, 3 could not decide.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

from app import __version__, offline
from app import commands as commands_package
from app.plaintext import terminal_safe
from app.review.record import record_command

# Modules whose command is named otherwise (`import` is a Python keyword, so no module's name).
RENAMED = {"import_kernelbench": "import"}
# Help lists commands in this order; commands not named here follow alphabetically.
ORDER = ["gui", "doctor", "compile", "verify", "spec-check", "bench", "compare", "ask", "propose",
         "bundle", "review", "audit"]
# Commands whose every run the audit log records here (compare, bundle and review record their
# own, richer entries).
AUDITED = ("verify", "bench")


def _command_modules() -> dict[str, ModuleType]:
    """Every module in app.commands, keyed by its subcommand name (spec_check.py: spec-check)."""
    names = [info.name for info in pkgutil.iter_modules(commands_package.__path__)]
    commands = {RENAMED.get(name, name.replace("_", "-")): name for name in names}
    ordered = sorted(commands, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return {command: importlib.import_module(f"app.commands.{commands[command]}")
            for command in ordered}


def build_parser(modules: dict[str, ModuleType]) -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command module."""
    parser = argparse.ArgumentParser(
        prog="kernel-studio",
        description="Write, verify and time CUDA kernels fully offline.",
    )
    parser.add_argument("--version", action="version", version=f"kernel-studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in modules.items():
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the subcommand, return its exit code. Everything any command
    writes to stdout and stderr is escaped on the way (plaintext.terminal_safe): text from a
    file, a compiler, a reference, a model or the audit log never reaches a terminal raw, and a
    new command cannot forget it. JSON stays JSON (json.dumps escapes every C0 control)."""
    with terminal_safe():
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
    """main's work, inside the escaping streams."""
    offline.enforce()
    parser = build_parser(_command_modules())
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if args.command in AUDITED:
        warning = record_command(args.command, args.spec, code)
        if warning:
            print(warning, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
