"""The security suite runs real payloads; the CPU-backend ones need a host C++ compiler and
x86-64 (their system calls are x86-64 machine code)."""

from __future__ import annotations

import platform

import pytest

from app.engine.worker.backends.cpu.toolchain import find_toolchain
from app.isolation import sandbox


@pytest.fixture
def cpu_payloads() -> None:
    """Skip, saying why, where the kernel payloads cannot be built."""
    if find_toolchain() is None:
        pytest.skip("no host C++ compiler: the CPU backend cannot run here")
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the kernel payloads' system calls are x86-64 machine code")


@pytest.fixture
def sandboxed() -> None:
    """Skip, saying why, where no sandbox can be had (the trust tests cover that case)."""
    works, reason = sandbox.available()
    if not works:
        pytest.skip(f"no sandbox here: {reason}")
