"""The audit trail's keys and what a signature on an entry is worth.

A station knows its own keys: the signing key's public half (`signing-key.pub`) and the keys a
`keygen --force` retired (kept beside it as `signing-key-<id>.pub`); a user who names public
keys (`audit verify --key PUB`, several allowed) checks against those instead. An entry signed
by any other key is not evidence: anyone can make a key, rewrite the log from some entry on,
re-chain and re-sign it.
So each entry's signature is one of: good (a known key's, over the entry's hash), forged (it
claims a known key but is not that key's), unknown (another key, or no readable key id), or
absent. `Signatures` tallies a log's entries and says what is wrong with the tally: entries
signed by unknown keys (named, with each key's id), and unsigned entries after the first entry
a known key signed (a log that was being signed does not stop by itself).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app.base import paths, settings
from app.base.fsutil import atomic_write_bytes, read_regular
from app.base.plaintext import printable
from app.review.audit_entry import AuditEntry

MAX_KEY_BYTES = 64 << 10
KEY_ID = re.compile(r"[0-9a-f]{16}")
# How many entry numbers a message lists before it says "and N more".
LISTED = 12


class AuditError(Exception):
    """The log or a key cannot be read or written, or is not what it should be."""


def audit_folder() -> Path:
    """Where the log and the signing key live by default."""
    return paths.data_dir() / "audit"


def key_paths() -> tuple[Path, Path]:
    """The private and the public signing key."""
    folder = Path(settings.AUDIT_KEY.get() or audit_folder())
    return folder / "signing-key.pem", folder / "signing-key.pub"


def key_id(public: Ed25519PublicKey) -> str:
    """A short fingerprint of a public key: the first 16 hex digits of its SHA-256."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_pem(public: Ed25519PublicKey) -> bytes:
    """A public key in PEM."""
    return public.public_bytes(serialization.Encoding.PEM,
                               serialization.PublicFormat.SubjectPublicKeyInfo)


def _retire(public_path: Path) -> None:
    """Keep the public half of a key being replaced as signing-key-<id>.pub, so the entries it
    signed stay evidence on this station."""
    try:
        old = load_public_key(public_path)
    except AuditError:
        return  # an unreadable old key cannot vouch for anything anyway
    atomic_write_bytes(public_path.with_name(f"signing-key-{key_id(old)}.pub"), public_pem(old))


def generate_key(force: bool = False) -> tuple[Path, Path, str]:
    """Make a signing key pair (AuditError when one exists and `force` is not given); returns
    the private key's path, the public key's path and the key's id. A replaced key's public
    half is kept (see `_retire`)."""
    private_path, public_path = key_paths()
    if private_path.exists() and not force:
        raise AuditError(f"a signing key exists already ({private_path}); keep it, or give "
                         "--force to replace it (its public key is kept beside the new one, so "
                         "the entries it signed still check here)")
    if public_path.exists():
        _retire(public_path)
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
        key = serialization.load_pem_private_key(read_regular(private_path, MAX_KEY_BYTES),
                                                 password=None)
    except (OSError, ValueError, TypeError, UnsupportedAlgorithm) as error:
        raise AuditError(f"the signing key {private_path} cannot be read ({error}): make a new "
                         "one with `kernel-studio audit keygen --force`") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise AuditError(f"{private_path} is not an Ed25519 key")
    return key


def _not_a_public_key(path: Path, data: bytes) -> AuditError:
    """Why `data` is not a public key, and what to name instead."""
    where = printable(path)
    if b"PRIVATE KEY" in data:
        return AuditError(f"{where} is a private key: name the public half (the .pub file "
                          "`kernel-studio audit keygen` wrote beside it), and keep the private "
                          "key to yourself")
    return AuditError(f"{where} is not a public key in PEM form (-----BEGIN PUBLIC KEY-----): "
                      "name the .pub file that `kernel-studio audit keygen` wrote")


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A public key from a PEM file (AuditError saying what it is instead when it is not one)."""
    try:
        data = read_regular(path, MAX_KEY_BYTES)
    except OSError as error:
        raise AuditError(f"cannot read the public key {printable(path)}: "
                         f"{error.strerror or error}: name the .pub file that `kernel-studio "
                         "audit keygen` wrote") from None
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise _not_a_public_key(path, data) from None
    if not isinstance(key, Ed25519PublicKey):
        raise AuditError(f"{printable(path)} is a {type(key).__name__.lstrip('_')}, not an "
                         "Ed25519 public key: audit entries are signed with Ed25519 keys")
    return key


def local_public_key() -> Ed25519PublicKey | None:
    """The public half of the local key, when there is one."""
    _, public_path = key_paths()
    return load_public_key(public_path) if public_path.exists() else None


def local_keys() -> list[Ed25519PublicKey]:
    """Every key this station knows as its own: the signing key's public half and the keys it
    replaced (AuditError when one of them is not a key)."""
    _, public_path = key_paths()
    found = [public_path] if public_path.exists() else []
    if public_path.parent.is_dir():
        found += sorted(public_path.parent.glob("signing-key-*.pub"))
    return [load_public_key(path) for path in found]


def key_ring(named: Iterable[Path] = ()) -> list[Ed25519PublicKey]:
    """The keys to check against, each once: those the user named, else the station's own."""
    chosen = [load_public_key(path) for path in named] or local_keys()
    ring: dict[str, Ed25519PublicKey] = {}
    for key in chosen:
        ring.setdefault(key_id(key), key)
    return list(ring.values())


