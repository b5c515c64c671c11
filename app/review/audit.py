"""The audit trail: an append-only log of JSON lines in which every entry holds the SHA-256 of
the one before it, optionally signed with a local Ed25519 key.

An entry records when, who, on which host, what action (verify, bench, compare, bundle-create,
bundle-verify, decision), on what content (hashes) and with what outcome. `check_log` finds an
edited, inserted, removed or reordered entry by the broken chain, and a cut at the end by the
head file beside the log (the last entry's number and hash, rewritten with every append). A
signature covers the entry's hash, and the hash covers the key's id, so neither can be swapped.
What a chain alone cannot show is a log rewritten whole from some entry on: signatures, checked
with a public key kept elsewhere, are what make that visible.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import getpass
import hashlib
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app import paths, settings
from app.fsutil import atomic_write_bytes, atomic_write_text

GENESIS = "0" * 64
REQUIRED = ("seq", "time", "user", "host", "action", "subject", "outcome", "prev", "hash")
MAX_LINE = 1 << 20
MAX_LOG_BYTES = 1 << 30


class AuditError(Exception):
    """The log or a key cannot be read or written, or is not what it should be."""


def audit_folder() -> Path:
    """Where the log and the signing key live by default."""
    return paths.data_dir() / "audit"


def log_path() -> Path | None:
    """The audit log: KERNEL_STUDIO_AUDIT_LOG, else the data folder's; None when turned off."""
    named = settings.AUDIT_LOG.get()
    if named == "off":
        return None
    return Path(named) if named else audit_folder() / "audit.jsonl"


def head_path(log: Path) -> Path:
    """The head file beside a log."""
    return log.with_name(log.name + ".head")


def key_paths() -> tuple[Path, Path]:
    """The private and the public signing key."""
    folder = Path(settings.AUDIT_KEY.get() or audit_folder())
    return folder / "signing-key.pem", folder / "signing-key.pub"


def canonical(data: dict[str, Any]) -> bytes:
    """The bytes a hash is taken over: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(entry: dict[str, Any]) -> str:
    """The SHA-256 of an entry without its hash and signature."""
    body = {k: v for k, v in entry.items() if k not in ("hash", "signature")}
    return hashlib.sha256(canonical(body)).hexdigest()


# -- keys ---------------------------------------------------------------------------------------


def key_id(public: Ed25519PublicKey) -> str:
    """A short fingerprint of a public key: the first 16 hex digits of its SHA-256."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_pem(public: Ed25519PublicKey) -> bytes:
    """A public key in PEM."""
    return public.public_bytes(serialization.Encoding.PEM,
                               serialization.PublicFormat.SubjectPublicKeyInfo)


def generate_key(force: bool = False) -> tuple[Path, Path, str]:
    """Make a signing key pair (AuditError when one exists and `force` is not given); returns
    the private key's path, the public key's path and the key's id."""
    private_path, public_path = key_paths()
    if private_path.exists() and not force:
        raise AuditError(f"a signing key exists already ({private_path}); keep it, or give "
                         "--force to replace it (entries it signed stay checkable only with its "
                         "public key)")
    key = Ed25519PrivateKey.generate()
    private_path.parent.mkdir(parents=True, exist_ok=True)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    atomic_write_bytes(private_path, pem)
    os.chmod(private_path, 0o600)
    atomic_write_bytes(public_path, public_pem(key.public_key()))
    return private_path, public_path, key_id(key.public_key())


