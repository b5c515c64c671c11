"""Small facts found off the GUI thread (they run external tools), reported by signal."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from PySide6.QtCore import QObject, QRunnable, Signal


@dataclass(frozen=True)
class BackendFacts:
    """What runs kernels here: a few words, the details for a tool tip, and whether a GPU can
    run them (compute-sanitizer and timing need one)."""

    text: str
    tooltip: str
    gpu: bool


def describe_backend() -> BackendFacts:
    """What runs kernels on this machine."""
    # Probing tools and devices is slow: these load on a pool thread after the window shows.
    from app.base import system
    from app.engine.worker import backends

    gpus = system.list_gpus()
    pycuda = backends.usable("pycuda")
    cpu = backends.usable("cpu")
    if gpus and pycuda is None:
        gpu = gpus[0]
        more = f" (+{len(gpus) - 1})" if len(gpus) > 1 else ""
        return BackendFacts(f"{gpu.name}{more}",
                            f"pycuda on {gpu.name}, {gpu.arch}, driver {gpu.driver}", True)
    details = f"pycuda: {pycuda}\ncpu: {cpu or 'available'}"
    if cpu is None:
        return BackendFacts("CPU emulation", "No usable GPU: kernels run in CPU emulation "
                            "(results only, timing is not meaningful).\n" + details, False)
    return BackendFacts("none", "Nothing can run kernels here; editing and compiling still "
                        "work.\n" + details, False)


class BackendProbe(QObject):
    """Runs describe_backend() on a pool thread and emits found(text, tooltip), then
    gpu(usable)."""

    found = Signal(str, str)
    gpu = Signal(bool)

    def runnable(self) -> QRunnable:
        """A runnable for QThreadPool; the signals are delivered on the GUI thread."""
        return QRunnable.create(self._run)

    def _run(self) -> None:
        """Probe and report; a window closed meanwhile makes the emit moot, not fatal."""
        try:
            facts = describe_backend()
        except Exception as error:  # noqa: BLE001 - a failed probe is reported, never raised
            facts = BackendFacts("unknown", f"could not detect the backend: {error}", False)
        with contextlib.suppress(RuntimeError):
            self.found.emit(facts.text, facts.tooltip)
            self.gpu.emit(facts.gpu)