def _signature_ok(entry: AuditEntry, public: Ed25519PublicKey) -> bool:
    """Whether the entry's signature is the key's over its hash."""
    signature = entry.signature if isinstance(entry.signature, str) else ""
    try:
        public.verify(base64.b64decode(signature, validate=True), entry.hash.encode())
    except (InvalidSignature, ValueError):
        return False
    return True


def shown_id(entry: AuditEntry) -> str:
    """The key id an entry claims, fit to print: 16 hex digits, or a marker for anything else."""
    claimed = entry.key_id
    if not isinstance(claimed, str):
        return "(no key id)"
    if KEY_ID.fullmatch(claimed):
        return claimed
    return f"(malformed key id {printable(claimed, 40)!r})"


def entry_signature(entry: AuditEntry, ring: Mapping[str, Ed25519PublicKey]) -> str:
    """What an entry's signature is worth against the known keys: 'good', 'forged', 'unknown'
    or 'unsigned'."""
    if not entry.signed:
        return "unsigned"
    claimed = entry.key_id
    public = ring.get(claimed) if isinstance(claimed, str) else None
    if public is None:
        return "unknown"
    return "good" if _signature_ok(entry, public) else "forged"


def numbers(seqs: Sequence[int]) -> str:
    """Entry numbers for a message: 'entry 3', 'entries 3, 4 and 7', at most LISTED of them."""
    shown = [str(seq) for seq in seqs[:LISTED]]
    if len(seqs) > LISTED:
        shown.append(f"{len(seqs) - LISTED} more")
    if len(shown) == 1:
        return f"entry {shown[0]}"
    return f"entries {', '.join(shown[:-1])} and {shown[-1]}"


@dataclass
class Signatures:
    """A log's entries sorted by what their signatures are worth."""

    ring: dict[str, Ed25519PublicKey]
    good: int = 0
    unsigned: list[int] = field(default_factory=list)
    unknown: dict[str, list[int]] = field(default_factory=dict)
    first_good: int | None = None

    @classmethod
    def of(cls, keys: Sequence[Ed25519PublicKey]) -> Signatures:
        """An empty tally against these keys."""
        return cls({key_id(key): key for key in keys})

    def count(self, seq: int, entry: AuditEntry) -> str:
        """Tally one entry; a problem when its signature claims a known key and is not its."""
        kind = entry_signature(entry, self.ring)
        if kind == "forged":
            return f"its signature is not one made by key {shown_id(entry)} (forged or altered)"
        if kind == "good":
            self.good += 1
            self.first_good = seq if self.first_good is None else self.first_good
        elif kind == "unknown":
            self.unknown.setdefault(shown_id(entry), []).append(seq)
        else:
            self.unsigned.append(seq)
        return ""

    def problem(self) -> tuple[int, str] | None:
        """The first entry that is not evidence and why, or None: entries signed by keys this
        station does not know, then unsigned entries after one a known key signed."""
        if self.unknown:
            first = min(seq for seqs in self.unknown.values() for seq in seqs)
            parts = [f"{numbers(seqs)} signed by key {key}" for key, seqs in self.unknown.items()]
            return first, ("signed by a key this station does not know, so not evidence: "
                           + "; ".join(parts) + ". Anyone can make a key and re-sign a "
                           "rewritten log; if you trust that key, name its public key with "
                           "--key PUB (several --key allowed)")
        late = [seq for seq in self.unsigned if self.first_good is not None
                and seq > self.first_good]
        if late:
            return late[0], (f"{numbers(late)} carry no signature, though entry "
                             f"{self.first_good} before them is signed by a known key: entries "
                             "were added without the key, or the log was rewritten from there on")
        return None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"keys": sorted(self.ring), "signed_by_unknown_keys": self.unknown,
                "unsigned_entries": self.unsigned}
