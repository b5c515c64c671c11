"""`kernel-studio import kernelbench FILE.py [--out DIR]`: a KernelBench problem (a torch Model
with forward, get_inputs and get_init_inputs) as a task for the assistant. The file is read as
text and never run here; its Model runs only inside the task's reference, when verify runs it.
Level-1 problems with one output map; anything else is refused with the reason (exit 2)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import import_problem
from app.cli import flags

FORMATS = ("kernelbench",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The format, the problem file, where the task goes."""
    parser.add_argument("format", choices=FORMATS, help="the problem's format")
    parser.add_argument("file", type=Path, metavar="FILE.py", help="the problem file")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where the task folder is written (default: the current folder)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite an existing task folder (and the edits in it)")
    flags.add_json(parser, "the result")


def run(args: argparse.Namespace) -> int:
    """Import; 0 with the task's spec path, 2 with the reason it does not map."""
    try:
        spec = import_problem(args.file, args.out or Path.cwd(), args.force)
    except Refused as error:
        if args.json:
            print(json.dumps({"imported": None, "refused": str(error)}))
        print(f"kernel-studio import: {args.file}: not imported: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"imported": str(spec), "refused": None}))
    else:
        print(f"imported {args.file.name} as the task {spec}")
        print(f"try it: kernel-studio eval {spec} -k 1   or   kernel-studio propose {spec}")
    return 0
