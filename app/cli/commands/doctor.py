"""`kernel-studio doctor`: report what this machine offers."""

from __future__ import annotations

import argparse
import json

from app.base import settings
from app.cli import doctor, flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--json for machines, --settings for the settings alone."""
    flags.add_json(parser, "the report")
    parser.add_argument("--settings", action="store_true",
                        help="list only the settings: each one's value here and where it "
                             "comes from (its default or its environment variable)")


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 0 when the app can run, 1 otherwise. With --settings, the
    settings alone; exit 1 when an environment variable holds a value its setting cannot
    take."""
    if args.settings:
        return _settings(args.json)
    checks = doctor.run_checks()
    if args.json:
        print(json.dumps(doctor.as_json(checks), indent=2))
    else:
        print(doctor.as_text(checks))
    return 0 if doctor.can_run(checks) else 1


def _settings(as_json: bool) -> int:
    """Print every setting's value and origin; 1 when one of them is bad."""
    if as_json:
        print(json.dumps({"settings": doctor.settings_json()}, indent=2))
    else:
        print("\n".join(doctor.settings_text()))
    return 1 if settings.environment_problems() else 0
