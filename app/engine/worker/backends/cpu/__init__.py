"""The CPU emulation backend: verify CUDA kernels on machines without a GPU."""

from app.engine.worker.backends.cpu.backend import CpuBackend

__all__ = ["CpuBackend"]
