"""Run by test_crash_restart.py in a child process: a session as a person leaves it (two kernels
open, unsaved text in one, the light theme, a smaller window, a dock closed), kept until the
settings file and the autosave hold it, then killed by SIGKILL as a crash would be."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from ui.main_window import MainWindow


def kept(settings_path: Path, window: MainWindow, paths: list[str]) -> bool:
    """Whether the settings file on disk (read afresh) and the autosave hold the session."""
    store = QSettings(str(settings_path), QSettings.Format.IniFormat)
    open_files = store.value("session/open_files") or []
    document = window.tabs.document(window.tabs.editors()[0])
    return (sorted(map(str, open_files)) == sorted(paths) and store.value("theme") == "light"
            and store.value("windowState") is not None
            and window.recovery.has(document.buffer_id))


def main() -> None:
    """argv: the settings file, the line to add to the first kernel, then the kernels."""
    app = QApplication(sys.argv[:1])
    settings_path, line, paths = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    window = MainWindow(settings_path=settings_path, offer_recovery=False)
    window.show()
    editor = window.open_files(paths)[0]
    editor.insertText(0, line)
    # A run of the unsaved text leaves its private copy in the temporary folder.
    kernel = Path(paths[0])
    copy = window.runner.folders.prepare(kernel.with_suffix(".toml"), {kernel: editor.text()})
    print(f"copy {copy.parent}", flush=True)
    window.set_theme("light")
    window.resize(760, 560)
    window.docks["assistant"].close()
    deadline = time.monotonic() + 60
    while not kept(settings_path, window, paths) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    print("kept" if kept(settings_path, window, paths) else "not kept", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
