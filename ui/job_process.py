"""A long core job in a child process, driven by QProcess events (no thread, never blocking).

The child is `python -m ui.job_runner` by default (any program speaking its JSON lines works).
Cancel really stops the work: SIGTERM lets the core cancel cooperatively and kill its worker;
if the child is still there after a grace period its whole process group is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from app.paths import ROOT

GRACE_MS = 3000


def runner_command() -> list[str]:
    """The default child: this interpreter running ui.job_runner."""
    return [sys.executable, "-m", "ui.job_runner"]


class JobProcess(QObject):
    """One job at a time; signals report progress and the outcome on the GUI thread."""

    started = Signal(str)
    progress = Signal(str, float)
    finished = Signal(str, object)
    failed = Signal(str, str, str)

    def __init__(self, parent: QObject | None = None,
                 command: Sequence[str] | None = None) -> None:
        """Nothing runs until start()."""
        super().__init__(parent)
        self.command = list(command or runner_command())
        self.kind = ""
        self._process: QProcess | None = None
        self._buffer = b""
        self._outcome: tuple[str, Any] | None = None
        self._cancelled = False
        self._kill_timer = QTimer(self, singleShot=True, interval=GRACE_MS)
        self._kill_timer.timeout.connect(self._kill_group)

    @property
    def running(self) -> bool:
        """Whether a child is alive."""
        return self._process is not None

    def pid(self) -> int:
        """The child's process id (0 when none)."""
        return int(self._process.processId()) if self._process is not None else 0

    def start(self, kind: str, request: dict[str, Any]) -> bool:
        """Start a job; False when one is already running."""
        if self._process is not None:
            return False
        self.kind, self._buffer, self._outcome, self._cancelled = kind, b"", None, False
        process = QProcess(self)
        process.setProgram(self.command[0])
        process.setArguments(self.command[1:])
        process.setWorkingDirectory(str(ROOT))
        process.setProcessEnvironment(self._environment())
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.readyReadStandardOutput.connect(self._read)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self._process = process
        process.start()
        process.write((json.dumps({"kind": kind, **request}) + "\n").encode())
        process.closeWriteChannel()
        self.started.emit(kind)
        return True

    def _environment(self) -> QProcessEnvironment:
        """The GUI's environment with the checkout importable."""
        environment = QProcessEnvironment.systemEnvironment()
        paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
        environment.insert("PYTHONPATH", os.pathsep.join(p for p in paths if p))
        return environment

    def cancel(self) -> None:
        """Stop the job: terminate now, kill the process group after a grace period."""
        if self._process is None:
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

    def _read(self) -> None:
        """Parse complete JSON lines from the child's stdout."""
        if self._process is None:
            return
        self._buffer += bytes(self._process.readAllStandardOutput().data())
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._handle(line)

    def _handle(self, line: bytes) -> None:
        """One message: progress is forwarded now, the outcome when the child exits."""
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return
        event = message.get("event")
        if event == "progress":
            fraction = message.get("fraction")
            self.progress.emit(str(message.get("text", "")),
                               float(fraction) if isinstance(fraction, int | float) else -1.0)
        elif event == "result":
            self._outcome = ("result", message.get("data"))
        elif event == "error":
            self._outcome = ("error", (str(message.get("message", "")),
                                       str(message.get("hint", ""))))

    def _on_error(self, error: QProcess.ProcessError) -> None:
        """The child could not start at all."""
        if error == QProcess.ProcessError.FailedToStart:
            self._outcome = ("error", (f"could not start {self.command[0]}",
                                       "Is the Python environment intact? Try "
                                       "`kernel-studio doctor`."))
            self._finish()

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        """The child exited: report its outcome (or why there is none)."""
        self._read()
        if self._outcome is None:
            reason = "cancelled" if self._cancelled else (
                f"the job process exited unexpectedly (code {code})")
            self._outcome = ("error", (reason, ""))
        self._finish()

    def _finish(self) -> None:
        """Emit the outcome once and forget the child."""
        self._kill_timer.stop()
        process, self._process = self._process, None
        if process is not None:
            process.deleteLater()
        outcome, self._outcome = self._outcome, None
        if outcome is None:
            return
        kind, value = outcome
        if self._cancelled:
            self.failed.emit(self.kind, "cancelled", "")
        elif kind == "result":
            self.finished.emit(self.kind, value)
        else:
            self.failed.emit(self.kind, value[0], value[1])

    def shutdown(self) -> None:
        """Stop any job at once and wait for the child (the window is closing)."""
        process = self._process
        if process is None:
            return
        self._cancelled = True
        self._kill_group()
        process.waitForFinished(2000)
