"""A reviewer's look at a bundle and their decision, shared by `kernel-studio review` and the
GUI's bundle page: the bundled sources as text, a diff of one against a local copy, and the
decision recorded in the audit log with the bundle's manifest digest."""

from __future__ import annotations

import difflib
from pathlib import Path, PurePosixPath
from typing import Any

from app.base.plaintext import printable
from app.review import audit
from app.review.bundle import CLAIMS, MANIFEST, SIGNATURE, Bundle, BundleError, open_bundle

MAX_NOTE = 4000
MAX_LOCAL_BYTES = 4 << 20  # a local copy larger than this is not a kernel's source
TEXT_SUFFIXES = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".py", ".toml", ".md", ".txt", ".json"}
OWN_MEMBERS = {MANIFEST, SIGNATURE, CLAIMS}


class DecisionError(ValueError):
    """A decision that cannot be recorded; the message says why and what to do."""


def source_members(bundle: Bundle) -> list[str]:
    """The bundled files a reviewer reads (kernels, specs, references, headers), sorted."""
    return sorted(name for name in bundle.members if name not in OWN_MEMBERS
                  and PurePosixPath(name).suffix.lower() in TEXT_SUFFIXES)


def member_text(bundle: Bundle, name: str) -> str:
    """A member as text safe to show (not UTF-8 bytes replaced; control characters escaped)."""
    return printable(bundle.members[name].decode("utf-8", "replace"),
                     len(bundle.members[name]) + 1, lines=True)


def diff_with_local(bundle: Bundle, name: str, local: Path) -> str:
    """A unified diff from the local file to the bundled member ('' when they are the same);
    DecisionError when the local file cannot be read as a source."""
    try:
        if local.stat().st_size > MAX_LOCAL_BYTES or not local.is_file():
            raise DecisionError(f"{local} is not a source file of at most "
                                f"{MAX_LOCAL_BYTES >> 20} MiB: choose the local copy of {name}")
        mine = local.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise DecisionError(f"cannot read {local}: {error.strerror or error}") from None
    theirs = bundle.members[name].decode("utf-8", "replace")
    lines = difflib.unified_diff(mine.splitlines(keepends=True), theirs.splitlines(keepends=True),
                                 f"local: {local.name}", f"bundle: {name}")
    return printable("".join(lines), MAX_LOCAL_BYTES * 2, lines=True)


def record_decision(path: Path, accepted: bool, note: str) -> tuple[Bundle, dict[str, Any]]:
    """Check the bundle's manifest, then record the decision in the audit log; the bundle and
    the entry written. DecisionError for a missing or overlong note, a bad bundle, an audit
    log that cannot be written or one that is turned off."""
    if not note.strip() or len(note) > MAX_NOTE:
        raise DecisionError(f"the note must say why, in 1 to {MAX_NOTE} characters")
    try:
        bundle = open_bundle(path)
        entry = audit.append("decision", {"bundle": str(path), "digest": bundle.digest,
                                          "signed_by": bundle.signer or None},
                             "accepted" if accepted else "rejected", {"note": note})
    except (BundleError, audit.AuditError) as error:
        raise DecisionError(f"{printable(path)}: {printable(error, 4000)}") from None
    if entry is None:
        raise DecisionError("the audit log is turned off (KERNEL_STUDIO_AUDIT_LOG=off); a "
                            "decision must be recorded")
    return bundle, entry
