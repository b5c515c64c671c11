"""Review files written by earlier code still read and write back the same (issue 24's codec
work): a compare report and a bundle check as `--json` printed them, a bundle's manifest and
claims, and an audit log (tests/fixtures/codec, written by make_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
    claims = json.loads((FIXTURES / "bundle_claims.json").read_bytes())
    bundle._check_claims(claims, manifest)
    assert manifest["specs"] == ["specs/01-add/spec.toml"]
    assert claims["results"][0]["verdict"]["status"] == "mismatch"


def test_a_malformed_claim_names_its_field() -> None:
    manifest = bundle._manifest((FIXTURES / "bundle_manifest.json").read_bytes())
    claims = json.loads((FIXTURES / "bundle_claims.json").read_bytes())
    claims["results"][0]["seeds"] = "many"
    with pytest.raises(bundle.BundleError, match="result 1: seeds must be a whole number"):
        bundle._check_claims(claims, manifest)


def test_an_old_audit_log_checks_intact(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    shutil.copy(FIXTURES / "audit.jsonl", log)
    last = json.loads(log.read_bytes().splitlines()[-1])
    audit.head_path(log).write_text(json.dumps({"seq": last["seq"], "hash": last["hash"]}))
    check = audit.check_log(log)
    assert check.intact, check.problem
    assert (check.entries, check.unsigned) == (3, 3)
    assert check.actions == {"verify": 1, "bundle create": 1, "trust": 1}
