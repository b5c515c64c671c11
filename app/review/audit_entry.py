"""One entry of the audit log as a typed record (app.review.audit writes and reads them).

An entry is written as the canonical JSON of this record (sorted keys, no spaces), the same
bytes a hand-built table gave; `key_id` and `signature` are left out of an unsigned entry. Its
hash is taken over the line's object as read, never over this record encoded again: a key
added to a line by hand is not a field here, and only the raw object shows it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from app.base import codec

# The words an audit entry's decoding errors start with.
WHAT = "audit entry"


class AuditEntry(msgspec.Struct, frozen=True, kw_only=True):
    """When, who, where, what action on what (subject) with what outcome, the previous entry's
    hash and this one's, and the signing key's id and signature when it was signed."""

    seq: int
    time: str
    user: str
    host: str
    action: str
    subject: dict[str, Any]
    outcome: str
    details: dict[str, Any] = {}
    prev: str
    key_id: str | UnsetType = UNSET
    hash: str = ""
    signature: str | UnsetType = UNSET

    @property
    def signed(self) -> bool:
        """Whether the entry carries a signature."""
        return isinstance(self.signature, str)


class AuditHead(msgspec.Struct, frozen=True):
    """The head file beside a log: the last entry's number and hash."""

    seq: int
    hash: str


def decode(data: dict[str, Any]) -> AuditEntry:
    """The entry a line's object holds (codec.CodecError naming the field otherwise)."""
    return codec.from_data(AuditEntry, data, WHAT)
