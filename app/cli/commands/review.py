"""`kernel-studio review decide FILE.ksb --accept|--reject --note TEXT` (or `review approve` /
`review reject`): a reviewer's decision on a bundle, recorded in the audit log with the
bundle's manifest digest, and signed when a key exists (`kernel-studio audit keygen`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.cli import flags
from app.review.decide import DecisionError, record_decision


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """decide (with --accept or --reject), approve and reject."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    decide = sub.add_parser("decide", help="accept or reject a bundle")
    choice = decide.add_mutually_exclusive_group(required=True)
    choice.add_argument("--accept", action="store_true")
    choice.add_argument("--reject", action="store_true")
    approve = sub.add_parser("approve", help="the same as decide --accept")
    reject = sub.add_parser("reject", help="the same as decide --reject")
    for each in (decide, approve, reject):
        each.add_argument("bundle", type=Path, metavar="FILE.ksb")
        each.add_argument("--note", required=True, help="why (kept in the audit log)")
        flags.add_json(each)


def _accepted(args: argparse.Namespace) -> bool:
    """Whether the decision is to accept."""
    return bool(args.action == "approve" or (args.action == "decide" and args.accept))


def run(args: argparse.Namespace) -> int:
    """Check the bundle's manifest, then record the decision."""
    try:
        bundle, entry = record_decision(args.bundle, _accepted(args), args.note)
    except DecisionError as error:
        print(f"kernel-studio review: {error}", file=sys.stderr)
        return 2
    signed = f"signed by key {entry['key_id']}" if "signature" in entry else "not signed"
    if args.json:
        print(json.dumps(entry, indent=2))
    else:
        decision = "accepted" if _accepted(args) else "rejected"
        print(f"{decision} {args.bundle} (manifest {bundle.digest[:16]}...): audit entry "
              f"{entry['seq']}, {signed}")
    return 0
