"""`kernel-studio doctor`: report what this machine offers."""

from __future__ import annotations

import argparse
import json

from app.cli import doctor, flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--json for machines."""
    flags.add_json(parser, "the report")


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 0 when the app can run, 1 otherwise."""
    checks = doctor.run_checks()
    if args.json:
        print(json.dumps(doctor.as_json(checks), indent=2))
    else:
        print(doctor.as_text(checks))
    return 0 if doctor.can_run(checks) else 1
