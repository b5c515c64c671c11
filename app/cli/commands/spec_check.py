"""`kernel-studio spec-check SPEC.toml`: is this spec strong enough to catch wrong kernels?
Forges the outputs of a panel of wrong kernels and puts them through the verifier's checks;
nothing is compiled and no GPU is needed. Exit 0 strong, 1 weak, 2 bad spec, 3 not checked
(no sandbox here and the spec is not trusted: its reference may not run)."""

from __future__ import annotations

import argparse
import json
import sys

from app.cli import flags
from app.engine.verify.speccheck import Strength, check_spec_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """SPEC and --json."""
    parser.add_argument("spec", help="the kernel's spec file (TOML)")
    flags.add_json(parser, "the result")


def run(args: argparse.Namespace) -> int:
    """Check the spec and print the result; a bad spec is one message on stderr."""
    result = check_spec_file(args.spec)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    elif result.status in (Strength.BAD_SPEC, Strength.UNCHECKED):
        print(f"kernel-studio spec-check: {result.message}", file=sys.stderr)
    else:
        print(result.describe())
    return result.exit_code
