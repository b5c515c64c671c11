"""Paths a user gives that name no regular file: /dev/zero never ends (read whole, it takes every
byte of memory) and a FIFO blocks its reader forever. Each command refuses them at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def app(*words: str) -> subprocess.CompletedProcess[str]:
    """The CLI with a hard stop: a hang fails the test instead of the suite."""
    return subprocess.run([sys.executable, "-m", "app", *words], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    """A FIFO with no writer, named like a spec."""
    path = tmp_path / "pipe.toml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", ["compile", "verify", "bench", "spec-check", "trust"])
def test_endless_and_blocking_files_are_refused(command: str, fifo: Path) -> None:
    for path in (Path("/dev/zero"), fifo):
        done = app(command, str(path))
        assert done.returncode == 2, (path, done.stdout[-500:], done.stderr[-500:])
        said = done.stdout + done.stderr
        assert "not a regular file" in said and "Traceback" not in said


def test_a_folder_is_named_as_one(tmp_path: Path) -> None:
    done = app("compile", str(tmp_path))
    assert done.returncode == 2 and "is a folder, not a file" in done.stderr
