"""Bundles made by `bundle create` and then tampered with the way their maker could (an unsigned
bundle's maker controls claims.json, the note and the manifest's sums): each is refused with
exit 2 and one message before anything runs or is unpacked, and nothing a bundle says reaches
the terminal, a report or the audit log raw."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from review_support import VECTOR_ADD, small_copy

from app.base.paths import ROOT
from app.cli.entry import main
from app.review import audit
from app.review.bundle import CLAIMS, MANIFEST

SPEC = "specs/01-vector_add/vector_add.toml"
KERNEL = "specs/01-vector_add/vector_add.cu"
CONTROL = [chr(c) for c in [*range(0x20), *range(0x7f, 0xa0)]]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[bytes]:
    """The bytes of one real bundle of vector_add, made once (on the CPU backend)."""
    folder = tmp_path_factory.mktemp("made")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNEL_STUDIO_AUDIT_LOG", str(folder / "audit" / "audit.jsonl"))
        patch.setenv("KERNEL_STUDIO_AUDIT_KEY", str(folder / "audit"))
        spec = small_copy(VECTOR_ADD, folder)
        bundle = folder / "review.ksb"
        assert main(["bundle", "create", str(spec), "-o", str(bundle), "--backend", "cpu"]) == 0
    yield bundle.read_bytes()


@pytest.fixture
def made(pristine: bytes, tmp_path: Path) -> Path:
    """A fresh copy of the bundle for this test to tamper with."""
    path = tmp_path / "review.ksb"
    path.write_bytes(pristine)
    return path


def members(bundle: Path) -> dict[str, bytes]:
    """Every member's bytes."""
    with zipfile.ZipFile(bundle) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rewrite(bundle: Path, contents: dict[str, bytes]) -> None:
    """Write the bundle anew with these members, every sum in the manifest recomputed and every
    member listed (as a tamperer who knows the format would)."""
    manifest = json.loads(contents[MANIFEST])
    manifest["files"] = {name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                         for name, data in contents.items() if name != MANIFEST}
    contents = {**contents, MANIFEST: json.dumps(manifest).encode()}
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)


def tamper_claims(bundle: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the first claim of claims.json (the sums redone)."""
    contents = members(bundle)
    claims = json.loads(contents[CLAIMS])
    change(claims["results"][0])
    rewrite(bundle, {**contents, CLAIMS: json.dumps(claims).encode()})


def verify(capsys: pytest.CaptureFixture[str], bundle: Path, *extra: str,
           json_out: bool = True) -> tuple[int, str, str]:
    """`kernel-studio bundle verify`: exit code, stdout, stderr (a traceback fails the test)."""
    code = main(["bundle", "verify", str(bundle), "--backend", "cpu", "--no-timing",
                 *(["--json"] if json_out else []), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(capsys: pytest.CaptureFixture[str], bundle: Path, tmp_path: Path,
            words: str) -> str:
    """Verify with --into: exit 2, one line on stderr with `words`, nothing unpacked."""
    into = tmp_path / "unpacked"
    code, out, err = verify(capsys, bundle, "--into", str(into))
    assert code == 2, err
    assert out == "" and "refused" in err and words in err, err
    assert err.count("\n") == 1 and not into.exists()
    return err


@pytest.mark.parametrize("spec", [
    "../../../../../../.." + str(ROOT / "resources/kernels/vector_add/vector_add.toml"),
    "../" + SPEC,
    str(ROOT / "resources/kernels/vector_add/vector_add.toml"),
    KERNEL,  # a member, but not one of the bundle's specs
    "specs/01-vector_add/nothing.toml",
    42,
])
def test_a_claim_may_only_name_one_of_the_bundles_own_specs(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: Any) -> None:
    """A claim pointing at the reviewer's own copy of a spec (with the bundle's kernel broken)
    would have made "claims hold": refused before anything runs."""
    contents = members(made)
    rewrite(made, {**contents, KERNEL: contents[KERNEL].replace(b"+", b"-")})
    tamper_claims(made, lambda claim: claim.update(spec=spec))
    refused(capsys, made, tmp_path, "not one of the bundle's own specs")


@pytest.mark.parametrize("field, value, words", [
    ("seeds", 100000, "seeds must be a whole number from 1 to 1000"),
    ("seeds", "3", "seeds must be a whole number"),
    ("seeds", True, "seeds must be a whole number"),
    ("seeds", 0, "seeds must be a whole number"),
    ("cases", [1, 2], "must be a table"),
    ("cases", [], "cases must be a list of 1 to"),
    ("cases", {"n": 5}, "cases must be a list"),
    ("cases", [{"n": "many"}], "must be a finite number"),
    ("cases", [{"n": float("inf")}], "must be a finite number"),
    ("cases", [{"n": 2 ** 90}], "must be a finite number"),
    ("cases", [{"bad name": 4}], "not a name"),
    ("cases", [{"n": 64, "m": 3}], "a variable 'm' that the spec does not know"),
    ("cases", [{"k": 3}], "a variable 'k'"),
    ("verdict", [], "verdict must be a table"),
    ("compile", "x", "compile must be a table"),
    ("timing", {"rows": [1]}, "timing.rows must be a list of tables"),
    ("name", "", "has a name that is not text"),
    ("name", "x" * 201, "has a name that is not text of 1 to 200"),
    ("name", ["x"], "has a name that is not text"),
])
def test_claimed_fields_are_checked_like_a_specs(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any,
        words: str) -> None:
    """Cases, seeds and the rest of a claim: exit 2 naming what is wrong, never a traceback or
    minutes of runs."""
    tamper_claims(made, lambda claim: claim.update({field: value}))
    refused(capsys, made, tmp_path, words)


def test_claimed_timing_of_the_wrong_type_is_no_traceback(
        made: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A claimed median that is not a number is simply not compared."""
    tamper_claims(made, lambda claim: claim.update(
        timing={"rows": [{"case": {"n": 1}, "median_ms": "fast"}]}))
    code, out, err = verify(capsys, made)
    assert code in (0, 3), err
    assert json.loads(out)["specs"][0]["name"] == "vector_add"


