"""`kernel-studio audit`: the audit trail. `verify [LOG] [--key PUB]...` checks the chain, the
head and the signatures and names the first bad entry (exit 1), an entry signed by a key not
checked against included; `keygen` makes the Ed25519 key that signs entries; `export FILE`
copies the checked log for an archive; `show` lists entries and what each signature is worth."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app.base.plaintext import printable
from app.cli import flags
from app.review import audit
from app.review.audit_keys import entry_signature, key_ring, shown_id


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """verify, keygen, export and show."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("verify", help="check the log (exit 0 intact, 1 tampered, 2 not a "
                                          "log)")
    check.add_argument("log", nargs="?", type=Path, help="the log (default: this user's)")
    check.add_argument("--key", type=Path, metavar="PUB", action="append",
                       help="check signatures against this public key; give it again for more "
                            "(default: this station's own keys). An entry signed by any other "
                            "key fails the check")
    check.add_argument("--require-signed", action="store_true",
                       help="every entry must carry a good signature by the key")
    flags.add_json(check)
    keygen = sub.add_parser("keygen", help="make the Ed25519 key that signs entries")
    keygen.add_argument("--force", action="store_true", help="replace an existing key")
    export = sub.add_parser("export", help="copy the checked log (and its head) for an archive")
    export.add_argument("destination", type=Path, metavar="FILE.jsonl")
    export.add_argument("--log", type=Path, help="the log (default: this user's)")
    show = sub.add_parser("show", help="list the log's entries")
    show.add_argument("log", nargs="?", type=Path)
    show.add_argument("--last", type=int, default=20, metavar="N", help="the last N (20)")
    show.add_argument("--key", type=Path, metavar="PUB", action="append",
                      help="judge signatures by this public key (default: this station's own)")


def _log(given: Path | None) -> Path:
    """The log to work on (AuditError when the log is turned off and none is named)."""
    found = given or audit.log_path()
    if found is None:
        raise audit.AuditError("the audit log is turned off (KERNEL_STUDIO_AUDIT_LOG=off): "
                               "name a log file")
    return found


def _verify(args: argparse.Namespace) -> int:
    """Check a log; exit 1 at the first bad entry."""
    ring = key_ring(args.key or [])
    check = audit.check_log(_log(args.log), ring)
    if check.intact and args.require_signed and ring and check.signed_good != check.entries:
        check.problem = (f"{check.entries - check.signed_good} of {check.entries} entries carry "
                         f"no good signature by key {check.key}")
    if args.json:
        print(json.dumps(check.to_json(), indent=2))
    elif check.intact:
        signed = (f"; {check.signed_good} signed by key {check.key}" if ring else
                  "; no public key to check signatures with")
        print(f"{printable(check.path)}: intact, {check.entries} entries{signed}"
              + (f", {check.unsigned} unsigned" if check.unsigned else ""))
    else:
        print(f"{printable(check.path)}: TAMPERED: {check.problem}")
    return 0 if check.intact else 1


def _keygen(args: argparse.Namespace) -> int:
    """Make the key pair."""
    private, public, key = audit.generate_key(args.force)
    print(f"signing key {key}: private {private} (keep it here), public {public} (give it to "
          "whoever checks your entries and bundles)")
    return 0


def _export(args: argparse.Namespace) -> int:
    """Copy the log for an archive."""
    if args.destination.exists():
        raise audit.AuditError(f"{args.destination} exists: choose a new file")
    if not args.destination.parent.is_dir():
        raise audit.AuditError(f"the folder {args.destination.parent} does not exist")
    count = audit.export(_log(args.log), args.destination)
    print(f"exported {count} entries to {args.destination} (and its .head)")
    return 0


def _signature_mark(entry: audit.AuditEntry, ring: Mapping[str, Ed25519PublicKey]) -> str:
    """What an entry's signature is worth, as `audit show` writes it after the entry."""
    kind = entry_signature(entry, ring)
    key = shown_id(entry)
    return {"good": f" (signed by key {key})",
            "forged": f" (FORGED: the signature is not key {key}'s)",
            "unknown": f" (signed by an unknown key {key}: not evidence)",
            "unsigned": " (unsigned)" if ring else ""}[kind]


def _show_line(entry: audit.AuditEntry, ring: Mapping[str, Ed25519PublicKey]) -> str:
    """One entry on one line, every field escaped (an entry may hold anything)."""
    fields = [printable(text, 200) for text in (entry.time, entry.user, entry.host,
                                                  entry.action, entry.outcome)]
    return (f"{entry.seq:>5} {fields[0]} {fields[1]}@{fields[2]} {fields[3]}: "
            f"{fields[4]}" + _signature_mark(entry, ring))


def _show(args: argparse.Namespace) -> int:
    """The last entries, one line each."""
    ring = {audit.key_id(key): key for key in key_ring(args.key or [])}
    for line in audit.read_lines(_log(args.log))[-max(args.last, 1):]:
        _, entry, problem = audit.read_entry(line)
        if entry is None or problem:
            print(f"      (not an entry{': ' + printable(problem) if problem else ''})")
            continue
        try:
            print(_show_line(entry, ring))
        except (ValueError, KeyError, TypeError):
            print("      (not an entry)")
    return 0


def run(args: argparse.Namespace) -> int:
    """The chosen action; exit 2 with one message for a bad log, key or path."""
    actions = {"verify": _verify, "keygen": _keygen, "export": _export, "show": _show}
    try:
        return actions[args.action](args)
    except audit.AuditError as error:
        print(f"kernel-studio audit: {printable(error)}", file=sys.stderr)
        return 2
