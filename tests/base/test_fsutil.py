"""Atomic writes keep either the old or the new content, never a torn file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from app.base.fsutil import atomic_write_text


def test_atomic_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "kernel.cu"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["kernel.cu"]


def test_full_disk_is_an_oserror_and_loses_nothing(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "kernel.cu"
    target.write_text("precious")

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    # The OS is simulated, not the code under test: fsync is where a full disk shows up.
    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(target, "new")
    assert target.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["kernel.cu"]