def _hostile_text() -> str:
    """Text that would erase the line and print a forged verdict on a terminal."""
    return "ok\x1b[2K\r\x1b[1Aclaims hold\x07\x9b2J\x7f\n"


def _note(bundle: Path, note: str) -> None:
    """Set the manifest's note (the bundle stays unsigned)."""
    contents = members(bundle)
    manifest = json.loads(contents[MANIFEST])
    manifest["note"] = note
    rewrite(bundle, {**contents, MANIFEST: json.dumps(manifest).encode()})


def test_control_characters_from_a_bundle_never_reach_the_terminal_or_report(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note, a claim's name and a claimed status carry escape sequences: they are printed
    and reported escaped (\\x1b), and the real outcome still shows."""
    _note(made, _hostile_text())
    tamper_claims(made, lambda claim: (claim.update(name="va" + _hostile_text()),
                                       claim["verdict"].update(status=_hostile_text())))
    report = tmp_path / "check.html"
    code, out, err = verify(capsys, made, "--report", str(report), json_out=False)
    assert code == 1, err
    assert not any(c in out for c in CONTROL if c != "\n"), out
    assert not any(c in line for line in out.splitlines() for c in CONTROL)
    assert "\\x1b[2K" in out and "CLAIMS DIFFER" in out and "\\x9b2J" in out
    html = report.read_text()
    assert not any(c in html for c in CONTROL if c not in "\n\t")
    assert "\\x1b[2K" in html


@pytest.mark.parametrize("where", ["note", "name"])
def test_an_overlong_note_or_name_is_refused_and_the_audit_log_survives(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], audit_log: Path,
        where: str) -> None:
    """A 1.2 MB claim name (or an 11 000-character note) is refused; the refusal's entry is
    short, and the log still verifies for every later command."""
    if where == "note":
        _note(made, "n" * 11_000)
        words = "note must be text of at most 10000"
    else:
        tamper_claims(made, lambda claim: claim.update(name=os.urandom(600_000).hex()))
        words = "has a name that is not text of 1 to 200"
    refused(capsys, made, tmp_path, words)
    assert audit_log.stat().st_size < 4000
    assert audit.check_log(audit_log).intact


def _patch_headers(data: bytes, name: str, local: int, central: int, fmt: str,
                   value: int) -> bytes:
    """Set a field of `name`'s local header and central directory entry (by offset) in raw
    zip bytes, as a hand-made archive would have it."""
    out = bytearray(data)
    raw = name.encode()
    for signature, offset, name_at, length_at in ((b"PK\x03\x04", local, 30, 26),
                                                  (b"PK\x01\x02", central, 46, 28)):
        start = out.find(signature)
        while start != -1:
            (length,) = struct.unpack_from("<H", out, start + length_at)
            if bytes(out[start + name_at:start + name_at + length]) == raw:
                struct.pack_into(fmt, out, start + offset, value)
            start = out.find(signature, start + 4)
    return bytes(out)


def _stored(bundle: Path) -> None:
    """The bundle written again with every member stored, not deflated."""
    contents = members(bundle)
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_STORED) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)


@pytest.mark.parametrize("field, local, central, fmt, value, words", [
    ("encrypted", 6, 8, "<H", 0x1, "is encrypted"),
    ("method", 8, 10, "<H", 99, "compression method 99"),
])
def test_encrypted_or_oddly_compressed_members_are_refused(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
        local: int, central: int, fmt: str, value: int, words: str) -> None:
    """A member marked encrypted, or compressed some way zipfile cannot read: exit 2."""
    _stored(made)
    made.write_bytes(_patch_headers(made.read_bytes(), KERNEL, local, central, fmt, value))
    refused(capsys, made, tmp_path, words)
    assert main(["review", "decide", str(made), "--accept", "--note", "x"]) == 2


@pytest.mark.parametrize("extra, words", [
    (KERNEL + "/inner.py", "is both a file and a folder"),
    ("specs/01-vector_add/VECTOR_ADD.cu", "differ only in case"),
    ("specs/01-vector_add/x.py ", "characters that a file name here should not have"),
    ("specs/01-vector_add/ x.py", "characters that a file name here should not have"),
    ("specs/01-vector_add/x\x1b[2K.py", "characters that a file name here should not have"),
    ("specs/01-vector_add/x\u200b.py", "characters that a file name here should not have"),
])
def test_clashing_or_odd_member_names_are_refused_before_unpacking(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str,
        words: str) -> None:
    """Listed in the manifest with their right sums, still refused: nothing is half-unpacked,
    and review decide accepts no such bundle."""
    rewrite(made, {**members(made), extra: b"x = 1\n"})
    err = refused(capsys, made, tmp_path, words)
    assert "\x1b" not in err
    assert main(["review", "decide", str(made), "--accept", "--note", "looks fine"]) == 2
    assert "\x1b" not in capsys.readouterr().err


def test_unpacking_where_no_folder_can_be_made_is_exit_2(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--into below a file: one message, nothing made."""
    blocker = tmp_path / "a_file"
    blocker.write_text("mine")
    code, out, err = verify(capsys, made, "--into", str(blocker / "sub"))
    assert code == 2 and out == "" and "cannot unpack into" in err
    assert blocker.read_text() == "mine"


@pytest.mark.parametrize("kind", ["zero", "fifo", "folder", "big", "text"])
def test_key_is_read_with_a_bound(made: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """--key /dev/zero, a FIFO, a folder, a huge file, or not a key: exit 2 at once."""
    key = {"zero": Path("/dev/zero"), "fifo": tmp_path / "fifo", "folder": tmp_path,
           "big": tmp_path / "big.pem", "text": tmp_path / "text.pem"}[kind]
    if kind == "fifo":
        os.mkfifo(key)
    elif kind == "big":
        key.write_bytes(b"A" * (1 << 20))
    elif kind == "text":
        key.write_text("not a key\n")
    into = tmp_path / "unpacked"
    code, _, err = verify(capsys, made, "--key", str(key), "--into", str(into))
    assert code == 2 and "--key" in err and not into.exists()


def test_a_refusal_is_recorded_as_bad_input(
        made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        audit_log: Path) -> None:
    """Every bundle verify leaves an entry, a refused one too: short, outcome bad_input."""
    tamper_claims(made, lambda claim: claim.update(seeds=100000, name="x\x1b[2K" * 30))
    refused(capsys, made, tmp_path, "seeds")
    entries = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert [(e["action"], e["outcome"]) for e in entries] == [("bundle-verify", "bad_input")]
    assert "seeds" in entries[0]["details"]["refused"]
    assert len(json.dumps(entries[0])) < 2000
    assert audit.check_log(audit_log).intact


def test_a_closed_stdout_is_no_traceback(made: Path, tmp_path: Path) -> None:
    """`bundle verify ... | head -0`: the reader is gone before anything is printed."""
    env = {**os.environ, "KERNEL_STUDIO_AUDIT_LOG": str(tmp_path / "a" / "audit.jsonl"),
           "KERNEL_STUDIO_AUDIT_KEY": str(tmp_path / "a")}
    process = subprocess.Popen([sys.executable, "-m", "app", "bundle", "verify", str(made),
                                "--backend", "cpu", "--no-timing"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=240) in (0, 3)
    assert "Traceback" not in err and "BrokenPipe" not in err
