"""Shared fixtures of the CPU backend tests: one real cpu worker per module, and a cache that
outlives single tests (kernels are built once per session, as in real use)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.engine.worker.backends.cpu.toolchain import find_toolchain
from tests.cpu_backend.harness import CpuWorker

if find_toolchain() is None:
    pytest.skip("no host C++ compiler: the CPU backend cannot run here", allow_module_level=True)


@pytest.fixture(scope="module")
def cpu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CpuWorker]:
    """A warm cpu worker (replaced transparently after a test crashes it). It starts before the
    function-scoped fixture that redirects the cache, so it gets the same redirection here."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNEL_STUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
        worker = CpuWorker(tmp_path_factory.mktemp("cpu-worker"))
    yield worker
    worker.close()


@pytest.fixture
def kernels() -> Path:
    """The folder of the unit kernels."""
    return Path(__file__).parent / "kernels"
