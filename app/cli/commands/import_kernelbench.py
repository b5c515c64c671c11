"""`kernel-studio import kernelbench FILE.py... [--out DIR]`: KernelBench problems (a torch Model
with forward, get_inputs and get_init_inputs), any level, as tasks for the assistant. A file is
read as text here; its Model runs only in the sandbox: on torch's meta device at import, to
learn its shapes and weights, and in the task's reference when verify runs it. A problem that
does not map is refused with the reason in one line (exit 2 when any is)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import import_problems
from app.cli import flags

FORMATS = ("kernelbench",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The format, the problem file, where the task goes."""
    parser.add_argument("format", choices=FORMATS, help="the problem's format")
    parser.add_argument("files", type=Path, nargs="+", metavar="FILE.py",
                        help="the problem files (several import faster than one at a time)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where the task folder is written (default: the current folder)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite an existing task folder (and the edits in it)")
    flags.add_json(parser, "the result")


def run(args: argparse.Namespace) -> int:
    """Import; 0 when every file maps (with each task's spec path), 2 when any is refused."""
    found = import_problems(args.files, args.out or Path.cwd(), args.force)
    for path, result in zip(args.files, found, strict=True):
        if args.json:
            print(json.dumps({"file": str(path),
                              "imported": None if isinstance(result, Refused) else str(result),
                              "refused": str(result) if isinstance(result, Refused) else None}))
        elif isinstance(result, Refused):
            print(f"kernel-studio import: {path}: not imported: {result}", file=sys.stderr)
        else:
            print(f"imported {path.name} as the task {result}")
    imported = [r for r in found if not isinstance(r, Refused)]
    if imported and not args.json:
        print(f"try it: kernel-studio eval {imported[0]} -k 1   or   kernel-studio propose "
              f"{imported[0]}")
    return 2 if len(imported) < len(found) else 0
