"""`kernel-studio bundle create SPEC... -o FILE.ksb` and `kernel-studio bundle verify FILE.ksb`:
review bundles. Create obtains each spec's results here and writes one file; verify checks the
bundle's manifest before anything runs, re-runs everything here and sets claims beside results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app.base.fsutil import read_regular
from app.base.plaintext import printable
from app.cli import flags
from app.cli.commands.compare import stop_on_terminate
from app.engine.verify.results import Verdict
from app.review import audit
from app.review.bundle import BundleError, extract, open_bundle, remove_unpacked
from app.review.bundle_check import describe_check, verify_bundle
from app.review.bundle_make import create_bundle
from app.review.bundle_report import bundle_html
from app.review.evaluate import RunOptions
from app.review.model import BundleCheck
from app.review.record import OUTCOMES, record, spec_subject
from app.review.reports import write_report
from app.spec.model import SpecError, load_spec

MAX_NOTE = 4000
MAX_KEY_BYTES = 16 << 10  # an Ed25519 public key in PEM form is about 113 bytes
MAX_REASON = 300  # characters of a refusal's reason kept in the audit log


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """create and verify."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="write a bundle of specs and their results")
    create.add_argument("specs", nargs="+", metavar="SPEC.toml")
    create.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.ksb")
    create.add_argument("--note", default="", help="a note for the reviewer")
    create.add_argument("--force", action="store_true", help="replace FILE.ksb if it exists")
    check = sub.add_parser("verify", help="check a bundle and re-run everything in it here")
    check.add_argument("bundle", type=Path, metavar="FILE.ksb")
    check.add_argument("--into", type=Path, metavar="DIR",
                       help="unpack into this new or empty folder and keep it (default: a "
                            "temporary folder, removed afterwards)")
    check.add_argument("--report", type=Path, metavar="FILE.html",
                       help="also write a self-contained HTML report here")
    check.add_argument("--key", type=Path, metavar="PUB",
                       help="refuse the bundle unless its manifest is signed by this public key")
    for each in (create, check):
        flags.add_backend(each, "where kernels run (timing needs a GPU)")
        each.add_argument("--no-timing", action="store_true", help="do not time on a GPU")
        flags.add_timeout(each, "seconds one launch may take")
        flags.add_json(each, "the result")


def _options(args: argparse.Namespace) -> RunOptions:
    """How to run: bundled code is never vouched for here (trusted=None: app.isolation.trust
    decides)."""
    return RunOptions(backend=args.backend, timeout=args.timeout, trusted=None,
                      time=not args.no_timing)


def _fail(message: str) -> int:
    """One message on stderr, exit 2."""
    print(f"kernel-studio bundle: {printable(message, 4000)}", file=sys.stderr)
    return 2


