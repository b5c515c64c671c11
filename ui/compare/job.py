"""A compare or a bundle check in a process of its own: `kernel-studio compare ... --json` or
`kernel-studio bundle verify ... --json` through QProcess (event-driven, no thread), so that no
kernel runs in the GUI's process and Cancel really stops the work."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from PySide6.QtCore import QObject, QProcess, Signal

from app.base.paths import ROOT
from app.isolation import sandbox
from app.review.model import BundleCheck, CompareReport, check_from_json

# A compare prints its report as JSON even when a kernel fails (exit 1) or cannot be decided
# (3); exit 2 is bad input, whose one message is on stderr.
REPORTING_CODES = (0, 1, 3)
KILL_AFTER_MS = 3000


class ReviewJob(QObject):
    """Runs one `kernel-studio` command at a time and reports what it printed."""

    finished = Signal(object)  # a CompareReport or a BundleCheck
    failed = Signal(str)  # one message: bad input, a crash, or cancelled

    def __init__(self, parent: QObject | None = None) -> None:
        """Idle until start()."""
        super().__init__(parent)
        self.process: QProcess | None = None
        self.kind = ""
        self._cancelled = False

    def running(self) -> bool:
        """Whether a command is under way."""
        return self.process is not None

    def start(self, kind: str, arguments: list[str]) -> bool:
        """Run `kernel-studio <arguments> --json` ('compare' or 'bundle' is `kind`); False
        when one already runs."""
        if self.process is not None:
            return False
        self.kind, self._cancelled = kind, False
        process = QProcess(self)
        command = sandbox.python_command("-m", "app", *arguments, "--json")
        process.setProgram(command[0])
        process.setArguments(command[1:])
        # The checkout only on sys.path, never the working folder (docs/isolation.md).
        process.setEnvironment([f"{key}={value}" for key, value in
                                sandbox.python_environment(os.environ, ROOT).items()])
        process.finished.connect(self._ended)
        process.errorOccurred.connect(self._error)
        self.process = process
        process.start()
        return True

    def cancel(self) -> None:
        """Stop the command: terminate, then kill if it lingers (its workers die with it)."""
        if self.process is None:
            return
        self._cancelled = True
        self.process.terminate()
        if not self.process.waitForFinished(KILL_AFTER_MS):
            self.process.kill()
            self.process.waitForFinished(KILL_AFTER_MS)

    def _take(self) -> tuple[int, bytes, bytes]:
        """Exit code, stdout and stderr of the finished process, which is released."""
        process = self.process
        assert process is not None
        self.process = None
        out, err = bytes(process.readAllStandardOutput().data()), \
            bytes(process.readAllStandardError().data())
        code = process.exitCode() if process.exitStatus() == QProcess.ExitStatus.NormalExit \
            else -1
        process.deleteLater()
        return code, out, err

    def _ended(self, *_: object) -> None:
        """Parse what the command printed, or say why there is nothing to show."""
        if self.process is None:
            return
        code, out, err = self._take()
        if self._cancelled:
            self.failed.emit("cancelled")
            return
        message = err.decode("utf-8", "replace").strip().splitlines()
        if code not in REPORTING_CODES:
            self.failed.emit(message[-1] if message else f"{self.kind} stopped (exit {code})")
            return
        try:
            self.finished.emit(parse(self.kind, json.loads(out)))
        except ValueError as error:
            self.failed.emit(f"the {self.kind} result could not be read: {error}")

    def _error(self, error: QProcess.ProcessError) -> None:
        """The process could not start (a crash ends through finished)."""
        if error == QProcess.ProcessError.FailedToStart and self.process is not None:
            self._take()
            self.failed.emit(f"could not start {sys.executable} for {self.kind}")


def parse(kind: str, data: Any) -> CompareReport | BundleCheck:
    """The typed result of a compare or a bundle check (ValueError when the data is not what
    the command prints)."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return CompareReport.from_json(data) if kind == "compare" else check_from_json(data)
