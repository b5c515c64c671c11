"""The environment a result was obtained in: host, system, Python and Kernel Studio versions,
the compilers, the GPUs and their driver, the sandbox. Recorded in bundles and reports, so that
a reviewer can tell a difference of machines from a difference of kernels."""

from __future__ import annotations

import platform
import socket
from typing import Any

from app import __version__
from app.base import system
from app.compile import default_arch
from app.isolation import sandbox

PACKAGES = ("numpy", "cuda-python", "nvidia-cuda-nvrtc", "pycuda", "cryptography")


def _gpus() -> list[dict[str, Any]]:
    """Every NVIDIA GPU nvidia-smi lists."""
    return [{"name": g.name, "arch": g.arch, "driver": g.driver, "memory_mib": g.memory_mib}
            for g in system.list_gpus()]


def environment() -> dict[str, Any]:
    """This machine, as far as results depend on it."""
    isolation = sandbox.probe()
    return {"host": socket.gethostname(), "system": platform.platform(),
            "python": platform.python_version(), "kernel_studio": __version__,
            "nvcc": system.nvcc_version(), "default_arch": default_arch(), "gpus": _gpus(),
            "sandbox": isolation.describe(),
            "packages": {name: system.package_version(name) for name in PACKAGES}}


def gpu_names(env: dict[str, Any]) -> list[str]:
    """The GPU names an environment lists."""
    return [str(g.get("name")) for g in env.get("gpus") or [] if isinstance(g, dict)]
