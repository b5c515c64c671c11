"""Review bundles through the real CLI: a round trip to another folder with the same verdicts,
and every kind of bad bundle refused before anything runs (exit 2, one message, nothing written
outside the chosen folder)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from app.base.paths import ROOT
from app.cli.entry import main
from app.review import audit
from app.review.bundle import MANIFEST, SIGNATURE


def create(bundle: Path, *specs: Path, note: str = "") -> int:
    """`kernel-studio bundle create` on the CPU backend."""
    return main(["bundle", "create", *map(str, specs), "-o", str(bundle), "--backend", "cpu",
                 "--note", note])


def verify(capsys: pytest.CaptureFixture[str], bundle: Path,
           *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    """`kernel-studio bundle verify --json`: exit code, result (None when refused), stderr."""
    code = main(["bundle", "verify", str(bundle), "--backend", "cpu", "--json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else None, captured.err


def members(bundle: Path) -> dict[str, bytes]:
    """Every member's bytes."""
    with zipfile.ZipFile(bundle) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rewrite(bundle: Path, contents: dict[str, bytes], infos: list[zipfile.ZipInfo] = (),
            resum: bool = False) -> None:
    """Write the bundle anew with these members (and raw entries); `resum` recomputes the
    manifest's sums, as a tamperer who knows the format would."""
    contents = dict(contents)
    if resum:
        manifest = json.loads(contents[MANIFEST])
        for name in manifest["files"]:
            if name in contents:
                manifest["files"][name]["sha256"] = hashlib.sha256(contents[name]).hexdigest()
        contents[MANIFEST] = json.dumps(manifest).encode()
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
        for info in infos:
            archive.writestr(info, b"x")


@pytest.fixture
def made(variants: dict[str, Path], tmp_path: Path) -> Path:
    """A bundle of vector_add (including a local header) and the broken off_by_one."""
    spec = variants["vector_add"]
    (spec.parent / "common.cuh").write_text("#define KS_ADD(x, y) ((x) + (y))\n")
    source = spec.parent / "vector_add.cu"
    source.write_text('#include "common.cuh"\n' + source.read_text())
    bundle = tmp_path / "out" / "review.ksb"
    bundle.parent.mkdir()
    assert create(bundle, spec, variants["off_by_one"], note="two kernels for review") == 0
    return bundle


def test_a_round_trip_to_another_folder_gets_the_same_verdicts(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], audit_log: Path) -> None:
    """Unpacked elsewhere and re-run, every claim holds; the broken kernel still fails."""
    names = set(members(made))
    assert {"manifest.json", "claims.json", "specs/01-vector_add/common.cuh",
            "specs/01-vector_add/vector_add.cu", "specs/02-off_by_one/off_by_one_ref.py"} <= names
    elsewhere = tmp_path / "reviewer" / "unpacked"
    code, result, _ = verify(capsys, made, "--into", str(elsewhere))
    assert result is not None and result["claims_hold"] is True
    assert code == 1  # off_by_one fails, as claimed
    statuses = {s["name"]: (s["claimed_status"], s["obtained"]["verdict"]["status"])
                for s in result["specs"]}
    assert statuses == {"vector_add": ("passed", "passed"),
                        "off_by_one": ("guard_zone", "guard_zone")}
    assert (elsewhere / "specs" / "01-vector_add" / "common.cuh").is_file()
    assert result["note"] == "two kernels for review"
    actions = audit.check_log(audit_log).actions
    assert actions == {"bundle-create": 1, "bundle-verify": 1}


