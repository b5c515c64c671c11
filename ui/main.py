"""The desktop app's entry: `kernel-studio gui [FILES...] [--screenshot PNG]`.

app/cli/commands/gui.py imports this module only when the gui command runs, so the core never
imports Qt. With --screenshot the window opens the files, builds the first one, waits until
the result is drawn, saves a picture of the whole window and exits.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.base import settings
from app.isolation import offline
from ui.main_window import MainWindow

SCREENSHOT_TIMEOUT_MS = 120_000
SETTLE_MS = 400


def _probing_startup() -> bool:
    """Whether benchmarks/gui_startup.py asked (settings.STARTUP_PROBE) for a print when the
    window is exposed, then a quit."""
    return settings.STARTUP_PROBE.get() is not None


def application() -> QApplication:
    """The QApplication, created once."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Kernel Studio")
    app.setOrganizationName("kernel-studio")
    return app


def _busiest_line(window: MainWindow) -> int:
    """The source line with the most SASS instructions (what a screenshot should highlight)."""
    counts: dict[int, int] = {}
    for row in window.assembly_view.rows:
        if row.line and not row.text.startswith("NOP"):  # padding after the kernel's end
            counts[row.line] = counts.get(row.line, 0) + 1
    return max(counts, key=lambda line: counts[line]) if counts else 0


class ScreenshotTaker:
    """Build, wait for the result to be drawn, save the window's picture, quit."""

    def __init__(self, window: MainWindow, path: Path) -> None:
        """Arm the build and a safety timeout."""
        self.window = window
        self.path = path
        self.code = 1
        window.buildFinished.connect(lambda _: QTimer.singleShot(SETTLE_MS, self.shoot))
        window.runner.failed.connect(lambda *_: QTimer.singleShot(SETTLE_MS, self.shoot))
        QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, self.shoot)
        QTimer.singleShot(SETTLE_MS, self.start)

    def start(self) -> None:
        """Build the current file, or shoot at once when there is none."""
        if self.window.tabs.current() is None or not self.window.build():
            QTimer.singleShot(SETTLE_MS, self.shoot)

    def shoot(self) -> None:
        """Highlight the busiest source line's SASS, save the picture and quit."""
        if self.code == 0:
            return
        editor = self.window.tabs.current()
        line = _busiest_line(self.window)
        if editor is not None and line:
            self.window.docks["assembly"].raise_()
            editor.go_to(line)
            self.window.assembly_view.select_source_line(line)
        QApplication.processEvents()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.code = 0 if self.window.grab().save(str(self.path)) else 1
        if self.code:
            print(f"kernel-studio gui: could not write {self.path}", file=sys.stderr)
        self.window.close()
        QApplication.exit(self.code)


def _probe_startup(window: MainWindow) -> None:
    """Report (on stdout) once the window is exposed, then quit: for the startup benchmark."""
    handle = window.windowHandle()
    if handle is None or not handle.isExposed():
        QTimer.singleShot(5, lambda: _probe_startup(window))
        return
    print(f"exposed {time.perf_counter():.4f}", flush=True)
    window.close()
    QApplication.exit(0)


def run(files: Sequence[str] = (), screenshot: str | None = None) -> int:
    """Open the window (with files), run the event loop, return the exit code."""
    offline.enforce()
    app = application()
    if screenshot or _probing_startup():
        # A screenshot or a measurement must not depend on, or change, the user's layout.
        with tempfile.TemporaryDirectory(prefix="kernel-studio-") as folder:
            return _run_window(app, files, screenshot, Path(folder) / "settings.ini")
    return _run_window(app, files, screenshot, None)


def _run_window(app: QApplication, files: Sequence[str], screenshot: str | None,
                settings: Path | None) -> int:
    """Show the main window and run the event loop until it closes."""
    window = MainWindow(settings_path=settings, offer_recovery=not screenshot)
    window.show()
    # Open the files once the window has been painted: it is on screen at once.
    QTimer.singleShot(0, lambda: window.open_files(files))
    taker = ScreenshotTaker(window, Path(screenshot)) if screenshot else None
    if _probing_startup():
        QTimer.singleShot(0, lambda: _probe_startup(window))
    code = app.exec()
    return taker.code if taker is not None else code


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m ui.main [FILES...] [--screenshot PNG]`."""
    parser = argparse.ArgumentParser(prog="kernel-studio gui")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--screenshot", metavar="PNG")
    args = parser.parse_args(argv)
    return run(args.files, args.screenshot)


if __name__ == "__main__":
    sys.exit(main())
