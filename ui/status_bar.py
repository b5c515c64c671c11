"""The status bar: backend, offline badge, worker state, caret position, progress and Cancel."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar, QWidget

from app.isolation import offline
from ui.progress_bar import BarFeed

WORKER_TIPS = {
    "stopped": "No job process is running; the next build, verify or bench starts one.",
    "starting": "Starting the job process (imports, then the worker on the first run).",
    "restarting": "Starting a fresh job process: the last one was cancelled or ended.",
    "idle": "The job process is warm: the next run reuses its imports and worker.",
    "busy": "The job process is running a job; Cancel stops it.",
}
BADGE_STYLE = "QLabel {{ border-radius: 3px; padding: 1px 6px; color: white; background: {}; }}"


class StudioStatusBar(QStatusBar):
    """Permanent facts on the right, transient messages on the left."""

    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        """Build the permanent widgets; the backend reads 'detecting' until set_backend()."""
        super().__init__(parent)
        self.position_label = QLabel("Ln 1, Col 1")
        self.position_label.setMinimumWidth(self.position_label.fontMetrics().horizontalAdvance(
            "Ln 99999, Col 999"))
        self.progress = QProgressBar()
        self.progress.setMaximumSize(120, 14)
        self.progress.setRange(0, 0)
        self.progress_feed = BarFeed(self.progress)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setFlat(True)
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.worker_label = QLabel("worker: idle")
        self._worker_state = "stopped"
        self._busy: str | None = None
        self.backend_label = QLabel("backend: detecting\u2026")
        self.offline_label = QLabel()
        for widget in (self.position_label, self.progress, self.cancel_button,
                       self.worker_label, self.backend_label, self.offline_label):
            self.addPermanentWidget(widget)
        self.set_busy(None)
        self.refresh_offline()

    def set_position(self, line: int, column: int) -> None:
        """Show the caret's line and column."""
        self.position_label.setText(f"Ln {line}, Col {column}")

    def set_backend(self, text: str, tooltip: str = "") -> None:
        """Show what runs kernels here: a GPU name, CPU emulation, or none."""
        self.backend_label.setText(f"backend: {text}")
        self.backend_label.setToolTip(tooltip)

    def refresh_offline(self) -> None:
        """Green OFFLINE when the network guard and offline variables are in place, else red."""
        guarded = offline.network_guard_installed() and not offline.missing_offline_env()
        self.offline_label.setText("OFFLINE" if guarded else "NOT OFFLINE")
        self.offline_label.setStyleSheet(BADGE_STYLE.format("#2e7d32" if guarded else "#c62828"))
        self.offline_label.setToolTip(
            "Network connections are refused and model libraries are kept offline."
            if guarded else "The offline guard is not active in this process.")

    def set_progress(self, text: str, fraction: float) -> None:
        """A running job's progress: its words on the left, a bar when it knows how far it is."""
        self.showMessage(text, 5000)
        self.progress_feed.show(fraction)

    def set_busy(self, what: str | None) -> None:
        """A running job shows progress and a Cancel button, and its activity as the state."""
        self._busy = what
        self.progress.setVisible(what is not None)
        self.progress_feed.show(-1.0)
        self.cancel_button.setVisible(what is not None)
        self._show_worker()

    def set_worker_state(self, state: str) -> None:
        """The job process's state: stopped, starting, restarting, idle (warm) or busy."""
        self._worker_state = state
        self._show_worker()

    def _show_worker(self) -> None:
        """One label for the worker: starting and restarting say so, then the activity."""
        state, busy = self._worker_state, self._busy
        if state in ("starting", "restarting"):
            text = f"worker: {state}\u2026"
        elif busy:
            text = f"worker: {busy}"
        else:
            text = "worker: idle (warm)" if state == "idle" else "worker: idle"
        self.worker_label.setText(text)
        self.worker_label.setToolTip(WORKER_TIPS.get(state, ""))
