"""The audit trail: a hash chain that catches an edited, inserted, removed, reordered or cut
entry; Ed25519 signatures that a public key checks and a forged one fails; verify and bench
runs recorded by the CLI."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.base.paths import ROOT
from app.cli.entry import main
from app.review import audit


def lines_of(path: Path) -> list[str]:
    """The log's lines."""
    return path.read_text(encoding="utf-8").splitlines()


def write_lines(path: Path, lines: list[str]) -> None:
    """Replace the log's lines (as someone tampering would)."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def five(audit_log: Path) -> Path:
    """A log of five entries."""
    for number in range(5):
        audit.append("verify", {"spec": f"k{number}.toml"}, "passed", {"n": number})
    return audit_log


def verify_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`kernel-studio audit verify ...`: exit code and output."""
    code = main(["audit", "verify", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_untouched_log_is_intact(five: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Five chained entries, each holding the hash of the one before."""
    code, out = verify_cli(capsys, str(five))
    assert code == 0 and "intact, 5 entries" in out
    entries = [json.loads(line) for line in lines_of(five)]
    assert entries[0]["prev"] == audit.GENESIS
    assert all(e["prev"] == p["hash"] for p, e in zip(entries, entries[1:], strict=False))


def _edit(lines: list[str]) -> list[str]:
    """Entry 2's outcome changed."""
    entry = json.loads(lines[2])
    entry["outcome"] = "failed"
    return [*lines[:2], json.dumps(entry), *lines[3:]]


def _insert(lines: list[str]) -> list[str]:
    """A copy of entry 1 inserted after it."""
    return [*lines[:2], lines[1], *lines[2:]]


@pytest.mark.parametrize("tamper, entry, words", [
    (_edit, 2, "does not match its hash"),
    (lambda lines: [*lines[:2], *lines[3:]], 2, "number 3 where 2 belongs"),
    (lambda lines: [lines[0], lines[2], lines[1], *lines[3:]], 1, "number 2 where 1 belongs"),
    (_insert, 2, "number 1 where 2 belongs"),
    (lambda lines: lines[:3], 3, "2 entries were cut from the end"),
    (lambda lines: [*lines[:2], "not json at all", *lines[3:]], 2, "not an audit entry"),
])
def test_each_kind_of_tampering_names_the_first_bad_entry(
        five: Path, capsys: pytest.CaptureFixture[str], tamper: object, entry: int,
        words: str) -> None:
    """Edited, removed, reordered, inserted, cut, garbled: exit 1 naming the entry."""
    write_lines(five, tamper(lines_of(five)))  # type: ignore[operator]
    code, out = verify_cli(capsys, str(five))
    assert code == 1
    assert f"TAMPERED: entry {entry}:" in out and words in out


def test_a_rewritten_entry_with_a_fresh_hash_still_breaks_the_chain(
        five: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recomputing the edited entry's own hash does not help: the next one points elsewhere."""
    lines = lines_of(five)
    entry = json.loads(lines[1])
    entry["outcome"] = "failed"
    entry["hash"] = audit.entry_hash(entry)
    write_lines(five, [lines[0], json.dumps(entry), *lines[2:]])
    code, out = verify_cli(capsys, str(five))
    assert code == 1 and "entry 2: it does not hold the hash of the entry before it" in out


def test_signed_entries_check_with_the_public_key_and_a_forgery_fails(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """keygen, signed appends, a check with the public key given; then an entry whose
    signature was made by another key under the real key's id is refused."""
    assert main(["audit", "keygen"]) == 0
    for number in range(3):
        audit.append("decision", {"bundle": f"b{number}.ksb"}, "accepted")
    _, public = audit.key_paths()
    capsys.readouterr()
    code, out = verify_cli(capsys, str(audit_log), "--key", str(public), "--require-signed")
    assert code == 0 and "3 signed by key" in out
    lines = lines_of(audit_log)
    entry = json.loads(lines[2])
    forger = Ed25519PrivateKey.generate()
    entry["signature"] = base64.b64encode(forger.sign(entry["hash"].encode())).decode()
    write_lines(audit_log, [*lines[:2], json.dumps(entry)])
    code, out = verify_cli(capsys, str(audit_log), "--key", str(public))
    assert code == 1 and "entry 2: its signature is not one made by key" in out


def test_another_key_does_not_vouch_for_the_entries(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Checked against a key that signed nothing, the entries are not vouched for."""
    assert main(["audit", "keygen"]) == 0
    audit.append("decision", {"bundle": "b.ksb"}, "rejected")
    other = tmp_path / "other.pub"
    other.write_bytes(audit.public_pem(Ed25519PrivateKey.generate().public_key()))
    capsys.readouterr()
    code, out = verify_cli(capsys, str(audit_log), "--key", str(other), "--require-signed")
    assert code == 1 and "signed by a key this station does not know" in out


def test_keygen_keeps_an_existing_key(audit_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second keygen refuses (exit 2) unless --force."""
    assert main(["audit", "keygen"]) == 0
    assert main(["audit", "keygen"]) == 2
    assert "a signing key exists already" in capsys.readouterr().err
    assert main(["audit", "keygen", "--force"]) == 0


@pytest.mark.parametrize("content", [b"", b"hello\nworld\n", b"\x00\x01\x02PK\x03\x04",
                                     b'{"a": 1}\n'])
def test_a_file_that_is_not_a_log_is_exit_2(tmp_path: Path, content: bytes,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Text, binary or JSON that is no audit entry: one message, exit 2 (an empty file is an
    empty, intact log)."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    code, out = verify_cli(capsys, str(path))
    if not content:
        assert code == 0
    else:
        assert code == 2 and "is not an audit log" in out


def test_a_missing_log_or_key_is_exit_2(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A path that does not exist, and a key file that is not a key."""
    code, out = verify_cli(capsys, str(tmp_path / "none.jsonl"))
    assert code == 2 and "is not a file" in out
    bad_key = tmp_path / "key.pub"
    bad_key.write_text("not a key")
    log = tmp_path / "log.jsonl"
    audit.append("verify", {}, "passed", log=log)
    code, out = verify_cli(capsys, str(log), "--key", str(bad_key))
    assert code == 2 and "is not a public key" in out


def test_export_copies_a_checked_log(five: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The copy and its head check as intact; a broken log is not exported."""
    copy = tmp_path / "archive.jsonl"
    assert main(["audit", "export", str(copy)]) == 0
    assert audit.check_log(copy).intact and audit.head_path(copy).exists()
    write_lines(five, _edit(lines_of(five)))
    assert main(["audit", "export", str(tmp_path / "again.jsonl")]) == 2
    assert "not exported" in capsys.readouterr().err


def test_verify_runs_are_recorded_with_their_content_hashes(
        audit_log: Path, variants: dict[str, Path]) -> None:
    """`kernel-studio verify` appends an entry naming the spec, its files' hashes and the
    outcome."""
    assert main(["verify", str(variants["off_by_one"]), "--backend", "cpu"]) == 1
    entry = json.loads(lines_of(audit_log)[-1])
    assert entry["action"] == "verify" and entry["outcome"] == "failed"
    assert set(entry["subject"]["files"]) >= {"off_by_one.cu", "off_by_one.toml",
                                              "off_by_one_ref.py"}
    assert audit.check_log(audit_log).intact


def test_appends_from_several_processes_keep_one_chain(audit_log: Path) -> None:
    """Three processes appending at once (the log is locked per append) leave one chain."""
    code = ("from app.review import audit\n"
            "for n in range(15): audit.append('bench', {'n': n}, 'passed')\n")
    workers = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT) for _ in range(3)]
    assert all(w.wait(timeout=60) == 0 for w in workers)
    check = audit.check_log(audit_log)
    assert check.intact and check.entries == 45
