"""The doctor says "ready" only when some backend can verify a kernel here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest


def _doctor(**env: str) -> tuple[int, dict[str, object], str]:
    """Run `kernel-studio doctor` (JSON and text) with extra environment variables."""
    environment = {**os.environ, **env}
    command = [sys.executable, "-m", "app", "doctor"]
    data = subprocess.run([*command, "--json"], capture_output=True, text=True, env=environment)
    text = subprocess.run(command, capture_output=True, text=True, env=environment)
    return data.returncode, json.loads(data.stdout), text.stdout


def _backend(report: dict[str, object]) -> dict[str, object]:
    """The backend line of a JSON report."""
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == "backend")


def test_without_a_compiler_or_gpu_it_is_not_ready_and_says_what_to_install() -> None:
    if shutil.which("nvidia-smi"):
        pytest.skip("a GPU machine can verify without the host compiler")
    code, report, text = _doctor(KERNEL_STUDIO_CXX="/nonexistent/g++")
    assert code == 1 and report["can_run"] is False
    backend = _backend(report)
    assert backend["ok"] is False and "install g++" in str(backend["note"])
    assert "ready" not in text.splitlines()[-1] and "missing backend" in text


def test_with_a_compiler_the_cpu_backend_makes_it_ready() -> None:
    if not shutil.which("g++"):
        pytest.skip("no g++ on this machine")
    code, report, text = _doctor()
    assert code == 0 and report["can_run"] is True
    assert _backend(report)["value"] in ("cpu (emulator)", "pycuda (GPU)")
    assert text.splitlines()[-1].startswith("ready")
