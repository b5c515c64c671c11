"""The GUI's long-lived job process, driven by QProcess events (no thread, never blocking).

The child is `python -m app.jobs.server` by default (any program speaking its JSON lines works:
requests and events are the typed messages of app.jobs.messages, built and parsed only there).
It is started on the first request and kept between requests, so its imports and its engine's
worker (the CUDA context) stay warm. Its state is reported as it changes: stopped (no process;
the next request starts one), starting, restarting (a fresh process after the last one was
cancelled or died), idle (warm, waiting) and busy.

Cancel really stops the work: SIGTERM lets the core cancel cooperatively and kill its worker, and
the child then exits; if it is still there after a grace period its whole process group is
killed. The next request starts a fresh child.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from app.base.paths import ROOT
from app.isolation import sandbox
from app.jobs.messages import EventKind, JobEvent, JobRequest, MessageError, encode_request

GRACE_MS = 3000
SHUTDOWN_MS = 3000
STATES = ("stopped", "starting", "restarting", "idle", "busy")


def runner_command() -> list[str]:
    """The default child: this interpreter running app.jobs.server (-P: its working folder,
    the checkout, is never put first on sys.path; PYTHONPATH names the checkout)."""
    return sandbox.python_command("-m", "app.jobs.server")


class JobProcess(QObject):
    """One job at a time in a kept child; signals report progress, outcomes and the state."""

    started = Signal(str)
    progress = Signal(str, float)
    finished = Signal(str, object)
    failed = Signal(str, str, str)
    stateChanged = Signal(str)

    def __init__(self, parent: QObject | None = None,
                 command: Sequence[str] | None = None) -> None:
        """Nothing runs until the first start()."""
        super().__init__(parent)
        self.command = list(command or runner_command())
        self.kind = ""
        self.state = "stopped"
        self.starts = 0
        self._process: QProcess | None = None
        self._ready = False
        self._buffer = b""
        self._job_id = 0
        self._job_running = False
        self._cancelled = False
        self._kill_timer = QTimer(self, singleShot=True, interval=GRACE_MS)
        self._kill_timer.timeout.connect(self._kill_group)

    @property
    def running(self) -> bool:
        """Whether a job is under way."""
        return self._job_running

    @property
    def warm(self) -> bool:
        """Whether a child is alive and ready for the next request."""
        return self._process is not None and self._ready

    def pid(self) -> int:
        """The child's process id (0 when none)."""
        return int(self._process.processId()) if self._process is not None else 0

    def _set_state(self, state: str) -> None:
        """Record and announce a state change."""
        if state != self.state:
            self.state = state
            self.stateChanged.emit(state)

    # -- requests -----------------------------------------------------------------------------

    def start(self, request: JobRequest) -> bool:
        """Send a job to the child (starting it if needed); False when one is already running."""
        if self._job_running:
            return False
        if self._process is None:
            self._launch()
        assert self._process is not None
        self._job_id += 1
        self.kind, self._job_running, self._cancelled = str(request.kind), True, False
        line = encode_request(request, self._job_id)
        self._process.write(line.encode())  # buffered until the child has started
        if self._ready:
            self._set_state("busy")
        self.started.emit(self.kind)
        return True

    def _launch(self) -> None:
        """Start a child; it says "ready" once its imports are done."""
        process = QProcess(self)
        process.setProgram(self.command[0])
        process.setArguments(self.command[1:])
        process.setWorkingDirectory(str(ROOT))
        process.setProcessEnvironment(self._environment())
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.readyReadStandardOutput.connect(self._read)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self._process, self._ready, self._buffer = process, False, b""
        self._set_state("restarting" if self.starts else "starting")
        self.starts += 1
        process.start()

    def _environment(self) -> QProcessEnvironment:
        """The GUI's environment with the checkout importable, and only what no sandbox can
        write on its sys.path (app.isolation.sandbox.python_environment, as for every Python we
        start)."""
        environment = QProcessEnvironment()
        for key, value in sandbox.python_environment(os.environ, ROOT).items():
            environment.insert(key, value)
        return environment

    # -- cancelling and stopping --------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running job: terminate the child now, kill its group after a grace period.
        The outcome ("cancelled") is reported when the child has exited."""
        if self._process is None or not self._job_running:
            return
        self._cancelled = True
        self._process.terminate()
        self._kill_timer.start()

    def _kill_group(self) -> None:
        """Kill the child and everything in its process group (never our own group)."""
        pid = self.pid()
        if not pid:
            return
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
        if self._process is not None:
            self._process.kill()

    def shutdown(self) -> None:
        """End the child (the window is closing). Idle, end of input lets it close its engine
        and workers; busy, SIGTERM cancels the job (the core kills its worker, which lives in a
        session of its own and would outlive a plain kill). A child that does not exit in time
        is killed with its group."""
        process = self._process
        if process is None:
            return
        self._cancelled = self._job_running
        if self._job_running:
            process.terminate()
        else:
            process.closeWriteChannel()
        if not process.waitForFinished(SHUTDOWN_MS):
            self._kill_group()
            process.waitForFinished(2000)

    # -- the child's messages -----------------------------------------------------------------

    def _read(self) -> None:
        """Parse complete JSON lines from the child's stdout."""
        if self._process is None:
            return
        self._buffer += bytes(self._process.readAllStandardOutput().data())
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._handle(line)

    def _handle(self, line: bytes) -> None:
        """One event: ready, progress or the outcome of the current job (other lines, such as
        a library's stray print, are not events and are skipped)."""
        try:
            event = JobEvent.from_line(line)
        except MessageError:
            return
        if event.event == EventKind.READY:
            self._ready = True
            self._set_state("busy" if self._job_running else "idle")
            return
        if event.id != self._job_id or not self._job_running or self._cancelled:
            return  # stale, or a job being cancelled: its outcome is "cancelled" at exit
        if event.event == EventKind.PROGRESS:
            self.progress.emit(event.text, -1.0 if event.fraction is None else event.fraction)
        elif event.event == EventKind.RESULT:
            self._end_job(("result", event.data))
        else:
            self._end_job(("error", (event.message, event.hint)))

    def _end_job(self, outcome: tuple[str, Any]) -> None:
        """Report a job's outcome; the child stays, idle and warm."""
        self._job_running = False
        self._set_state("idle" if self._ready else self.state)
        kind, value = outcome
        if kind == "result":
            self.finished.emit(self.kind, value)
        else:
            self.failed.emit(self.kind, value[0], value[1])

    def _on_error(self, error: QProcess.ProcessError) -> None:
        """The child could not start at all."""
        if error != QProcess.ProcessError.FailedToStart:
            return
        self._forget_process()
        if self._job_running:
            self._job_running = False
            self.failed.emit(self.kind, f"could not start {self.command[0]}",
                             "Is the Python environment intact? Try `kernel-studio doctor`.")

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        """The child exited: after a cancel, or unexpectedly (then a running job fails)."""
        self._read()
        self._forget_process()
        if not self._job_running:
            return
        self._job_running = False
        if self._cancelled:
            self.failed.emit(self.kind, "cancelled", "")
        else:
            self.failed.emit(self.kind, f"the job process exited unexpectedly (code {code})",
                             "The next run starts a fresh one.")

    def _forget_process(self) -> None:
        """Drop the ended child; the next request starts another."""
        self._kill_timer.stop()
        process, self._process, self._ready = self._process, None, False
        if process is not None:
            process.deleteLater()
        self._set_state("stopped")
