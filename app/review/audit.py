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
import math
import os
import socket
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app.base import codec, settings
from app.base.fsutil import atomic_write_bytes, atomic_write_text, read_regular
from app.base.plaintext import printable
from app.review.audit_entry import AuditEntry as AuditEntry
from app.review.audit_entry import AuditHead, decode
from app.review.audit_keys import MAX_KEY_BYTES as MAX_KEY_BYTES
from app.review.audit_keys import AuditError as AuditError
from app.review.audit_keys import Signatures
from app.review.audit_keys import audit_folder as audit_folder
from app.review.audit_keys import generate_key as generate_key
from app.review.audit_keys import key_id as key_id
from app.review.audit_keys import key_paths as key_paths
from app.review.audit_keys import load_private_key as load_private_key
from app.review.audit_keys import load_public_key as load_public_key
from app.review.audit_keys import local_public_key as local_public_key
from app.review.audit_keys import public_pem as public_pem

GENESIS = "0" * 64
REQUIRED = ("seq", "time", "user", "host", "action", "subject", "outcome", "prev", "hash")
TEXT_FIELDS = ("time", "user", "host", "action", "outcome", "prev", "hash")
# What an entry written here may hold: a free-text string keeps MAX_TEXT characters, a list or
# object MAX_ITEMS items, nesting MAX_DEPTH levels, and a whole entry MAX_ENTRY bytes (past that
# its details, then its subject, are replaced by their SHA-256 and a marker).
MAX_TEXT = 4096
MAX_ITEMS = 1000
MAX_DEPTH = 8
MAX_ENTRY = 64 << 10
# The longest line an append reads back as the last entry, and that `audit verify` accepts: far
# above MAX_ENTRY, so that entries written before entries were bounded still chain on.
MAX_LINE = 16 << 20
MAX_LOG_BYTES = 1 << 30
MAX_HEAD_BYTES = 4096
_CHUNK = 64 << 10


def log_path() -> Path | None:
    """The audit log: KERNEL_STUDIO_AUDIT_LOG, else the data folder's; None when turned off."""
    named = settings.AUDIT_LOG.get()
    if named == "off":
        return None
    return Path(named) if named else audit_folder() / "audit.jsonl"


def head_path(log: Path) -> Path:
    """The head file beside a log."""
    return log.with_name(log.name + ".head")


def canonical(data: dict[str, Any]) -> bytes:
    """The bytes a hash is taken over: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _body(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry's object without its hash and signature: what the hash is over."""
    return {k: v for k, v in entry.items() if k not in ("hash", "signature")}


def entry_hash(entry: dict[str, Any]) -> str:
    """The SHA-256 of an entry's object (as read, or as written) without its hash and
    signature."""
    return hashlib.sha256(canonical(_body(entry))).hexdigest()


# -- appending ----------------------------------------------------------------------------------


