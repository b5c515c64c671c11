"""A review bundle's day (issue 25, point 11): made with the CLI by one person, checked in
another folder by a reviewer in the window, its sources read and diffed against a local copy,
the decision recorded from the window, and the audit log verified by `kernel-studio audit
verify`. Real CLI processes, real window, CPU backend."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.base.paths import RESOURCES
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kernel-studio ARGS as a person runs it (the test's data folder and audit log)."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ), timeout=300, check=False)


def test_make_check_read_diff_decide_and_verify_the_audit_log(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    maker = tmp_path / "maker" / "vector_add"
    shutil.copytree(RESOURCES / "kernels" / "vector_add", maker)
    spec = maker / "vector_add.toml"
    spec.write_text(re.sub(r"^seeds = .*$", "cases = [{ n = 1 }, { n = 1025 }]\nseeds = 1",
                           re.sub(r"^cases = .*$", "", spec.read_text(), flags=re.MULTILINE),
                           flags=re.MULTILINE))
    made = cli("bundle", "create", str(spec), "-o", str(tmp_path / "maker" / "review.ksb"),
               "--backend", "cpu")
    assert made.returncode == 0, made.stderr
    reviewer = tmp_path / "reviewer"
    reviewer.mkdir()
    bundle = reviewer / "review.ksb"
    shutil.copy2(tmp_path / "maker" / "review.ksb", bundle)

    page = window.review_pane.bundle
    window.prompter.open_paths = [str(bundle)]
    window.actions_by_name["open_bundle"].trigger()
    qtbot.waitUntil(lambda: page.check is not None, timeout=180_000)
    assert page.check is not None and page.check.claims_hold
    names = [page.sources.item(i).text() for i in range(page.sources.count())]
    kernel = next(n for n in names if n.endswith("vector_add.cu"))
    page.sources.setCurrentRow(names.index(kernel))
    assert "__global__" in page.source_text.toPlainText()

    local = reviewer / "vector_add.cu"
    local.write_text((maker / "vector_add.cu").read_text())
    window.prompter.open_paths = [str(local)]
    page.diff_button.click()
    assert "the local copy is the same" in page.source_text.toPlainText()
    local.write_text(local.read_text().replace("a[i] + b[i]", "a[i] - b[i]"))
    page.diff_button.click()
    diff = page.source_text.toPlainText()
    assert "-" in diff and "a[i] - b[i]" in diff and "+" in diff

    page.accept_button.click()  # no note yet: asked for one, nothing recorded
    assert "Say why" in page.decision.text()
    page.note.setText("read the kernel and its spec; claims hold here")
    page.accept_button.click()
    assert page.decision.text().startswith("Accepted: audit entry")

    checked = cli("audit", "verify", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    exported = cli("audit", "export", str(tmp_path / "audit.jsonl"))
    assert exported.returncode == 0, exported.stderr
    entries = [json.loads(line) for line in
               (tmp_path / "audit.jsonl").read_text().splitlines() if line.strip()]
    decision = [e for e in entries if e.get("action") == "decision"][-1]
    assert decision["outcome"] == "accepted" and decision["subject"]["bundle"] == str(bundle)
