"""Review test fixtures: an audit log and signing key folder of each test's own, and small
copies of vector_add, a slower strided_add and a broken off_by_one."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_support import OFF_BY_ONE, STRIDED_ADD, VECTOR_ADD, small_copy


@pytest.fixture(autouse=True)
def audit_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own audit log and signing key folder."""
    folder = tmp_path / "audit"
    monkeypatch.setenv("KERNEL_STUDIO_AUDIT_LOG", str(folder / "audit.jsonl"))
    monkeypatch.setenv("KERNEL_STUDIO_AUDIT_KEY", str(folder))
    return folder / "audit.jsonl"


@pytest.fixture
def variants(tmp_path: Path) -> dict[str, Path]:
    """Spec paths of vector_add, a slower strided_add and a broken off_by_one."""
    into = tmp_path / "kernels"
    into.mkdir()
    return {"vector_add": small_copy(VECTOR_ADD, into),
            "strided_add": small_copy(STRIDED_ADD, into),
            "off_by_one": small_copy(OFF_BY_ONE, into)}
