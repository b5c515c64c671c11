"""`kernel-studio trust SPEC...`: let specs you have read run where no sandbox can be had.

Trust is kept by content (app.isolation.trust): editing a trusted kernel, reference or header makes
it
untrusted again. `--list` shows what is trusted and whether it is still unchanged; `--remove`
forgets specs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli import flags
from app.isolation import sandbox, trust
from app.spec.model import Spec, SpecError, load_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Paths, or --list, or --remove."""
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                        help="a spec (.toml), or a folder: every spec directly in it")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--list", action="store_true", help="show the trusted specs")
    action.add_argument("--remove", action="store_true", help="forget the given specs")
    flags.add_json(parser, "the result")


def _spec_files(path: Path) -> list[Path]:
    """The spec files a PATH names (TrustError when it names none)."""
    if path.is_dir():
        found = sorted(p for p in path.glob("*.toml") if p.is_file())
        if not found:
            raise trust.TrustError(f"{path} holds no spec (.toml) to trust")
        return found
    if not path.is_file():
        what = "is not a regular file (a device, a FIFO or a socket)" if path.exists() else \
            "does not exist"
        raise trust.TrustError(f"{path} {what}")
    return [path]


def _specs(paths: list[Path]) -> list[Spec]:
    """Every spec the paths name, parsed (SpecError naming the first bad one)."""
    specs = []
    for path in paths:
        for file in _spec_files(path):
            specs.append(load_spec(file))
    return specs


def _entry_json(entry: trust.Entry, current: bool | None = None) -> dict[str, Any]:
    """An entry for --json."""
    data: dict[str, Any] = {"spec": entry.spec, "digest": entry.digest, "added": entry.added,
                            "files": entry.files}
    if current is not None:
        data["unchanged"] = current
    return data


def _still_unchanged(entry: trust.Entry) -> bool | None:
    """Whether the spec at the entry's path still has the trusted content (None: gone)."""
    try:
        return trust.digest_of(trust.content(load_spec(entry.spec))) == entry.digest
    except (SpecError, trust.TrustError, OSError):
        return None


def _list(as_json: bool) -> int:
    """Print the trusted specs."""
    entries = trust.load_store()
    states = [_still_unchanged(e) for e in entries]
    if as_json:
        print(json.dumps({"store": str(trust.store_path()),
                          "entries": [_entry_json(e, s) for e, s in zip(entries, states,
                                                                         strict=True)]},
                         indent=2))
        return 0
    if not entries:
        print(f"nothing is trusted ({trust.store_path()})")
    words = {True: "unchanged", False: "changed since: not trusted", None: "missing"}
    for entry, state in zip(entries, states, strict=True):
        print(f"{entry.spec}  {words[state]}  ({len(entry.files)} files, {entry.added})")
    return 0


def _remove(paths: list[Path], as_json: bool) -> int:
    """Forget the given specs; exit 2 when one was not trusted."""
    removed: list[trust.Entry] = []
    missing = []
    for path in paths:
        gone = trust.remove(path)
        removed += gone
        if not gone:
            missing.append(str(path))
    if as_json:
        print(json.dumps({"removed": [e.spec for e in removed], "not_trusted": missing}))
    else:
        for entry in removed:
            print(f"no longer trusted: {entry.spec}")
        for path_text in missing:
            print(f"{path_text} was not trusted", file=sys.stderr)
    return 2 if missing else 0


def _add(paths: list[Path], as_json: bool) -> int:
    """Trust every spec the paths name."""
    entries = [trust.add(spec) for spec in _specs(paths)]
    if as_json:
        print(json.dumps({"trusted": [_entry_json(e) for e in entries]}, indent=2))
        return 0
    for entry in entries:
        print(f"trusted {entry.spec}: {', '.join(sorted(entry.files))}")
    works, _reason = sandbox.available()
    print("a sandbox is in force here, so they run inside it anyway" if works else
          "their kernel and reference will now run here without a sandbox")
    return 0


def run(args: argparse.Namespace) -> int:
    """Trust, list or remove; exit 2 for bad usage or a bad spec."""
    try:
        if args.list:
            return _list(args.json)
        if not args.paths:
            print("name at least one spec or folder to trust (or use --list)", file=sys.stderr)
            return 2
        return _remove(args.paths, args.json) if args.remove else _add(args.paths, args.json)
    except (SpecError, trust.TrustError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
