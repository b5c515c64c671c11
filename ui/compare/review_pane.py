"""The Compare dock: the compare view and the bundle view as two pages, with a Cancel button
while a compare or a bundle check runs."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTabWidget, QVBoxLayout, QWidget

from ui.compare.bundle_view import BundleView
from ui.compare.compare_view import CompareView


class ReviewPane(QWidget):
    """Compare and bundle pages."""

    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        """Both pages, the compare page first."""
        super().__init__(parent)
        self.compare = CompareView()
        self.bundle = BundleView()
        self.pages = QTabWidget()
        self.pages.addTab(self.compare, "Variants")
        self.pages.addTab(self.bundle, "Bundle check")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.cancel_button.setVisible(False)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages, 1)
        layout.addLayout(row)

    def set_running(self, running: bool) -> None:
        """Show Cancel while a job runs."""
        self.cancel_button.setVisible(running)

    def show_page(self, name: str) -> None:
        """'compare' or 'bundle'."""
        self.pages.setCurrentWidget(self.compare if name == "compare" else self.bundle)
