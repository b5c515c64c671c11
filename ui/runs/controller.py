"""Build, verify and bench for the window: snapshots in, results out, one job at a time.

The controller hands the job process typed requests of plain data (text snapshots, paths,
options), never a widget, and routes what comes back to the panes on the GUI thread: a verdict
as an engine Verdict, a timing report as a BenchReport, a build as the compile result's JSON.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.base import settings
from app.engine.verify.results import Verdict
from app.jobs.messages import BenchRequest, CompileRequest, JobKind, JobRequest, VerifyRequest
from app.workspace.snapshot import RunFolders
from ui.runs.job_process import JobProcess

# app.spec.model, app.engine.bench (numpy) load with the first spec or timing run, not at startup;
# here only for annotations.
if TYPE_CHECKING:
    from app.engine.bench.reports import BenchReport
    from app.engine.bench.runner import BenchOptions
    from app.spec.model import Spec

ACTIVITY = {JobKind.COMPILE: "compiling", JobKind.VERIFY: "verifying", JobKind.BENCH: "timing"}
UNREADABLE_HINT = "The GUI and its job process disagree: restart Kernel Studio."


@dataclass(frozen=True)
class BuildSnapshot:
    """What a build was started from: which buffer, which version of its text."""

    buffer_id: str
    version: int
    filename: str
    text: str = ""  # the text that was built (the PTX / SASS pane quotes its lines)
    arch: str | None = None  # asked for instead of the Settings' arch (the pane's picker)
    purpose: str = "show"  # or DIFF: the other side of a SASS diff, not the buffer's build


DIFF = "diff"


@dataclass(frozen=True)
class LaunchShape:
    """One launch's entry with its threads per block and dynamic shared bytes."""

    entry: str
    threads: int
    shared_bytes: int


def launch_shapes(spec: Spec | None) -> list[LaunchShape]:
    """Every launch's shape for the bench case (else the first case); [] when none resolves."""
    if spec is None:
        return []
    from app.spec.cases import CaseError, resolve  # numpy: imported when a spec is first used

    cases = [spec.bench_case] if spec.bench_case else list(spec.cases[:1])
    for case in cases:
        try:
            resolved = resolve(spec, case)
        except (CaseError, ValueError):
            continue
        return [LaunchShape(launch.entry, math.prod(shape.block), shape.shared_bytes)
                for launch, shape in zip(spec.launches, resolved.launch_shapes(), strict=True)]
    return []


def launch_shape(spec: Spec | None) -> tuple[int, int]:
    """Threads per block and dynamic shared bytes of the first launch, for the bench case (else
    the first case); (0, 0) when none resolves."""
    shapes = launch_shapes(spec)
    return (shapes[0].threads, shapes[0].shared_bytes) if shapes else (0, 0)


def occupancy_per_launch(data: dict[str, Any], shapes: list[LaunchShape]) -> dict[str, Any]:
    """A compile result whose occupancy is each kernel's at its own launch's block and shared
    memory: the job works out one shape (the first launch's) for every kernel, and a second
    pass launched with 32 threads is not the first one's 256. Kernels no launch runs, and a
    result with one shape, are left as they are."""
    if len({(s.threads, s.shared_bytes) for s in shapes}) < 2 or not data.get("ok"):
        return data
    from app.compile.model import CompileResult, KernelResources
    from app.compile.occupancy import occupancy

    try:
        kernels = [KernelResources(**k) for k in data.get("kernels") or []]
    except TypeError:  # a result this GUI cannot read: the job's occupancy stays
        return data
    # The kernels alone: the result's own symbol matching (extern "C" or mangled names).
    result = CompileResult(ok=True, arch=str(data.get("arch") or ""), backend="",
                           kernels=kernels)
    fixed = dict(data.get("occupancy") or {})
    done: set[str] = set()
    for shape in shapes:
        for symbol in result.kernel_symbols(shape.entry):
            kernel = result.kernel(symbol)
            if kernel is None or symbol in done:  # the first launch of a kernel decides
                continue
            done.add(symbol)
            try:
                fixed[symbol] = dataclasses.asdict(occupancy(kernel, shape.threads,
                                                             shape.shared_bytes, result.arch))
            except (ValueError, TypeError) as error:
                fixed[symbol] = {"error": str(error)}
    return {**data, "occupancy": fixed}


def bench_report(data: dict[str, Any]) -> BenchReport:
    """A timing report from its JSON."""
    # numpy (the report's statistics): imported with the first timing result, not at startup.
    from app.engine.bench.reports import BenchReport

    return BenchReport.from_json(data)


def read_result(kind: str, data: dict[str, Any] | None) -> Verdict | BenchReport | dict[str, Any]:
    """A job's result as the panes take it: a Verdict, a BenchReport or (a build) the compile
    result's JSON. Raises ValueError naming what could not be read."""
    if not isinstance(data, dict):
        raise ValueError(f"the {kind} result is missing")
    if kind == JobKind.COMPILE:
        return data
    try:
        return Verdict.from_json(data) if kind == JobKind.VERIFY else bench_report(data)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"the {kind} result cannot be read ({type(error).__name__}: "
                         f"{error})") from None