def _emit(text: str) -> None:
    """Print to stdout; a reader that went away (`| head -1`) is no error: the rest of stdout
    goes nowhere, quietly, and the run still finishes (and is recorded)."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)


def _create(args: argparse.Namespace) -> int:
    """Write the bundle and record it."""
    output: Path = args.output
    if output.suffix != ".ksb":
        return _fail(f"-o {output}: name a .ksb file")
    if not output.parent.is_dir():
        return _fail(f"-o {output}: the folder {output.parent} does not exist")
    if output.exists() and not args.force:
        return _fail(f"{output} exists; give --force to replace it")
    if len(args.note) > MAX_NOTE:
        return _fail(f"--note is longer than {MAX_NOTE} characters")
    try:
        specs = [load_spec(path) for path in args.specs]
        made = create_bundle(specs, output, args.note, _options(args))
    except (SpecError, BundleError) as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot write {output}: {error.strerror or error}")
    statuses = {r.title: r.verdict["status"] for r in made.results}
    warning = record("bundle-create", {"bundle": str(output), "digest": made.digest,
                                       "specs": [spec_subject(s) for s in specs]},
                     "written", {"verdicts": statuses, "note": args.note})
    if args.json:
        print(json.dumps({"bundle": str(output), "digest": made.digest, "signed": made.signed,
                          "verdicts": statuses}, indent=2))
    else:
        print(f"wrote {output} (manifest SHA-256 {made.digest}; "
              f"{'signed' if made.signed else 'not signed: kernel-studio audit keygen'})")
        for name, status in statuses.items():
            print(f"  {name}: {status}")
        for result in made.results:
            line = Verdict.from_json(result.verdict).seeds_line()
            if line:
                print(f"  {result.title}: {line}")
    if warning:
        print(warning, file=sys.stderr)
    return 0


def _report_problem(path: Path | None) -> str | None:
    """Why the report cannot go there, or None."""
    if path is not None and (path.suffix.lower() not in (".html", ".htm")
                             or not path.parent.is_dir()):
        return f"--report {path}: name an .html file in an existing folder"
    return None


def _require_signer(signer: str, key_path: Path) -> None:
    """BundleError unless the bundle was signed by the key in `key_path`."""
    wanted = audit.key_id(_public_key(key_path))
    if signer != wanted:
        found = f"by key {signer}" if signer else "not signed at all"
        raise BundleError(f"the bundle must be signed by key {wanted}; it is {found}")


def _public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in `path`, read with a bound (a key file is tiny: /dev/zero or a
    FIFO given as --key is refused, never read without end); BundleError when it is not one."""
    try:
        data = read_regular(path, MAX_KEY_BYTES)
    except OSError as error:
        raise BundleError(f"--key {path}: {error.strerror or error}; give the maker's public "
                          "key file (PEM)") from None
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise BundleError(f"--key {path} is not a public key in PEM form") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BundleError(f"--key {path} is not an Ed25519 public key")
    return key


def _run_check(args: argparse.Namespace, folder: Path) -> BundleCheck:
    """Open (every check before anything runs), unpack, re-run (BundleError when refused)."""
    bundle = open_bundle(args.bundle)
    if args.key is not None:
        _require_signer(bundle.signer, args.key)
    made = extract(bundle, folder)
    try:
        return verify_bundle(bundle, folder, _options(args))
    except BundleError:  # its claims are unusable: nothing of it is kept
        remove_unpacked(folder, made)
        raise


def _verify(args: argparse.Namespace) -> int:
    """Check, re-run, compare, report and record."""
    problem = _report_problem(args.report)
    if problem:
        return _fail(problem)
    folder = args.into or Path(tempfile.mkdtemp(prefix="kernel-studio-bundle-"))
    try:
        check = _run_check(args, folder if args.into else folder / "unpacked")
    except BundleError as error:
        _record_refusal(args.bundle, str(error))
        return _fail(f"{args.bundle}: refused: {error}")
    finally:
        if args.into is None:
            shutil.rmtree(folder, ignore_errors=True)
    _emit(json.dumps(check.to_json(), indent=2) if args.json else describe_check(check))
    warning = record("bundle-verify", {"bundle": str(args.bundle), "digest": check.digest},
                     OUTCOMES.get(check.exit_code, "failed"),
                     {"claims_hold": check.claims_hold, "signed_by": check.signer or None,
                      "verdicts": {s.name: str(s.verdict.status) for s in check.specs}})
    if warning:
        print(warning, file=sys.stderr)
    if args.report is not None:
        try:
            write_report(args.report, bundle_html(check))
        except OSError as error:
            return _fail(f"cannot write {args.report}: {error.strerror}")
    return check.exit_code


def _record_refusal(bundle: Path, reason: str) -> None:
    """A refused bundle is recorded too (outcome bad_input), with its reason cut short."""
    warning = record("bundle-verify", {"bundle": printable(bundle, MAX_REASON)}, OUTCOMES[2],
                     {"refused": printable(reason, MAX_REASON)})
    if warning:
        print(warning, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """create or verify."""
    stop_on_terminate()
    return _create(args) if args.action == "create" else _verify(args)