def test_edited_claims_are_flagged_as_differences(
        made: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A claim changed (with the manifest's sums redone, so the bundle opens) is caught by
    re-running: the difference is flagged and the exit code is 1."""
    contents = members(made)
    claims = json.loads(contents["claims.json"])
    claims["results"][1]["verdict"]["status"] = "passed"
    contents["claims.json"] = json.dumps(claims).encode()
    rewrite(made, contents, resum=True)
    code, result, _ = verify(capsys, made)
    assert code == 1 and result is not None and result["claims_hold"] is False
    differing = [i for s in result["specs"] for i in s["items"] if i["differs"]]
    assert differing[0]["what"] == "verdict" and differing[0]["claimed"] == "passed"


def _changed_kernel(contents: dict[str, bytes]) -> dict[str, bytes]:
    """The kernel's bytes changed, the manifest left alone."""
    name = "specs/01-vector_add/vector_add.cu"
    return {**contents, name: contents[name].replace(b"+", b"-")}


def _symlink(contents: dict[str, bytes]) -> tuple[dict[str, bytes], list[zipfile.ZipInfo]]:
    """A symbolic link member."""
    info = zipfile.ZipInfo("specs/01-vector_add/link.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return contents, [info]


def _named(name: str) -> Any:
    """A member of this name, listed in the manifest with its right sum."""
    def change(contents: dict[str, bytes]) -> dict[str, bytes]:
        data = b"import os\n"
        manifest = json.loads(contents[MANIFEST])
        manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        return {**contents, MANIFEST: json.dumps(manifest).encode(), name: data}
    return change


@pytest.mark.parametrize("change, words", [
    (_changed_kernel, "does not match its SHA-256 in the manifest"),
    (lambda c: {**c, "specs/01-vector_add/extra.py": b"x = 1\n"}, "not in its manifest"),
    (lambda c: {k: v for k, v in c.items() if not k.endswith("vector_add_ref.py")},
     "missing from the bundle"),
    (_named("../evil.py"), "climbs out of the bundle"),
    (_named("specs/../../evil.py"), "climbs out of the bundle"),
    (_named("/tmp/evil.py"), "an absolute or foreign path"),
    (lambda c: {**c, "specs/01-vector_add/big.bin": bytes(8 << 20)}, "zip bomb"),
    (lambda c: {k: v for k, v in c.items() if k != MANIFEST}, "has no manifest.json"),
    (lambda c: {**c, MANIFEST: b"{not json"}, "manifest.json is not JSON"),
])
def test_a_bad_bundle_is_refused_before_anything_runs(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any,
        words: str) -> None:
    """Tampered, incomplete, escaping or bomb-like bundles: exit 2 with one message, and the
    folder it was to unpack into is never made."""
    rewrite(made, change(members(made)))
    into = tmp_path / "never"
    code, result, err = verify(capsys, made, "--into", str(into))
    assert code == 2 and result is None
    assert "refused" in err and words in err and err.count("\n") == 1
    assert not into.exists() and not (tmp_path / "evil.py").exists()
    assert not Path("/tmp/evil.py").exists()


def test_unpacking_only_into_a_new_or_empty_folder(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--into a folder that holds files: refused, and its files are left alone."""
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("keep")
    code, _, err = verify(capsys, made, "--into", str(busy))
    assert code == 2 and "is not an empty folder" in err
    assert [p.name for p in busy.iterdir()] == ["mine.txt"]


def test_a_link_member_is_refused(made: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A member that is a symbolic link never reaches the disk."""
    contents, infos = _symlink(members(made))
    rewrite(made, contents, infos)
    code, _, err = verify(capsys, made)
    assert code == 2 and "is not a plain file" in err


@pytest.mark.parametrize("content", [b"", b"just some text\n", b"PK\x03\x04 broken"])
def test_a_file_that_is_not_a_bundle_is_exit_2(tmp_path: Path, content: bytes,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Empty, text, or a zip header with nothing behind it."""
    path = tmp_path / "x.ksb"
    path.write_bytes(content)
    code, _, err = verify(capsys, path)
    assert code == 2 and "is not a review bundle" in err


def test_a_truncated_bundle_is_refused(made: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first half of a good bundle."""
    data = made.read_bytes()
    made.write_bytes(data[: len(data) // 2])
    code, _, err = verify(capsys, made)
    assert code == 2 and "truncated" in err


def test_a_signed_bundle_whose_manifest_was_redone_is_refused(
        variants: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With a key, the manifest is signed; a tamperer who recomputes the sums cannot sign."""
    assert main(["audit", "keygen"]) == 0
    bundle = tmp_path / "signed.ksb"
    assert create(bundle, variants["vector_add"]) == 0
    assert "signed" in capsys.readouterr().out
    contents = members(bundle)
    assert SIGNATURE in contents
    rewrite(bundle, _changed_kernel(contents), resum=True)
    code, _, err = verify(capsys, bundle)
    assert code == 2 and "manifest.sig is not a good signature" in err


def test_key_requires_the_makers_signature(variants: dict[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """--key PUB: a bundle signed by that key is checked; unsigned or signed by another key,
    it is refused before anything runs."""
    unsigned = tmp_path / "unsigned.ksb"
    assert create(unsigned, variants["vector_add"]) == 0
    assert main(["audit", "keygen"]) == 0
    signed = tmp_path / "signed.ksb"
    assert create(signed, variants["vector_add"]) == 0
    _, public = audit.key_paths()
    capsys.readouterr()
    code, result, _ = verify(capsys, signed, "--key", str(public))
    assert code == 0 and result is not None and result["signed_by"]
    code, _, err = verify(capsys, unsigned, "--key", str(public))
    assert code == 2 and "it is not signed at all" in err
    assert main(["audit", "keygen", "--force"]) == 0
    capsys.readouterr()
    code, _, err = verify(capsys, signed, "--key", str(public))
    assert code == 2 and "the bundle must be signed by key" in err


def test_bundled_references_never_run_outside_the_sandbox(
        variants: dict[str, Path], tmp_path: Path) -> None:
    """A bundled reference that would leave a mark outside its scratch folder: with no sandbox
    and no trust it is not run at all (unverified, exit 3), and no mark appears."""
    spec = variants["vector_add"]
    marker = tmp_path / "reference-ran"
    reference = spec.parent / "vector_add_ref.py"
    reference.write_text(f"from pathlib import Path\ntry:\n    Path({str(marker)!r}).touch()\n"
                         f"except OSError:\n    pass\n" + reference.read_text())
    bundle = tmp_path / "marked.ksb"
    assert create(bundle, spec) == 0
    assert not marker.exists()  # made inside the sandbox: the write was refused there
    env = {**os.environ, "KERNEL_STUDIO_SANDBOX": "none"}
    done = subprocess.run([sys.executable, "-m", "app", "bundle", "verify", str(bundle),
                           "--backend", "cpu", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    verdict = result["specs"][0]["obtained"]["verdict"]
    assert verdict["status"] == "unverified" and "not trusted" in verdict["message"]
    assert not marker.exists()


def test_bad_create_usage_is_exit_2(variants: dict[str, Path], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong suffix, a missing folder, an existing file, a bad spec."""
    spec = str(variants["vector_add"])
    existing = tmp_path / "there.ksb"
    existing.write_bytes(b"keep me")
    cases = [([spec, "-o", str(tmp_path / "x.zip")], "name a .ksb file"),
             ([spec, "-o", str(tmp_path / "no" / "x.ksb")], "does not exist"),
             ([spec, "-o", str(existing)], "give --force"),
             ([str(tmp_path / "none.toml"), "-o", str(tmp_path / "y.ksb")], "none.toml")]
    for argv, words in cases:
        assert main(["bundle", "create", *argv]) == 2
        assert words in capsys.readouterr().err
    assert existing.read_bytes() == b"keep me"


def test_a_decision_is_recorded_signed_with_the_bundle_digest(
        made: Path, audit_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """review decide --accept: a signed entry naming the manifest's digest; a tampered bundle
    gets no decision."""
    assert main(["audit", "keygen"]) == 0
    assert main(["review", "decide", str(made), "--accept", "--note", "checked twice"]) == 0
    entry = json.loads(audit_log.read_text().splitlines()[-1])
    digest = hashlib.sha256(members(made)[MANIFEST]).hexdigest()
    assert entry["action"] == "decision" and entry["outcome"] == "accepted"
    assert entry["subject"]["digest"] == digest and "signature" in entry
    assert main(["review", "reject", str(made), "--note", "  "]) == 2
    rewrite(made, _changed_kernel(members(made)))
    capsys.readouterr()
    assert main(["review", "decide", str(made), "--reject", "--note", "tampered"]) == 2
    assert "does not match its SHA-256" in capsys.readouterr().err
    _, public = audit.key_paths()
    assert audit.check_log(audit_log, audit.load_public_key(public)).intact
