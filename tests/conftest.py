"""Shared test setup: gpu-marked tests skip cleanly without an NVIDIA GPU and pycuda."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from app.base import system

if TYPE_CHECKING:
    from app.engine.verify.runs import Engine

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _gpu_ready() -> str | None:
    """None when gpu tests can run, else the reason they cannot."""
    if not system.list_gpus():
        return "no NVIDIA GPU on this machine"
    if not system.importable("pycuda"):
        return "pycuda is not installed"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip gpu-marked tests, saying why, where no GPU backend can run."""
    reason = _gpu_ready()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _private_user_folders(tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep tests out of the user's real cache and data folders."""
    base: Path = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("KERNEL_STUDIO_CACHE", str(base / "cache"))
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(base / "data"))


@pytest.fixture(scope="module")
def warm_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One engine for a module, with its cpu worker started in the tests' private cache: the
    worker stays warm from one kernel to the next."""
    from app.engine.verify.runs import Engine

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNEL_STUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
        with Engine() as shared:
            shared.handle("cpu").ensure()
            yield shared
