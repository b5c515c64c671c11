"""Issue 25, point 14 (Settings): every setting's help text wraps and is shown in full, at the
dialog's size and when the dialog is made narrower."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

from ui.preferences.dialog import PreferencesDialog
from ui.preferences.table import PREFERENCES


def test_help_texts_wrap_and_show_every_line(qtbot: Any) -> None:
    dialog = PreferencesDialog({})
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    meanings = {p.meaning for p in PREFERENCES}
    hints = [label for label in dialog.findChildren(QLabel) if label.text() in meanings]
    assert len(hints) == len(PREFERENCES)
    for width in (dialog.width(), 420):
        dialog.resize(width, dialog.height())
        qtbot.waitUntil(lambda w=width: dialog.width() == w, timeout=2000)
        for hint in hints:
            assert hint.wordWrap(), hint.text()
            assert hint.width() <= dialog.width()
            needed = hint.heightForWidth(hint.width())
            qtbot.waitUntil(lambda h=hint, n=needed: h.height() >= n, timeout=2000)
    assert any(hint.heightForWidth(hint.width()) > hint.fontMetrics().lineSpacing() * 1.5
               for hint in hints)  # some do take more than one line
