"""What a signature on an audit entry is worth: a log rewritten from some entry on, re-chained
and re-signed with a key of the forger's own (or left unsigned) fails `audit verify` with the
entries and the key named, unless the user names that key; `audit show` says which entries a
known key signed; a key file that is not a public key says what it is instead."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.cli.entry import main
from app.review import audit


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`kernel-studio audit ...`: exit code and output."""
    code = main(["audit", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def signed_log(audit_log: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Four entries signed by this station's key."""
    assert main(["audit", "keygen"]) == 0
    for number in range(4):
        audit.append("verify", {"spec": f"k{number}.toml"}, "failed", {"n": number})
    capsys.readouterr()
    return audit_log


def rewrite_from(log: Path, start: int, key: Ed25519PrivateKey | None) -> None:
    """Rewrite the log from entry `start` on as a forger would: outcomes changed to 'passed',
    re-chained, re-signed with `key` (left unsigned without one), and the head file rewritten."""
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    prev = entries[start - 1]["hash"]
    for entry in entries[start:]:
        entry.pop("signature", None)
        entry.pop("key_id", None)
        entry["outcome"], entry["prev"] = "passed", prev
        if key is not None:
            entry["key_id"] = audit.key_id(key.public_key())
        entry["hash"] = audit.entry_hash(entry)
        if key is not None:
            entry["signature"] = base64.b64encode(key.sign(entry["hash"].encode())).decode()
        prev = entry["hash"]
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    audit.head_path(log).write_text(json.dumps({"seq": len(entries) - 1, "hash": prev}))


def write_public(path: Path, key: Ed25519PrivateKey) -> Path:
    """The key's public half as a .pub file."""
    path.write_bytes(audit.public_pem(key.public_key()))
    return path


def test_a_log_re_signed_by_another_key_is_not_intact(
        signed_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's probe: entries 2 and 3 rewritten and re-signed by the forger's key. verify
    with the real key names both entries and the forger's key id and exits 1; show marks them
    as signed by an unknown key; naming the forger's key too makes the log check."""
    forger = Ed25519PrivateKey.generate()
    forger_id = audit.key_id(forger.public_key())
    rewrite_from(signed_log, 2, forger)
    real = audit.key_paths()[1]
    for argv in (["--key", str(real)], []):  # named, and the station's own by default
        code, out = cli(capsys, "verify", str(signed_log), *argv)
        assert code == 1, out
        assert "TAMPERED" in out and "entries 2 and 3 signed by key " + forger_id in out
        assert "does not know" in out and "intact" not in out
    code, out = cli(capsys, "show", str(signed_log))
    lines = out.splitlines()
    assert f"signed by an unknown key {forger_id}" in lines[2]
    assert f"signed by an unknown key {forger_id}" in lines[3]
    assert f"(signed by key {audit.key_id(audit.local_public_key())})" in lines[0]  # type: ignore[arg-type]
    assert "(signed)" not in out
    other = write_public(tmp_path / "forger.pub", forger)
    code, out = cli(capsys, "verify", str(signed_log), "--key", str(real), "--key", str(other))
    assert code == 0 and "intact, 4 entries" in out
    code, out = cli(capsys, "verify", str(signed_log), "--json")
    data = json.loads(out)
    assert data["intact"] is False and data["signed_by_unknown_keys"] == {forger_id: [2, 3]}


def test_unsigned_entries_after_signed_ones_are_not_intact(
        signed_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rewritten from entry 1 on and left unsigned: the chain holds, but a signed log does not
    stop being signed by itself."""
    rewrite_from(signed_log, 1, None)
    code, out = cli(capsys, "verify", str(signed_log))
    assert code == 1 and "entries 1, 2 and 3 carry no signature" in out
    code, out = cli(capsys, "show", str(signed_log))
    assert out.splitlines()[1].endswith("(unsigned)")


def test_a_signed_log_with_no_key_to_check_it_is_not_evidence(
        signed_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The station's key removed: its entries are signed by a key nobody named."""
    for path in audit.key_paths():
        path.unlink()
    code, out = cli(capsys, "verify", str(signed_log))
    assert code == 1 and "entries 0, 1, 2 and 3 signed by key" in out


def test_an_entry_re_signed_under_the_real_key_id_is_forged(
        signed_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A forger who copies the real key's id into the rewritten entries: forged, not unknown."""
    rewrite_from(signed_log, 3, Ed25519PrivateKey.generate())
    entries = [json.loads(line) for line in signed_log.read_text().splitlines()]
    real_id = audit.key_id(audit.local_public_key())  # type: ignore[arg-type]
    entries[3]["key_id"] = real_id
    signed_log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    code, out = cli(capsys, "verify", str(signed_log))
    assert code == 1 and "entry 3:" in out
    code, out = cli(capsys, "show", str(signed_log))
    assert "FORGED" in out.splitlines()[3]


def test_keygen_force_keeps_the_old_key_as_known(
        signed_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Entries the replaced key signed stay evidence on this station; new ones use the new key."""
    assert main(["audit", "keygen", "--force"]) == 0
    audit.append("decision", {}, "accepted")
    code, out = cli(capsys, "verify", str(signed_log), "--require-signed")
    assert code == 0 and "intact, 5 entries; 5 signed by key" in out


def test_key_files_that_are_not_public_keys(
        signed_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A private key, an RSA key, an empty file and a folder: exit 2, saying what it is."""
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    rsa_pub = tmp_path / "rsa.pub"
    rsa_pub.write_bytes(rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    empty = tmp_path / "empty.pub"
    empty.write_bytes(b"")
    cases = {audit.key_paths()[0]: "is a private key", rsa_pub: "not an Ed25519 public key",
             empty: "is not a public key in PEM form", tmp_path: "cannot read the public key"}
    for path, expected in cases.items():
        code, out = cli(capsys, "verify", str(signed_log), "--key", str(path))
        assert code == 2 and expected in out, out
        assert "Traceback" not in out


def test_appended_control_characters_are_stored_escaped(
        audit_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ESC, CR and a C1 CSI in an entry's fields: stored as escapes (tab and newline kept),
    so neither `cat` of the log nor `audit show` gets an escape sequence; the chain holds."""
    entry = audit.append("decision\x1b[2J", {"bundle": "b\x1b]0;t\x07.ksb"}, "ok\rFAKE\x9b",
                         {"note": "line one\nline\ttwo\x1b[31m"})
    assert entry is not None
    raw = audit_log.read_bytes()
    assert b"\x1b" not in raw and b"\r" not in raw and "\x9b".encode() not in raw
    assert entry["outcome"] == "ok\\x0dFAKE\\x9b"
    assert entry["details"]["note"] == "line one\nline\ttwo\\x1b[31m"
    code, out = cli(capsys, "show", str(audit_log))
    assert code == 0 and "decision\\x1b[2J: ok\\x0dFAKE\\x9b" in out
    assert cli(capsys, "verify", str(audit_log))[0] == 0
