"""What the commands put in the audit log: the content a run was about (a digest over its
files' SHA-256 sums, as app.isolation.trust computes them) and its outcome in one word."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from app.base.fsutil import read_regular
from app.isolation import trust
from app.review import audit
from app.spec.model import Spec, SpecError, load_spec

OUTCOMES = {0: "passed", 1: "failed", 2: "bad_input", 3: "unverified"}


# A spec that does not load is hashed for the record only up to this size.
MAX_HASHED_BYTES = 64 << 20


def _sha256(path: Path) -> str:
    """A regular file's SHA-256 ('' when it cannot be read: a FIFO or /dev/zero never ends)."""
    try:
        return hashlib.sha256(read_regular(path, MAX_HASHED_BYTES)).hexdigest()
    except OSError:
        return ""


def spec_subject(spec: Spec) -> dict[str, Any]:
    """The spec's path, a digest of its content and each file's hash."""
    try:
        files = trust.content(spec)
    except trust.TrustError:  # a crowded folder: its own three files only
        files = {p.name: _sha256(p) for p in (spec.path or spec.base_dir, spec.source_path,
                                              spec.reference_path) if p.is_file()}
    return {"spec": str(spec.path or spec.base_dir), "digest": trust.digest_of(files),
            "files": files}


def path_subject(path: str | Path) -> dict[str, Any]:
    """spec_subject for a spec file; its path and file hash alone when it does not load."""
    try:
        return spec_subject(load_spec(path))
    except (SpecError, OSError):
        return {"spec": str(path), "digest": _sha256(Path(path))}


def record(action: str, subject: dict[str, Any], outcome: str,
           details: dict[str, Any] | None = None) -> str | None:
    """Append to the audit log; None when recorded (or the log is off), else a warning to show
    (a run is never failed by its record)."""
    try:
        audit.append(action, subject, outcome, details)
    except audit.AuditError as error:
        return f"warning: not recorded in the audit log: {error}"
    except Exception as error:  # noqa: BLE001 - the run's own exit code must stand
        return (f"warning: not recorded in the audit log ({type(error).__name__}: {error}): "
                "check it with `kernel-studio audit verify`")
    return None


def record_command(command: str, spec_path: str, exit_code: int) -> str | None:
    """The entry of a verify or bench run from the command line (a warning, never an error,
    when the spec cannot even be hashed for it)."""
    try:
        subject = path_subject(spec_path)
    except Exception as error:  # noqa: BLE001 - the run's own exit code must stand
        subject = {"spec": str(spec_path), "digest": "",
                   "unhashed": f"{type(error).__name__}: {error}"}
    return record(command, subject, OUTCOMES.get(exit_code, "failed"), {"exit_code": exit_code})
