"""Worker backends by name. Modules are imported only inside the worker process that uses them
(pycuda creates a CUDA context on import of its device code; the parent must never do that)."""

from __future__ import annotations

import importlib

from app.base import system
from app.engine.worker.backends.base import Backend, BackendError
from app.engine.worker.backends.cpu.toolchain import missing_compiler  # loads no native code

# name -> (module, class)
BACKENDS = {
    "pycuda": ("app.engine.worker.backends.pycuda_backend", "PycudaBackend"),
    "cpu": ("app.engine.worker.backends.cpu", "CpuBackend"),
    # Executes named behaviours (hang, crash, exit, device error, copy) in a real worker process,
    # so that the fault handling around workers is tested on machines without a GPU.
    "selftest": ("app.engine.worker.backends.selftest", "SelftestBackend"),
}


def create(name: str, device: int = 0) -> Backend:
    """Instantiate a backend in this (worker) process."""
    if name not in BACKENDS:
        raise BackendError("bad_request", f"unknown backend {name!r}")
    module_name, class_name = BACKENDS[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BackendError("unsupported", f"backend {name} is not available: {error}") from None
    backend: Backend = getattr(module, class_name)(device)
    return backend


def usable(name: str) -> str | None:
    """None when the backend can run on this machine, else the reason it cannot."""
    if name == "pycuda":
        if not system.list_gpus():
            return "no NVIDIA GPU found"
        if not system.importable("pycuda"):
            return "pycuda is not installed (pip install -e '.[gpu]')"
        return None
    if name == "cpu":
        return missing_compiler()
    return None if name in BACKENDS else f"unknown backend {name!r}"


def choose(requested: str) -> tuple[str | None, str]:
    """The backend `auto` means here (pycuda on a GPU, else cpu), or None and why not."""
    if requested != "auto":
        reason = usable(requested)
        return (None, reason) if reason else (requested, "")
    reasons = []
    for name in ("pycuda", "cpu"):
        reason = usable(name)
        if reason is None:
            return name, ""
        reasons.append(f"{name}: {reason}")
    return None, "no backend can run kernels here (" + "; ".join(reasons) + ")"
