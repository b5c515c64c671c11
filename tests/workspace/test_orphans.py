"""The temporary folders of crashed GUI sessions are removed at the next start, and only those:
never a live session's, another kind of folder, or a link (app/workspace/orphans.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.workspace.orphans import orphans, remove_orphans, session_prefix


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_folders_of_ended_sessions_are_removed(tmp_path: Path) -> None:
    gone = dead_pid()
    crashed = [tmp_path / f"kernel-studio-{kind}-{gone}-abc123" for kind in
               ("run", "speccheck", "compare")]
    live = tmp_path / f"kernel-studio-run-{os.getppid()}-def456"
    mine = tmp_path / f"{session_prefix('run')}ghi789"
    other = tmp_path / f"kernel-studio-bench-{gone}-x"  # not a session folder
    for folder in (*crashed, live, mine, other):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "k.cu").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / f"kernel-studio-run-{gone}-link").symlink_to(outside)
    assert orphans(tmp_path) == sorted(crashed)
    assert remove_orphans(tmp_path) == sorted(crashed)
    assert not any(folder.exists() for folder in crashed)
    assert live.is_dir() and mine.is_dir() and other.is_dir() and outside.is_dir()
