"""Review files written by earlier code still read and write back the same (issue 24's codec
work): a compare report and a bundle check as `--json` printed them, a bundle's manifest and
claims, and an audit log (tests/fixtures/codec, written by make_fixtures.py)."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.engine.verify.results import Status
from app.review import audit, bundle
from app.review.model import CompareReport, check_from_json

FIXTURES = Path(__file__).parents[1] / "fixtures" / "codec"


def _reports() -> dict[str, dict[str, object]]:
    """The stored reports."""
    return json.loads((FIXTURES / "reports.json").read_text(encoding="utf-8"))  # type: ignore


def test_an_old_compare_report_reads_and_writes_back_the_same() -> None:
    stored = _reports()["compare"]
    report = CompareReport.from_json(stored)
    assert report.variant("base").verdict.status is Status.MISMATCH
    assert report.timing.rows[1].ratio == 0.5 and report.exit_code == 1
    assert json.loads(json.dumps(report.to_json())) == stored


def test_the_old_reports_file_is_written_back_byte_for_byte() -> None:
    reports = _reports()
    again = {"compare": CompareReport.from_json(reports["compare"]).to_json(),
             "bundle_check": check_from_json(reports["bundle_check"]).to_json()}
    text = (FIXTURES / "reports.json").read_text(encoding="utf-8")
    assert json.dumps(again, indent=1) + "\n" == text


def test_a_malformed_report_names_its_field() -> None:
    stored = _reports()["compare"]
    stored["variants"][0]["verdict"]["runs"][1]["findings"][0]["count"] = "three"
    with pytest.raises(ValueError, match=r"compare report: variants\[0\]\.verdict\.runs\[1\]"
                                         r"\.findings\[0\]\.count: expected a whole number"):
        CompareReport.from_json(stored)
    check = _reports()["bundle_check"]
    del check["specs"][0]["obtained"]["timing"]
    with pytest.raises(ValueError, match=r"bundle check: specs\[0\]\.obtained\.timing: missing"):
        check_from_json(check)


def test_an_old_bundle_check_reads_and_writes_back_the_same() -> None:
    stored = _reports()["bundle_check"]
    check = check_from_json(stored)
    assert check.specs[0].differences[0].what == "status" and not check.claims_hold
    assert json.loads(json.dumps(check.to_json())) == stored


def test_an_old_manifest_and_claims_pass_the_checks() -> None:
    manifest = bundle._manifest((FIXTURES / "bundle_manifest.json").read_bytes())
    claims = bundle._claims((FIXTURES / "bundle_claims.json").read_bytes(), manifest)
    assert manifest.specs == ["specs/01-add/spec.toml"]
    assert manifest.files["specs/01-add/k.cu"].size == 5
    assert claims.results is not None and claims.results[0].verdict["status"] == "mismatch"
    assert claims.results[0].cases == [{"n": 1024}] and claims.results[0].seeds == 2


def test_an_old_manifest_and_claims_are_written_back_byte_for_byte() -> None:
    stored = (FIXTURES / "bundle_manifest.json").read_bytes()
    manifest = bundle._manifest(stored)
    assert bundle.manifest_bytes(manifest) == stored
    made = bundle.manifest_for({"specs/01-add/spec.toml": b"[kernel]\n",
                                "specs/01-add/k.cu": b"// k\n"}, ["specs/01-add/spec.toml"],
                               "a note", {"gpu": "H200", "driver": "560"})
    made = dataclasses.replace(made, created=manifest.created, version=manifest.version)
    assert bundle.manifest_bytes(made) == stored
    claims = (FIXTURES / "bundle_claims.json").read_bytes()
    assert bundle.claims_bytes(bundle._claims(claims, manifest)) == claims


def test_an_old_bundle_opens(tmp_path: Path) -> None:
    members = {"specs/01-add/spec.toml": b"[kernel]\n", "specs/01-add/k.cu": b"// k\n",
               bundle.CLAIMS: (FIXTURES / "bundle_claims.json").read_bytes()}
    raw = json.loads((FIXTURES / "bundle_manifest.json").read_bytes())
    raw["files"][bundle.CLAIMS] = {"sha256": bundle.sha256(members[bundle.CLAIMS]),
                                   "size": len(members[bundle.CLAIMS])}
    path = tmp_path / "old.ksb"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(bundle.MANIFEST, json.dumps(raw, indent=1))
        for name, data in members.items():
            archive.writestr(name, data)
    opened = bundle.open_bundle(path)
    assert opened.note == "a note" and opened.spec_members == ["specs/01-add/spec.toml"]
    assert opened.claims.results is not None and opened.claims.results[0].title == "add"
    assert opened.claims.environment == {"gpu": "H200"}


def test_manifest_sig_keeps_its_spelling_and_checks() -> None:
    audit.generate_key()
    key = audit.load_private_key()
    assert key is not None
    manifest = (FIXTURES / "bundle_manifest.json").read_bytes()
    signature = bundle._signature(manifest)
    public = key.public_key()
    assert signature == json.dumps({"key_id": audit.key_id(public),
                                    "public_key": audit.public_pem(public).decode(),
                                    "signature": base64.b64encode(key.sign(manifest)).decode()},
                                   indent=1).encode()
    members = {bundle.MANIFEST: manifest, bundle.SIGNATURE: signature}
    assert bundle._signer(members) == audit.key_id(public)
    unnamed = json.loads(signature)
    del unnamed["key_id"]
    with pytest.raises(bundle.BundleError, match="names another key"):
        bundle._signer({**members, bundle.SIGNATURE: json.dumps(unnamed).encode()})
    with pytest.raises(bundle.BundleError, match="not a good signature"):
        bundle._signer({**members, bundle.SIGNATURE: b'{"public_key": 5, "signature": ""}'})


def _claims_with(change: Callable[[dict[str, Any]], None]) -> bytes:
    """The stored claims with the first claim changed."""
    claims = json.loads((FIXTURES / "bundle_claims.json").read_bytes())
    change(claims["results"][0])
    return json.dumps(claims).encode()


@pytest.mark.parametrize("change, words", [
    (lambda c: c.update(seeds="many"), "result 1: seeds must be a whole number"),
    (lambda c: c.update(cases=[{"n": "many"}]), "result 1: cases[0].n must be a finite number"),
    (lambda c: c.update(cases=[3]), "result 1: cases[0] must be a table"),
    (lambda c: c.pop("spec"), "result 1 names a spec None that is not one of"),
    (lambda c: c.update(source=5), "claims.json: results[0].source: expected text, got 5"),
    (lambda c: c.update(verdict=[]), "result 1: verdict must be a table"),
])
def test_a_malformed_claim_names_its_field(change: Callable[[dict[str, Any]], None],
                                           words: str) -> None:
    manifest = bundle._manifest((FIXTURES / "bundle_manifest.json").read_bytes())
    with pytest.raises(bundle.BundleError, match=re.escape(words)):
        bundle._claims(_claims_with(change), manifest)


@pytest.mark.parametrize("field, value, words", [
    ("version", 3, "manifest.json: version: expected text, got 3"),
    ("files", {"a": {"sha256": 1, "size": 2}}, "a does not match its SHA-256"),
    ("specs", [7], "the manifest names a spec 7 that the bundle does not hold"),
    ("note", ["x"], "the manifest's note must be text"),
])
def test_a_malformed_manifest_names_its_field(field: str, value: Any, words: str) -> None:
    raw = json.loads((FIXTURES / "bundle_manifest.json").read_bytes())
    raw[field] = value
    with pytest.raises(bundle.BundleError, match=re.escape(words)):
        bundle._manifest(json.dumps(raw).encode())


def test_an_old_audit_log_checks_intact(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    shutil.copy(FIXTURES / "audit.jsonl", log)
    last = json.loads(log.read_bytes().splitlines()[-1])
    audit.head_path(log).write_text(json.dumps({"seq": last["seq"], "hash": last["hash"]}))
    check = audit.check_log(log)
    assert check.intact, check.problem
    assert (check.entries, check.unsigned) == (3, 3)
    assert check.actions == {"verify": 1, "bundle create": 1, "trust": 1}
