"""The audit log against hostile or damaged input: huge entries, malformed fields in the last
entry, a deleted or stale head file, and key paths that name a device or a FIFO. Recording
never fails a command; `audit verify` reports, never crashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.base.paths import ROOT
from app.cli.entry import main
from app.review import audit


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`kernel-studio ...`: exit code and output (stdout and stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def hand_written(log: Path, details: list[dict[str, object]]) -> None:
    """A chained log (and head) written as an older kernel-studio would, with unbounded
    details."""
    prev, lines = audit.GENESIS, []
    for seq, detail in enumerate(details):
        entry = {"seq": seq, "time": "2024-01-01T00:00:00+0000", "user": "u", "host": "h",
                 "action": "decision", "subject": {}, "outcome": "accepted",
                 "details": detail, "prev": prev}
        entry["hash"] = audit.entry_hash(entry)
        prev = entry["hash"]
        lines.append(audit.canonical(entry))
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"\n".join(lines) + b"\n")
    audit.head_path(log).write_text(json.dumps({"seq": len(details) - 1, "hash": prev}))


def recording_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[int, str]:
    """A recorded command that needs no kernel: `verify` of a spec that is not there (exit 2)."""
    return run_cli(capsys, "verify", str(tmp_path / "absent.toml"), "--backend", "cpu")


# -- 1: huge entries ------------------------------------------------------------------------


def test_a_huge_note_is_cut_with_a_marker_and_the_log_goes_on(
        audit_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 3 MB note and a subject of 100000 files: the entry stays under MAX_ENTRY, says what
    was cut, and later appends and verify see an intact chain."""
    entry = audit.append("decision", {"bundle": "b.ksb"}, "accepted", {"note": "x" * 3_000_000})
    assert entry is not None and "more characters cut" in entry["details"]["note"]
    files = {f"f{n}.cu": "0" * 64 for n in range(100_000)}
    entry = audit.append("compare", {"digest": "d" * 64, "files": files}, "passed")
    assert entry is not None and entry["subject"]["digest"] == "d" * 64
    assert "cut" in entry["subject"] and "files" not in entry["subject"]
    assert all(len(line) < audit.MAX_ENTRY for line in audit_log.read_bytes().splitlines())
    assert audit.append("verify", {}, "passed") is not None
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 0 and "intact, 3 entries" in out


def test_an_old_entry_over_a_mebibyte_still_chains_on(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 2 MiB last entry written before entries were bounded: appends read it whole (no
    'last line is not an entry', no 'not recorded'), and verify agrees the chain is intact."""
    hand_written(audit_log, [{"note": "a"}, {"note": "y" * (2 << 20)}])
    code, out = recording_command(capsys, tmp_path)
    assert code == 2 and "not recorded" not in out
    entry = audit.append("decision", {}, "rejected")
    assert entry is not None and entry["seq"] == 3
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 0 and "intact, 4 entries" in out


def test_a_last_line_past_the_limit_is_refused_alike_by_append_and_verify(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Past MAX_LINE the append refuses (a warning, the command's own exit code kept) and
    verify names the same entry as broken: neither says the other is fine."""
    hand_written(audit_log, [{"note": "a"}, {"note": "z" * (audit.MAX_LINE + 10)}])
    code, out = recording_command(capsys, tmp_path)
    assert code == 2 and "warning: not recorded in the audit log" in out
    assert "longer than" in out and "Traceback" not in out
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "entry 1:" in out and "longer than" in out


def test_text_no_utf8_can_hold_is_escaped(audit_log: Path) -> None:
    """A note with a lone surrogate (a non-UTF-8 command-line argument) is recorded."""
    entry = audit.append("decision", {"bundle": "\udcff.ksb"}, "accepted", {"note": "\ud800"})
    assert entry is not None and audit.check_log(audit_log).intact


# -- 2: malformed fields in the last entry --------------------------------------------------


@pytest.mark.parametrize("bad_seq", ['"abc"', "[1]", "1e400", "true", "-1", "1.0",
                                     "9" * 5000, "[" * 100000 + "]" * 100000])
def test_a_malformed_last_entry_warns_and_keeps_the_exit_code(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        bad_seq: str) -> None:
    """The last entry's seq edited to a string, list, huge float, bool, negative, float, huge
    int or deeply nested list: a recording command keeps its exit code with a warning, a
    direct append raises AuditError (which `review decide` reports), and verify says exit 1
    naming the entry (or 2 when no line is an entry at all)."""
    for _ in range(3):
        audit.append("verify", {}, "passed")
    lines = audit_log.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1].replace('"seq":2', f'"seq":{bad_seq}', 1)
    audit_log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = recording_command(capsys, tmp_path)
    assert code == 2 and "warning: not recorded in the audit log" in out
    assert "Traceback" not in out
    with pytest.raises(audit.AuditError, match="last line is not an entry"):
        audit.append("decision", {}, "accepted")
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "TAMPERED: entry 2:" in out, out


