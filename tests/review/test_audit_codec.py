"""Audit entries through the typed codec (issue 24): entries written now have the shape of those
the hand-built code wrote (tests/fixtures/codec/audit.jsonl), old lines decode into AuditEntry
and encode back to the same bytes, and the check hashes each line as read, so that a key added
by hand, which the decoded entry cannot hold, still breaks the chain."""

from __future__ import annotations

import json
from pathlib import Path

from app.base import codec
from app.review import audit
from app.review.audit_entry import decode

FIXTURES = Path(__file__).parents[1] / "fixtures" / "codec"


def _fixture_lines() -> list[bytes]:
    """The old log's lines."""
    return (FIXTURES / "audit.jsonl").read_bytes().splitlines()


def _pinned(lines: list[bytes]) -> list[bytes]:
    """Lines with time, user and host fixed and re-chained, as make_fixtures.py pins them."""
    pinned, prev = [], audit.GENESIS
    for line in lines:
        entry = json.loads(line)
        entry.update({"time": "2025-01-01T00:00:00+0000", "user": "tester", "host": "box",
                      "prev": prev})
        entry["hash"] = prev = audit.entry_hash(entry)
        pinned.append(audit.canonical(entry))
    return pinned


def _check_with_head(log: Path) -> audit.LogCheck:
    """check_log after writing the head file for the log's last line."""
    last = json.loads(log.read_bytes().splitlines()[-1])
    audit.head_path(log).write_text(json.dumps({"seq": last["seq"], "hash": last["hash"]}))
    return audit.check_log(log)


def test_entries_written_now_have_the_old_shape(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    audit.append("verify", {"spec": "/k/spec.toml", "digest": "ab" * 32}, "passed",
                 {"backend": "cpu", "seeds": [1, 2]}, log, sign=False)
    audit.append("bundle create", {"bundle": "/b.ksb"}, "made", None, log, sign=False)
    audit.append("trust", {"folder": "/k", "note": "x" * 5000}, "trusted",
                 {"why": "\x1b[31mred"}, log, sign=False)
    written = log.read_bytes().splitlines()
    assert all(audit.canonical(json.loads(line)) == line for line in written)
    assert _pinned(written) == _fixture_lines()


def test_a_signed_entry_adds_only_its_key_id_and_signature(audit_log: Path) -> None:
    audit.generate_key()
    returned = audit.append("decision", {"bundle": "b.ksb"}, "accepted")
    assert returned is not None
    old = json.loads(_fixture_lines()[0])
    assert [k for k in returned if k not in ("key_id", "signature")] == \
        [k for k in ["seq", "time", "user", "host", "action", "subject", "outcome", "details",
                     "prev", "hash"] if k in old]
    assert set(returned) == set(old) | {"key_id", "signature"}
    assert json.loads(audit_log.read_bytes()) == returned
    assert audit.check_log(audit_log, audit.local_public_key()).signed_good == 1


def test_old_lines_decode_and_encode_back_byte_for_byte() -> None:
    for line in _fixture_lines():
        entry = decode(json.loads(line))
        assert audit.canonical(codec.to_object(entry)) == line
    assert decode(json.loads(_fixture_lines()[2])).subject["note"].endswith(
        "an audit entry keeps 4096]")


def test_a_key_added_by_hand_breaks_the_hash_though_the_entry_reads_the_same(
        tmp_path: Path) -> None:
    lines = _fixture_lines()
    edited = json.loads(lines[1])
    edited["approved_by"] = "ceo"
    assert decode(edited) == decode(json.loads(lines[1]))
    log = tmp_path / "audit.jsonl"
    log.write_bytes(b"\n".join([lines[0], audit.canonical(edited), lines[2]]) + b"\n")
    check = _check_with_head(log)
    assert check.bad_entry == 1 and "does not match its hash" in check.problem


def test_a_field_of_the_wrong_kind_is_named(tmp_path: Path) -> None:
    entries = [json.loads(line) for line in _fixture_lines()]
    entries[1]["subject"] = ["/b.ksb"]
    prev = audit.GENESIS
    for entry in entries:
        entry["prev"] = prev
        entry["hash"] = prev = audit.entry_hash(entry)
    log = tmp_path / "audit.jsonl"
    log.write_bytes(b"".join(audit.canonical(entry) + b"\n" for entry in entries))
    check = _check_with_head(log)
    assert check.bad_entry == 1
    assert check.problem == "entry 1: audit entry: subject: expected a table, got ['/b.ksb']"


def test_the_head_file_keeps_its_spelling(audit_log: Path) -> None:
    entry = audit.append("verify", {}, "passed")
    assert entry is not None
    head = audit.head_path(audit_log).read_text(encoding="utf-8")
    assert head == json.dumps({"seq": 0, "hash": entry["hash"]}) + "\n"
    audit.head_path(audit_log).write_text(json.dumps({"seq": True, "hash": entry["hash"]}))
    assert "cannot be read" in audit.check_log(audit_log).problem