def load_private_key() -> Ed25519PrivateKey | None:
    """The local signing key, or None when there is none (AuditError when it is unreadable)."""
    private_path, _ = key_paths()
    if not private_path.exists():
        return None
    try:
        key = serialization.load_pem_private_key(private_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise AuditError(f"the signing key {private_path} cannot be read ({error})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise AuditError(f"{private_path} is not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A public key from a PEM file (AuditError when it is not one)."""
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as error:
        raise AuditError(f"cannot read the public key {path}: {error.strerror}") from None
    except (ValueError, TypeError):
        raise AuditError(f"{path} is not a public key in PEM form") from None
    if not isinstance(key, Ed25519PublicKey):
        raise AuditError(f"{path} is not an Ed25519 public key")
    return key


def local_public_key() -> Ed25519PublicKey | None:
    """The public half of the local key, when there is one."""
    _, public_path = key_paths()
    return load_public_key(public_path) if public_path.exists() else None


# -- appending ----------------------------------------------------------------------------------


def _user() -> str:
    """The user's login name (the uid where there is none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[IO[bytes]]:
    """The log opened for reading and appending, under an exclusive lock (appends from
    several processes stay one chain)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield handle
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _last_entry(handle: IO[bytes]) -> dict[str, Any] | None:
    """The last entry of an open log (None when it is empty)."""
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - MAX_LINE))
    lines = [line for line in handle.read().splitlines() if line.strip()]
    if not lines:
        return None
    try:
        last = json.loads(lines[-1])
    except ValueError:
        raise AuditError("the audit log's last line is not an entry: check it with "
                         "`kernel-studio audit verify`") from None
    if not isinstance(last, dict) or "hash" not in last or "seq" not in last:
        raise AuditError("the audit log's last line is not an entry")
    return last


def _signed(entry: dict[str, Any], key: Ed25519PrivateKey | None) -> dict[str, Any]:
    """The entry with its key id, hash and (with a key) signature."""
    if key is not None:
        entry["key_id"] = key_id(key.public_key())
    entry["hash"] = entry_hash(entry)
    if key is not None:
        entry["signature"] = base64.b64encode(key.sign(entry["hash"].encode())).decode()
    return entry


def append(action: str, subject: dict[str, Any], outcome: str,
           details: dict[str, Any] | None = None, log: Path | None = None,
           sign: bool = True) -> dict[str, Any] | None:
    """Append an entry (signed when a local key exists and `sign`); returns it, or None when
    the log is turned off. AuditError when the log cannot be written."""
    path = log or log_path()
    if path is None:
        return None
    key = load_private_key() if sign else None
    try:
        with _locked(path) as handle:
            last = _last_entry(handle)
            entry = _signed({"seq": 0 if last is None else int(last["seq"]) + 1,
                             "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "user": _user(),
                             "host": socket.gethostname(), "action": action, "subject": subject,
                             "outcome": outcome, "details": details or {},
                             "prev": GENESIS if last is None else str(last["hash"])}, key)
            handle.seek(0, os.SEEK_END)
            handle.write(canonical(entry) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
            atomic_write_text(head_path(path), json.dumps({"seq": entry["seq"],
                                                           "hash": entry["hash"]}) + "\n")
    except OSError as error:
        raise AuditError(f"cannot write the audit log {path}: {error.strerror or error}") from None
    return entry


# -- checking -----------------------------------------------------------------------------------


@dataclass
class LogCheck:
    """What checking a log found: its entries, the first problem (with its entry number), and
    how many entries carry a good signature by the key checked against."""

    path: Path
    entries: int = 0
    problem: str = ""
    bad_entry: int | None = None
    signed_good: int = 0
    signed_other: int = 0
    unsigned: int = 0
    key: str = ""
    actions: dict[str, int] = field(default_factory=dict)

    @property
    def intact(self) -> bool:
        """No problem found."""
        return not self.problem

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"log": str(self.path), "intact": self.intact, "entries": self.entries,
                "problem": self.problem, "bad_entry": self.bad_entry,
                "signed_good": self.signed_good, "signed_by_other_keys": self.signed_other,
                "unsigned": self.unsigned, "key": self.key, "actions": self.actions}


def read_lines(path: Path) -> list[bytes]:
    """A log's lines (AuditError when it is missing, too large or not a file)."""
    try:
        if not path.is_file():
            raise AuditError(f"{path} is not a file: name an audit log (.jsonl)")
        if path.stat().st_size > MAX_LOG_BYTES:
            raise AuditError(f"{path} is larger than {MAX_LOG_BYTES >> 30} GiB: not an audit log")
        return path.read_bytes().splitlines()
    except OSError as error:
        raise AuditError(f"cannot read {path}: {error.strerror or error}") from None


def _parse(line: bytes) -> dict[str, Any] | None:
    """An entry, or None when the line is not one."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or any(k not in data for k in REQUIRED):
        return None
    return data


def _entry_problem(entry: dict[str, Any] | None, index: int, prev: str) -> str:
    """What is wrong with the entry at `index` (0-based) given the previous hash, or ''."""
    if entry is None:
        return "it is not an audit entry (edited, or damaged)"
    if entry["seq"] != index:
        return (f"it carries number {entry['seq']} where {index} belongs (entries were "
                "removed, inserted or reordered)")
    if entry["prev"] != prev:
        return "it does not hold the hash of the entry before it (removed, inserted or reordered)"
    if entry_hash(entry) != entry["hash"]:
        return "its content does not match its hash (it was edited)"
    return ""


def _signature_ok(entry: dict[str, Any], public: Ed25519PublicKey) -> bool:
    """Whether the entry's signature is the key's over its hash."""
    try:
        public.verify(base64.b64decode(str(entry.get("signature", "")), validate=True),
                      str(entry["hash"]).encode())
    except (InvalidSignature, ValueError):
        return False
    return True


def _check_signature(check: LogCheck, entry: dict[str, Any],
                     public: Ed25519PublicKey | None) -> str:
    """Count the entry's signature; a problem when it claims the key checked against but the
    signature is not that key's."""
    if "signature" not in entry:
        check.unsigned += 1
        return ""
    if public is None or entry.get("key_id") != check.key:
        check.signed_other += 1
        return ""
    if not _signature_ok(entry, public):
        return f"its signature is not one made by key {check.key} (forged or altered)"
    check.signed_good += 1
    return ""


def _fail(check: LogCheck, index: int, problem: str) -> LogCheck:
    """Record the first problem."""
    check.bad_entry, check.problem = index, f"entry {index}: {problem}"
    return check


def check_log(path: Path, public: Ed25519PublicKey | None = None) -> LogCheck:
    """Check the chain, the head and (with a public key) the signatures of a log. AuditError
    when the file is not an audit log at all."""
    lines = [line for line in read_lines(path) if line.strip()]
    entries = [_parse(line) for line in lines]
    if lines and all(e is None for e in entries):
        raise AuditError(f"{path} is not an audit log: none of its lines is an audit entry")
    check = LogCheck(path, len(entries), key=key_id(public) if public else "")
    prev = GENESIS
    for index, entry in enumerate(entries):
        problem = _entry_problem(entry, index, prev)
        if not problem and entry is not None:
            problem = _check_signature(check, entry, public)
        if problem or entry is None:
            return _fail(check, index, problem)
        prev = str(entry["hash"])
        check.actions[str(entry["action"])] = check.actions.get(str(entry["action"]), 0) + 1
    return _check_head(check, path, entries)


def _check_head(check: LogCheck, path: Path, entries: list[dict[str, Any] | None]) -> LogCheck:
    """A log that ends before its head file's entry was cut at the end."""
    head = head_path(path)
    if not head.exists():
        return check
    try:
        data = json.loads(head.read_text(encoding="utf-8"))
        seq, digest = int(data["seq"]), str(data["hash"])
    except (OSError, ValueError, KeyError, TypeError):
        return _fail(check, len(entries), f"the head file {head.name} cannot be read")
    last = entries[-1] if entries else None
    if last is None or last["seq"] < seq:
        have = 0 if last is None else last["seq"] + 1
        return _fail(check, have, f"the log ends after {have} entries but its head records "
                                  f"entry {seq}: {seq + 1 - have} entries were cut from the end")
    if last["seq"] == seq and last["hash"] != digest:
        return _fail(check, seq, "the last entry is not the one the head file records")
    return check


def export(log: Path, destination: Path) -> int:
    """Copy a log and its head file for an archive, after checking the chain; returns the
    number of entries (AuditError when the log is broken or cannot be copied)."""
    check = check_log(log)
    if not check.intact:
        raise AuditError(f"not exported: {check.problem}")
    try:
        atomic_write_bytes(destination, log.read_bytes())
        head = head_path(log)
        if head.exists():
            atomic_write_bytes(head_path(destination), head.read_bytes())
    except OSError as error:
        raise AuditError(f"cannot write {destination}: {error.strerror or error}") from None
    return check.entries