def _user() -> str:
    """The user's login name (the uid where there is none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _text(value: str) -> str:
    """A string an entry can hold: encodable as UTF-8 (a lone surrogate, as a name undecodable
    on the command line gives, becomes an escape), control characters other than tab and
    newline stored as escapes (ESC as the four characters \\x1b: whoever prints or `cat`s the
    log gets no escape sequence, and the hash covers what is stored), and at most MAX_TEXT
    characters, with a marker saying how many were cut."""
    value = printable(value.encode("utf-8", "backslashreplace").decode("utf-8"), lines=True)
    if len(value) <= MAX_TEXT:
        return value
    return (value[:MAX_TEXT] + f"...[{len(value) - MAX_TEXT} more characters cut: an audit "
            f"entry keeps {MAX_TEXT}]")


def bounded(value: Any, depth: int = 0) -> Any:
    """`value` as an entry may hold it: JSON types only, strings, lists and objects cut to
    MAX_TEXT characters and MAX_ITEMS items with a marker, nesting to MAX_DEPTH levels."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 1 << 63 else _text(f"{value:.6e}")
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _text(value)
    if depth >= MAX_DEPTH:
        return f"[cut: nested deeper than the {MAX_DEPTH} levels an audit entry keeps]"
    if isinstance(value, dict):
        items = list(value.items())
        out = {_text(str(k)): bounded(v, depth + 1) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            out["[cut]"] = f"{len(items) - MAX_ITEMS} more items: an audit entry keeps {MAX_ITEMS}"
        return out
    if isinstance(value, list | tuple | set | frozenset):
        seq = list(value)
        kept = [bounded(v, depth + 1) for v in seq[:MAX_ITEMS]]
        if len(seq) > MAX_ITEMS:
            kept.append(f"[cut: {len(seq) - MAX_ITEMS} more items: an audit entry keeps "
                        f"{MAX_ITEMS}]")
        return kept
    return _text(str(value))


def _digest_only(value: Any, what: str) -> dict[str, Any]:
    """A field too large for an entry: its SHA-256 and a marker (a subject's own digest kept)."""
    kept: dict[str, Any] = {"cut": f"the {what} took more than the {MAX_ENTRY} bytes an audit "
                                   "entry may hold; sha256 is over its canonical JSON",
                            "sha256": hashlib.sha256(canonical({"v": value})).hexdigest()}
    if isinstance(value, dict) and isinstance(value.get("digest"), str):
        kept["digest"] = value["digest"]
    return kept


def _within_limit(entry: AuditEntry) -> AuditEntry:
    """The entry, its details and then its subject replaced by digests while it is over
    MAX_ENTRY bytes."""
    for name in ("details", "subject"):
        # Room left for the key id, hash and signature, which are not set yet.
        if len(canonical(_body(codec.to_object(entry)))) <= MAX_ENTRY - 1024:
            break
        entry = codec.replace(entry, **{name: _digest_only(getattr(entry, name), name)})
    return entry


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[IO[bytes]]:
    """The log opened for reading and appending, under an exclusive lock (appends from
    several processes stay one chain). AuditError when it is not a regular file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise AuditError(f"{path} is not a regular file: point KERNEL_STUDIO_AUDIT_LOG at "
                             "a .jsonl file")
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield handle
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _last_line(handle: IO[bytes]) -> bytes:
    """The whole last non-blank line of an open log, read backwards in chunks (b'' when there
    is none); AuditError when it is longer than MAX_LINE, as `audit verify` would say."""
    handle.seek(0, os.SEEK_END)
    position = handle.tell()
    parts: list[bytes] = []
    held = 0
    while position > 0:
        step = min(_CHUNK, position)
        position -= step
        handle.seek(position)
        chunk = handle.read(step)
        if not parts:
            chunk = chunk.rstrip()
            if not chunk:
                continue
        start = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if start >= 0:
            parts.append(chunk[start + 1:])
            break
        parts.append(chunk)
        held += len(chunk)
        if held > MAX_LINE + _CHUNK:
            break
    line = b"".join(reversed(parts)).strip()
    if len(line) > MAX_LINE:
        raise AuditError(f"the audit log's last line is longer than the {MAX_LINE >> 20} MiB an "
                         "entry may hold: check it with `kernel-studio audit verify`, and move "
                         "the log aside to start a new one")
    return line


def _last_entry(handle: IO[bytes]) -> AuditEntry | None:
    """The last entry of an open log (None when it is empty)."""
    line = _last_line(handle)
    if not line:
        return None
    _, entry, problem = read_entry(line)
    if entry is None or problem:
        raise AuditError(f"the audit log's last line is not an entry ({problem or 'not JSON'}):"
                         " check it with `kernel-studio audit verify`, and move the log aside "
                         "to start a new one")
    return entry


def _head_agrees(path: Path, last: AuditEntry | None) -> None:
    """AuditError unless the head file records the log's last entry (or both are absent): an
    append over a cut log, or one whose head was deleted, would rewrite the head and hide it."""
    head = head_path(path)
    data: AuditHead | None
    try:
        data = codec.loads(AuditHead, read_regular(head, MAX_HEAD_BYTES), "head file")
    except FileNotFoundError:
        if last is None:
            return
        raise AuditError(f"the head file {head} is missing, so a cut at the log's end cannot be "
                         "seen: check the log with `kernel-studio audit verify`, and move it "
                         "aside to start a new one") from None
    except codec.CodecError:
        data = None
    if last is None or data is None or (data.seq, data.hash) != (last.seq, last.hash):
        raise AuditError(f"the log's last entry is not the one its head file {head.name} "
                         "records (entries cut or added): check it with `kernel-studio audit "
                         "verify`, and move the log aside to start a new one")


def _signed(entry: AuditEntry, key: Ed25519PrivateKey | None) -> AuditEntry:
    """The entry with its key id, hash and (with a key) signature."""
    if key is not None:
        entry = codec.replace(entry, key_id=key_id(key.public_key()))
    entry = codec.replace(entry, hash=entry_hash(codec.to_object(entry)))
    if key is not None:
        signature = base64.b64encode(key.sign(entry.hash.encode())).decode()
        entry = codec.replace(entry, signature=signature)
    return entry


def _new_entry(last: AuditEntry | None, action: str, subject: dict[str, Any], outcome: str,
               details: dict[str, Any] | None) -> AuditEntry:
    """The entry that follows `last`, its free text bounded, not yet hashed or signed."""
    return _within_limit(AuditEntry(
        seq=0 if last is None else last.seq + 1, time=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        user=_text(_user()), host=_text(socket.gethostname()), action=_text(str(action)),
        subject=bounded(subject), outcome=_text(str(outcome)), details=bounded(details or {}),
        prev=GENESIS if last is None else last.hash))


def append(action: str, subject: dict[str, Any], outcome: str,
           details: dict[str, Any] | None = None, log: Path | None = None,
           sign: bool = True) -> dict[str, Any] | None:
    """Append an entry (signed when a local key exists and `sign`); returns it, or None when
    the log is turned off. Free text is bounded (see `bounded`, MAX_ENTRY). AuditError when the
    log cannot be read or written, whatever the reason: a record never fails a command."""
    path = log or log_path()
    if path is None:
        return None
    key = load_private_key() if sign else None
    try:
        with _locked(path) as handle:
            last = _last_entry(handle)
            _head_agrees(path, last)
            entry = _signed(_new_entry(last, action, subject, outcome, details), key)
            written = codec.to_object(entry)
            handle.seek(0, os.SEEK_END)
            handle.write(canonical(written) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
            atomic_write_text(head_path(path),
                              codec.dumps(AuditHead(entry.seq, entry.hash)) + "\n")
    except OSError as error:
        raise AuditError(f"cannot write the audit log {path}: {error.strerror or error}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as error:
        raise AuditError(f"cannot append to the audit log {path} ({type(error).__name__}: "
                         f"{error}): check it with `kernel-studio audit verify`") from None
    return written


# -- checking -----------------------------------------------------------------------------------


@dataclass
class LogCheck:
    """What checking a log found: its entries, the first problem (with its entry number), and
    what the entries' signatures are worth against the keys checked with (audit_keys)."""

    path: Path
    entries: int = 0
    problem: str = ""
    bad_entry: int | None = None
    signatures: Signatures = field(default_factory=lambda: Signatures.of([]))
    actions: dict[str, int] = field(default_factory=dict)

    @property
    def intact(self) -> bool:
        """No problem found."""
        return not self.problem

    @property
    def key(self) -> str:
        """The ids of the keys checked against, joined by commas ('' for none)."""
        return ", ".join(sorted(self.signatures.ring))

    @property
    def signed_good(self) -> int:
        """Entries with a good signature by a key checked against."""
        return self.signatures.good

    @property
    def signed_other(self) -> int:
        """Entries signed by keys not checked against."""
        return sum(len(seqs) for seqs in self.signatures.unknown.values())

    @property
    def unsigned(self) -> int:
        """Entries with no signature."""
        return len(self.signatures.unsigned)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"log": str(self.path), "intact": self.intact, "entries": self.entries,
                "problem": self.problem, "bad_entry": self.bad_entry,
                "signed_good": self.signed_good, "signed_by_other_keys": self.signed_other,
                "unsigned": self.unsigned, "key": self.key, "actions": self.actions,
                **self.signatures.to_json()}