@pytest.mark.parametrize("field, value", [("hash", "[1]"), ("prev", "7"), ("action", "{}")])
def test_other_fields_of_the_wrong_kind_are_broken_entries(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
        value: str) -> None:
    """A hash, prev or action that is not a string: a warning for the recorder, exit 1."""
    for _ in range(2):
        audit.append("verify", {}, "passed")
    lines = audit_log.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[-1])
    entry[field] = json.loads(value)
    lines[-1] = json.dumps(entry)
    audit_log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = recording_command(capsys, tmp_path)
    assert code == 2 and "warning: not recorded" in out
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "entry 1:" in out and "Traceback" not in out


# -- 3: the head file -----------------------------------------------------------------------


def test_a_deleted_head_is_reported(audit_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cut hidden by deleting the head: exit 1, saying the head is missing and why it
    matters; export refuses too."""
    for _ in range(5):
        audit.append("verify", {}, "passed")
    lines = audit_log.read_text(encoding="utf-8").splitlines()
    audit_log.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    audit.head_path(audit_log).unlink()
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "head file audit.jsonl.head is missing" in out
    assert "cut from the end" in out


def test_entries_past_the_head_are_flagged(audit_log: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Five entries, the head saved; two more appended and the old head put back: exit 1
    naming entry 5, not 'intact, 7 entries'."""
    for _ in range(5):
        audit.append("verify", {}, "passed")
    head = audit.head_path(audit_log).read_bytes()
    for _ in range(2):
        audit.append("verify", {}, "passed")
    audit.head_path(audit_log).write_bytes(head)
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "TAMPERED: entry 5:" in out and "2 entries were added" in out


def test_a_head_that_points_at_another_entry_is_flagged(
        audit_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A head whose hash is not its entry's: exit 1."""
    for _ in range(3):
        audit.append("verify", {}, "passed")
    audit.head_path(audit_log).write_text(json.dumps({"seq": 1, "hash": "f" * 64}))
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "entry 1 is not the one the head file records" in out


@pytest.mark.parametrize("head", ['{"seq": "abc", "hash": "x"}', "[1]", "not json", ""])
def test_a_damaged_head_is_reported(audit_log: Path, capsys: pytest.CaptureFixture[str],
                                    head: str) -> None:
    """A head file that is no head: exit 1, no traceback."""
    audit.append("verify", {}, "passed")
    audit.head_path(audit_log).write_text(head)
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "cannot be read" in out


# -- 4: key paths that never end ------------------------------------------------------------


def test_a_device_as_the_key_is_exit_2(audit_log: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--key /dev/zero: exit 2 at once, 'not a regular file'."""
    audit.append("verify", {}, "passed")
    code, out = run_cli(capsys, "audit", "verify", str(audit_log), "--key", "/dev/zero")
    assert code == 2 and "not a regular file" in out


def test_a_fifo_as_the_key_or_the_signing_key_does_not_hang(audit_log: Path,
                                                            tmp_path: Path) -> None:
    """--key FIFO: exit 2; a FIFO where the signing key belongs: the command warns and keeps
    its exit code (both in a child process, so that a hang fails instead of stalling)."""
    audit.append("verify", {}, "passed")
    fifo = tmp_path / "key.pub"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "app.cli.entry", "audit", "verify", str(audit_log),
                           "--key", str(fifo)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "not a regular file" in done.stderr
    os.mkfifo(audit_log.parent / "signing-key.pem")
    done = subprocess.run([sys.executable, "-m", "app.cli.entry", "verify",
                           str(tmp_path / "absent.toml"), "--backend", "cpu"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "warning: not recorded in the audit log" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_append_does_not_paper_over_a_cut_or_a_deleted_head(
        audit_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After a cut at the end, or with the head deleted, a recording command warns instead of
    rewriting the head (which would make the cut look intact); verify still reports it."""
    for _ in range(5):
        audit.append("verify", {}, "passed")
    lines = audit_log.read_text(encoding="utf-8").splitlines()
    audit_log.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    code, out = recording_command(capsys, tmp_path)
    assert code == 2 and "warning: not recorded" in out and "head file" in out
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "2 entries were cut from the end" in out
    audit.head_path(audit_log).unlink()
    code, out = recording_command(capsys, tmp_path)
    assert code == 2 and "is missing" in out
    code, out = run_cli(capsys, "audit", "verify", str(audit_log))
    assert code == 1 and "is missing" in out


def test_show_marks_a_malformed_entry(audit_log: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`audit show` lists good entries and says what is wrong with a malformed one."""
    for _ in range(2):
        audit.append("verify", {}, "passed")
    lines = audit_log.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1].replace('"seq":1', '"seq":"abc"', 1)
    audit_log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = run_cli(capsys, "audit", "show")
    assert code == 0 and "verify: passed" in out and "(not an entry: its number (seq)" in out
