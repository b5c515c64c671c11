"""Small facts found off the GUI thread (they run external tools), reported by signal."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import QObject, QRunnable, Signal


def describe_backend() -> tuple[str, str]:
    """What runs kernels on this machine, in a few words, and the details for a tool tip."""
    # Probing tools and devices is slow: these load on a pool thread after the window shows.
    from app import system
    from app.engine.worker import backends

    gpus = system.list_gpus()
    pycuda = backends.usable("pycuda")
    cpu = backends.usable("cpu")
    if gpus and pycuda is None:
        gpu = gpus[0]
        more = f" (+{len(gpus) - 1})" if len(gpus) > 1 else ""
        return f"{gpu.name}{more}", f"pycuda on {gpu.name}, {gpu.arch}, driver {gpu.driver}"
    details = f"pycuda: {pycuda}\ncpu: {cpu or 'available'}"
    if cpu is None:
        return "CPU emulation", "No usable GPU: kernels run in CPU emulation (results only, " \
                                "timing is not meaningful).\n" + details
    return "none", "Nothing can run kernels here; editing and compiling still work.\n" + details


class BackendProbe(QObject):
    """Runs describe_backend() on a pool thread and emits found(text, tooltip)."""

    found = Signal(str, str)

    def runnable(self) -> QRunnable:
        """A runnable for QThreadPool; the signal is delivered on the GUI thread."""
        return QRunnable.create(self._run)

    def _run(self) -> None:
        """Probe and report; a window closed meanwhile makes the emit moot, not fatal."""
        try:
            text, tooltip = describe_backend()
        except Exception as error:  # noqa: BLE001 - a failed probe is reported, never raised
            text, tooltip = "unknown", f"could not detect the backend: {error}"
        with contextlib.suppress(RuntimeError):
            self.found.emit(text, tooltip)