def _read_log(path: Path, with_head: bool) -> tuple[list[bytes], bytes | None]:
    """A log's lines and (with `with_head`) its head file's bytes, None when there is none, read
    under a shared lock so that no append falls between the two. AuditError when the log is
    missing, too large or not a regular file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise AuditError(f"{path} is not a file ({error.strerror or error}): name an audit log "
                         "(.jsonl)") from None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise AuditError(f"{path} is not a file: name an audit log (.jsonl)")
            if info.st_size > MAX_LOG_BYTES:
                raise AuditError(f"{path} is larger than {MAX_LOG_BYTES >> 30} GiB: not an audit "
                                 "log")
            fcntl.flock(handle, fcntl.LOCK_SH)
            try:
                data = handle.read(MAX_LOG_BYTES + 1)
                head = None
                if with_head:
                    with contextlib.suppress(FileNotFoundError):
                        head = read_regular(head_path(path), MAX_HEAD_BYTES)
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError as error:
        raise AuditError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_LOG_BYTES:
        raise AuditError(f"{path} is larger than {MAX_LOG_BYTES >> 30} GiB: not an audit log")
    return data.splitlines(), head


def read_lines(path: Path) -> list[bytes]:
    """A log's lines (AuditError when it is missing, too large or not a file)."""
    return _read_log(path, with_head=False)[0]


