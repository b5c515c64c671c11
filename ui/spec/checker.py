"""spec-check in the Spec pane: is this spec strong enough to catch wrong kernels, as you edit.

The check runs `kernel-studio spec-check --json` in a child process (it runs the spec's
reference, inside the sandbox where there is one), never on the GUI thread. A newer request
kills the one still running. Unsaved form edits are checked in a private folder of this session
holding the form's spec and copies of the files it names; the user's files are never written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QProcess, Signal

from app.base.paths import ROOT
from app.isolation import sandbox
from app.workspace.orphans import session_prefix

# How long the panel waits after the last edit before checking (the check takes 0.1-0.7 s).
CHECK_DELAY_MS = 1200


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The lines the pane shows for a spec-check report: each impostor that would pass, then
    each warning (empty for a strong spec without warnings)."""
    lines = [f"A kernel that {item.get('description', item.get('name'))} would pass: "
             f"{item.get('message', '')}" for item in report.get("impostors", [])
             if item.get("status") == "passes"]
    return lines + [str(w.get("message", "")) for w in report.get("warnings", [])]


def headline(report: dict[str, Any]) -> str:
    """One line: strong, weak, or why it could not be checked."""
    status = report.get("status")
    if status == "strong":
        return "Spec check: strong (every impostor is caught)"
    if status == "weak":
        return "Spec check: weak (wrong kernels listed below would pass; see each line)"
    return f"Spec check: not checked ({report.get('message', 'no answer')})"


class SpecChecker(QObject):
    """Runs spec-check on a spec file; `checked(report dict)` or `failed(message)`."""

    checked = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        """No check yet; a private folder is made on the first unsaved check."""
        super().__init__(parent)
        self._process: QProcess | None = None
        self._folder: Path | None = None
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.close)

    def private_copy(self, spec: Path, names: list[Path]) -> Path:
        """A folder of this session for unsaved checks, with copies of `names` (the reference
        and the kernel the spec names): returns where the form's spec should be written."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix=session_prefix("speccheck")))
        for name in names:
            if name.is_file():
                shutil.copy2(name, self._folder / name.name)
        return self._folder / spec.name

    def check(self, spec: Path) -> None:
        """Check `spec`, stopping any check still running."""
        self.stop()
        process = QProcess(self)
        command = sandbox.python_command("-m", "app", "spec-check", "--json", str(spec))
        process.setProgram(command[0])
        process.setArguments(command[1:])
        process.setWorkingDirectory(str(ROOT))
        # The checkout only on sys.path, never the working folder (docs/isolation.md).
        process.setEnvironment([f"{key}={value}" for key, value in
                                sandbox.python_environment(os.environ, ROOT).items()])
        process.finished.connect(lambda *_: self._done(process))
        self._process = process
        process.start()

    def _done(self, process: QProcess) -> None:
        """Parse the report of the check that just ended (a stopped one says nothing)."""
        if process is not self._process:
            return
        self._process = None
        try:
            output = bytes(process.readAllStandardOutput().data()).decode("utf-8", "replace")
        except RuntimeError:  # the pane is being destroyed with the window
            return
        try:
            report = json.loads(output)
        except json.JSONDecodeError:
            error = bytes(process.readAllStandardError().data()).decode("utf-8", "replace")
            self.failed.emit(error.strip().splitlines()[-1] if error.strip() else
                             "spec-check gave no answer")
            return
        self.checked.emit(report)

    def stop(self) -> None:
        """Kill the running check, if any."""
        process, self._process = self._process, None
        if process is not None and process.state() != QProcess.ProcessState.NotRunning:
            process.finished.disconnect()
            process.kill()
            process.waitForFinished(1000)

    def close(self) -> None:
        """Stop and remove the private folder."""
        self.stop()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
