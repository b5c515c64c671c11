"""The `--against-pytorch` part of `kernel-studio bench` (app.cli.commands.bench adds its flags
and hands over): a KernelBench task's kernel against the problem's own PyTorch forward, eager
and torch.compile, with the speedup over each and its interval."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from app.engine.bench.against_pytorch import compare_file
from app.engine.bench.runner import BenchOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--against-pytorch and --no-compile."""
    parser.add_argument("--against-pytorch", action="store_true",
                        help="for a task imported from KernelBench: also time the problem's "
                             "PyTorch forward (eager and torch.compile) at the same case on "
                             "the same inputs, and report the kernel's speedup over each with "
                             "its 95%% interval (needs a GPU)")
    parser.add_argument("--no-compile", action="store_true",
                        help="with --against-pytorch: time eager PyTorch only")


def usage_error(args: argparse.Namespace) -> str | None:
    """Flags that do not go together, or None."""
    if args.no_compile and not args.against_pytorch:
        return "--no-compile goes with --against-pytorch"
    if args.against_pytorch and (args.vs or args.sweep):
        return "--against-pytorch times one kernel at one case: leave out --vs and --sweep"
    return None


def run(args: argparse.Namespace, options: BenchOptions,
        progress: Callable[[str, float], None] | None) -> int:
    """Compare, print (text or JSON) and give the exit code."""
    comparison = compare_file(args.spec, options, not args.no_compile, progress)
    print(json.dumps(comparison.to_json(), indent=2) if args.json else comparison.describe())
    return comparison.exit_code
