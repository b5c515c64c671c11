"""Run by test_recovery.py in a child process: edit a file in the real window, wait for the
autosave, then die by SIGKILL, as a crash would (no close event, no cleanup)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from ui.main_window import MainWindow


def main() -> None:
    """argv: the file to open, the text to add at its top."""
    app = QApplication(sys.argv[:1])
    window = MainWindow(settings_path=Path(sys.argv[3]), offer_recovery=False)
    window.show()
    editor = window.open_files([sys.argv[1]])[0]
    editor.insertText(0, sys.argv[2])
    edited = time.perf_counter()
    document = window.tabs.document(editor)
    deadline = edited + 10
    while not window.recovery.has(document.buffer_id) and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.01)
    print(f"autosaved {time.perf_counter() - edited:.3f}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