class RunController(QObject):
    """Starts jobs and re-emits their outcomes with what they were started from."""

    busy = Signal(object)  # what the running job does, in words; None once it ended
    workerState = Signal(str)
    progress = Signal(str, float)
    built = Signal(object, object)  # the BuildSnapshot and the compile result's JSON
    verified = Signal(object)  # a Verdict
    benched = Signal(object)  # a BenchReport
    failed = Signal(str, str, str)  # kind, message, hint

    def __init__(self, parent: QObject | None = None) -> None:
        """One job process, reused."""
        super().__init__(parent)
        self.backend = "auto"
        self.timeout = settings.TIME_LIMIT_S
        self.arch: str | None = None  # None: this machine's GPU, else the compiler's default
        self.extra_options: tuple[str, ...] = ()  # after the spec's own (Settings)
        self.job = JobProcess(self)
        self.job.progress.connect(self.progress)
        self.job.stateChanged.connect(self.workerState)
        self.job.finished.connect(self._finished)
        self.job.failed.connect(self._failed)
        self.folders = RunFolders()  # private copies for runs of unsaved text
        self.last_spec: Path | None = None  # the spec file the last verify or bench read
        self._build: BuildSnapshot | None = None
        self._shapes: list[LaunchShape] = []  # the launches of the spec being built

    def set_backend(self, name: str) -> None:
        """Where later verify and bench jobs run: auto, pycuda or cpu."""
        self.backend = name

    @property
    def running(self) -> bool:
        """Whether a job is under way."""
        return self.job.running

    def build(self, text: str, version: int, buffer_id: str, path: Path | None,
              untitled: str, spec: Spec | None, *, arch: str | None = None,
              purpose: str = "show") -> bool:
        """Compile a snapshot of a buffer (the file on disk is not needed), for `arch` instead
        of the Settings' when given; `purpose` travels with the result (BuildSnapshot)."""
        shapes = launch_shapes(spec)
        block, shared = (shapes[0].threads, shapes[0].shared_bytes) if shapes else (0, 0)
        folder = path.parent if path else Path.cwd()
        filename = path.name if path else untitled
        options = (*(spec.options if spec else ()), *self.extra_options)
        # The spec's template entries (scale<float, 4>) are built only when it is this file's.
        own = spec is not None and path is not None \
            and spec.source_path.resolve() == path.resolve()
        request = CompileRequest(text, filename, str(folder), arch=arch or self.arch,
                                 options=options,
                                 block_size=block or None, dynamic_shared=shared,
                                 entries=spec.entries if own and spec else ())
        if not self._start(request):
            return False
        self._build = BuildSnapshot(buffer_id, version, filename, text, arch, purpose)
        self._shapes = shapes
        return True

    def verify(self, spec_path: Path, sanitize: str | None = None) -> bool:
        """Verify a spec file (and the kernel it names): the user's or a private copy's."""
        self.last_spec = spec_path
        return self._start(VerifyRequest(str(spec_path), self.backend, sanitize, self.timeout,
                                         self.arch))

    def bench(self, spec_path: Path, options: BenchOptions | None = None) -> bool:
        """Time a saved spec's kernel; `options` set the budget, cold or hot timing, a sweep and
        a baseline (--vs); the engine's defaults without them."""
        message = options.to_message() if options is not None else {}
        self.last_spec = spec_path
        return self._start(BenchRequest(str(spec_path), self.backend, message))

    def _start(self, request: JobRequest) -> bool:
        """Start a job unless one is running."""
        if not self.job.start(request):
            return False
        self.busy.emit(ACTIVITY[request.kind] + "\u2026")
        if self.job.state in ("starting", "restarting"):
            # After the caller has said the job started (its pane begins the stages then).
            QTimer.singleShot(0, lambda: self.progress.emit("starting the job process", -1.0))
        return True

    @property
    def kind(self) -> str:
        """What the running (or last) job does: compile, verify or bench."""
        return self.job.kind

    def cancel(self) -> None:
        """Cancel the running job (its process group is killed if it does not stop)."""
        self.job.cancel()

    def shutdown(self) -> None:
        """Stop everything now (the window is closing) and remove the private copies."""
        self.job.shutdown()
        self.folders.close()

    def _finished(self, kind: str, data: dict[str, Any] | None) -> None:
        """Route a job's result, typed; one that cannot be read fails the job, saying why."""
        try:
            result = read_result(kind, data)
        except ValueError as error:
            self._failed(kind, str(error), UNREADABLE_HINT)
            return
        self.busy.emit(None)
        if kind == JobKind.COMPILE:
            snapshot, self._build = self._build, None
            assert isinstance(result, dict)
            self.built.emit(snapshot, occupancy_per_launch(result, self._shapes))
        elif kind == JobKind.VERIFY:
            self.verified.emit(result)
        else:
            self.benched.emit(result)

    def _failed(self, kind: str, message: str, hint: str) -> None:
        """A job that produced no result (cancelled, tool missing, runner failure)."""
        self.busy.emit(None)
        if kind == JobKind.COMPILE:
            self._build = None
        self.failed.emit(kind, message, hint)