def read_entry(line: bytes) -> tuple[dict[str, Any] | None, AuditEntry | None, str]:
    """A line as (its object as read, the entry decoded from it, what is wrong): (None, None,
    '') when it is no entry at all; (object, entry, '') for a well-formed one; (object, None,
    what is wrong, naming the field) for one with every field present but one of the wrong
    kind. The hash is checked over the object, never over the entry encoded again."""
    data, problem = parse_entry(line)
    if data is None or problem:
        return data, None, problem
    try:
        return data, decode(data), ""
    except codec.CodecError as error:
        return data, None, str(error)


def parse_entry(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """A line as an entry's object: (None, '') when it is no entry at all; (object, '') for one
    with every field present and the number and text fields of their kinds; (object, what is
    wrong) otherwise (read_entry also decodes the rest)."""
    if len(line.strip()) > MAX_LINE:
        return None, f"it is longer than the {MAX_LINE >> 20} MiB an entry may hold"
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None, ""
    if not isinstance(data, dict) or any(k not in data for k in REQUIRED):
        return None, ""
    seq = data["seq"]
    if type(seq) is not int or seq < 0:
        return data, f"its number (seq) is {json.dumps(seq)[:40]}, not a whole number"
    for name in TEXT_FIELDS:
        if not isinstance(data[name], str):
            return data, f"its {name} is not a string"
    return data, ""


def _entry_problem(raw: dict[str, Any] | None, entry: AuditEntry | None, index: int,
                   prev: str) -> str:
    """What is wrong with the well-formed entry at `index` (0-based) given the previous hash,
    or ''. The hash is taken over the line's object as read (`raw`): a key added by hand, which
    the decoded entry does not hold, still breaks it."""
    if raw is None or entry is None:
        return "it is not an audit entry (edited, or damaged)"
    if entry.seq != index:
        return (f"it carries number {entry.seq} where {index} belongs (entries were "
                "removed, inserted or reordered)")
    if entry.prev != prev:
        return "it does not hold the hash of the entry before it (removed, inserted or reordered)"
    try:
        digest = entry_hash(raw)
    except (ValueError, TypeError, RecursionError):
        return "its content cannot be hashed (it was edited, or damaged)"
    if digest != entry.hash:
        return "its content does not match its hash (it was edited)"
    return ""


def _fail(check: LogCheck, index: int | None, problem: str) -> LogCheck:
    """Record the first problem."""
    check.bad_entry = index
    check.problem = problem if index is None else f"entry {index}: {problem}"
    return check


def check_log(path: Path,
              keys: Ed25519PublicKey | Sequence[Ed25519PublicKey] | None = None) -> LogCheck:
    """Check the chain, the head and, when `keys` is given (one public key or several, even
    none), the signatures of a log: an entry signed by any other key, or unsigned after one a
    key signed, is then a problem (audit_keys.Signatures); with `keys` None only the chain and
    the head are judged. AuditError when the file is not an audit log at all."""
    raw, head = _read_log(path, with_head=True)
    lines = [line for line in raw if line.strip()]
    parsed = [read_entry(line) for line in lines]
    if lines and all(data is None and not why for data, _, why in parsed):
        raise AuditError(f"{path} is not an audit log: none of its lines is an audit entry")
    ring = [keys] if isinstance(keys, Ed25519PublicKey) else list(keys or [])
    check = LogCheck(path, len(parsed), signatures=Signatures.of(ring))
    prev = GENESIS
    entries: list[AuditEntry] = []
    for index, (data, entry, malformed) in enumerate(parsed):
        problem = malformed or _entry_problem(data, entry, index, prev)
        if not problem and entry is not None:
            problem = check.signatures.count(index, entry)
        if problem or entry is None:
            return _fail(check, index, problem)
        entries.append(entry)
        prev = entry.hash
        check.actions[entry.action] = check.actions.get(entry.action, 0) + 1
    check = _check_head(check, path, head, entries)
    found = check.signatures.problem() if check.intact and keys is not None else None
    return _fail(check, *found) if found else check


def _check_head(check: LogCheck, path: Path, head: bytes | None,
                entries: list[AuditEntry]) -> LogCheck:
    """The head file records the last entry's number and hash: a log that ends before it was
    cut at the end, one that goes on past it had entries added behind the head's back, and a
    log with entries but no head file cannot show either."""
    name = head_path(path).name
    if head is None:
        if not entries:
            return check
        return _fail(check, None, f"the head file {name} is missing: nothing shows whether "
                                  "entries were cut from the end of the log (it is rewritten "
                                  "with every append; deleting it hides a cut). If you moved "
                                  f"the log, move its {name} with it")
    try:
        recorded = codec.loads(AuditHead, head, "head file")
    except codec.CodecError:
        recorded = None
    if recorded is None or recorded.seq < 0:
        return _fail(check, len(entries), f"the head file {name} cannot be read (damaged or "
                                          "edited)")
    seq, digest = recorded.seq, recorded.hash
    have = len(entries)
    if have <= seq:
        return _fail(check, have, f"the log ends after {have} entries but its head records "
                                  f"entry {seq}: {seq + 1 - have} entries were cut from the end")
    if entries[seq].hash != digest:
        return _fail(check, seq, f"entry {seq} is not the one the head file records (the log's "
                                 "end was rewritten)")
    if have > seq + 1:
        return _fail(check, seq + 1, f"the log goes on past entry {seq}, the last its head file "
                                     f"records: {have - seq - 1} entries were added without "
                                     "the head (by hand, or an append cut short by a crash); "
                                     "unless you know why, treat them as forged")
    return check


def export(log: Path, destination: Path) -> int:
    """Copy a log and its head file for an archive, after checking the chain; returns the
    number of entries (AuditError when the log is broken or cannot be copied)."""
    check = check_log(log)
    if not check.intact:
        raise AuditError(f"not exported: {check.problem}")
    try:
        atomic_write_bytes(destination, read_regular(log, MAX_LOG_BYTES))
        head = head_path(log)
        if head.exists():
            atomic_write_bytes(head_path(destination), read_regular(head, MAX_HEAD_BYTES))
    except OSError as error:
        raise AuditError(f"cannot write {destination}: {error.strerror or error}") from None
    return check.entries
