"""Build, verify and bench for the window: snapshots in, results out, one job at a time.

The controller hands the job process plain data (text snapshots, paths, options), never a
widget, and routes the JSON that comes back to the panes on the GUI thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app import settings
from ui.runs.job_process import JobProcess

if TYPE_CHECKING:
    from app.spec import Spec

ACTIVITY = {"compile": "compiling", "verify": "verifying", "bench": "timing"}


@dataclass(frozen=True)
class BuildSnapshot:
    """What a build was started from: which buffer, which version of its text."""

    buffer_id: str
    version: int
    filename: str


def launch_shape(spec: Spec | None) -> tuple[int, int]:
    """Threads per block and dynamic shared bytes for the bench case (else the first case)."""
    if spec is None:
        return 0, 0
    from app.cases import CaseError, resolve  # numpy: imported when a spec is first used

    cases = [spec.bench_case] if spec.bench_case else list(spec.cases[:1])
    for case in cases:
        try:
            resolved = resolve(spec, case)
        except (CaseError, ValueError):
            continue
        return math.prod(resolved.block), resolved.shared_bytes
    return 0, 0


class RunController(QObject):
    """Starts jobs and re-emits their outcomes with what they were started from."""

    busy = Signal(object)
    workerState = Signal(str)
    progress = Signal(str, float)
    built = Signal(object, object)
    verified = Signal(object)
    benched = Signal(object)
    failed = Signal(str, str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        """One job process, reused."""
        super().__init__(parent)
        self.backend = "auto"
        self.timeout = settings.TIME_LIMIT_S
        self.job = JobProcess(self)
        self.job.progress.connect(self.progress)
        self.job.stateChanged.connect(self.workerState)
        self.job.finished.connect(self._finished)
        self.job.failed.connect(self._failed)
        self._build: BuildSnapshot | None = None

    def set_backend(self, name: str) -> None:
        """Where later verify and bench jobs run: auto, pycuda or cpu."""
        self.backend = name

    @property
    def running(self) -> bool:
        """Whether a job is under way."""
        return self.job.running

    def build(self, text: str, version: int, buffer_id: str, path: Path | None,
              untitled: str, spec: Spec | None) -> bool:
        """Compile a snapshot of a buffer (the file on disk is not needed)."""
        block, shared = launch_shape(spec)
        folder = path.parent if path else Path.cwd()
        filename = path.name if path else untitled
        request = {"source": text, "filename": filename, "folder": str(folder),
                   "options": list(spec.options) if spec else [], "block_size": block,
                   "dynamic_shared": shared}
        if not self._start("compile", request):
            return False
        self._build = BuildSnapshot(buffer_id, version, filename)
        return True

    def verify(self, spec_path: Path, sanitize: str | None = None) -> bool:
        """Verify a saved spec (and the saved kernel it names)."""
        return self._start("verify", {"spec_path": str(spec_path), "backend": self.backend,
                                      "sanitize": sanitize, "timeout": self.timeout})

    def bench(self, spec_path: Path, options: Any = None) -> bool:
        """Time a saved spec's kernel; `options` (an app.engine.bench.runner.BenchOptions) sets the
        budget, cold or hot timing, a sweep and a baseline (--vs)."""
        from ui.runs.bench_options import options_to_json

        request = {"spec_path": str(spec_path), "backend": self.backend,
                   "options": options_to_json(options) if options is not None else {}}
        return self._start("bench", request)

    def _start(self, kind: str, request: dict[str, Any]) -> bool:
        """Start a job unless one is running."""
        if not self.job.start(kind, request):
            return False
        self.busy.emit(ACTIVITY[kind] + "\u2026")
        return True

    def cancel(self) -> None:
        """Cancel the running job (its process group is killed if it does not stop)."""
        self.job.cancel()

    def shutdown(self) -> None:
        """Stop everything now (the window is closing)."""
        self.job.shutdown()

    def _finished(self, kind: str, data: Any) -> None:
        """Route a job's result."""
        self.busy.emit(None)
        if kind == "compile":
            snapshot, self._build = self._build, None
            self.built.emit(snapshot, data)
        elif kind == "verify":
            self.verified.emit(data)
        else:
            self.benched.emit(data)

    def _failed(self, kind: str, message: str, hint: str) -> None:
        """A job that produced no result (cancelled, tool missing, runner failure)."""
        self.busy.emit(None)
        if kind == "compile":
            self._build = None
        self.failed.emit(kind, message, hint)
