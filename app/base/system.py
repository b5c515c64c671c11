"""Facts about this machine: GPUs, CUDA tools and installed packages, found without importing Qt
or touching the GPU driver from the calling process."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CUDA_BIN_DIRS = ("/usr/local/cuda/bin", "/opt/cuda/bin")


@dataclass(frozen=True)
class GpuInfo:
    """One NVIDIA GPU as nvidia-smi describes it."""

    index: int
    name: str
    compute_capability: str
    driver: str
    uuid: str
    memory_mib: int

    @property
    def arch(self) -> str:
        """The compiler architecture for this GPU, e.g. sm_90."""
        return "sm_" + self.compute_capability.replace(".", "")


def package_version(distribution: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def importable(module: str) -> bool:
    """Whether a module can be found (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def find_tool(name: str) -> str | None:
    """A CUDA command-line tool on PATH or in the usual toolkit folders."""
    found = shutil.which(name)
    if found:
        return found
    for folder in CUDA_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.is_file():
            return str(candidate)
    return None


def run_text(command: list[str], timeout: float = 10.0) -> str | None:
    """stdout of a command, or None when it cannot run or fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def list_gpus() -> list[GpuInfo]:
    """NVIDIA GPUs seen by nvidia-smi; empty on machines without a driver."""
    smi = find_tool("nvidia-smi")
    query = "index,name,compute_cap,driver_version,uuid,memory.total"
    text = run_text([smi, f"--query-gpu={query}", "--format=csv,noheader,nounits"]) if smi else None
    if not text:
        return []
    gpus = []
    for line in text.strip().splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 6:
            index, name, cc, driver, uuid, memory = fields
            gpus.append(GpuInfo(int(index), name, cc, driver, uuid, int(float(memory))))
    return gpus


def nvcc_version() -> str | None:
    """The release of the nvcc on this machine, e.g. '13.0', or None."""
    nvcc = find_tool("nvcc")
    text = run_text([nvcc, "--version"]) if nvcc else None
    if not text:
        return None
    for line in text.splitlines():
        if "release" in line:
            return line.split("release", 1)[1].split(",")[0].strip()
    return None
