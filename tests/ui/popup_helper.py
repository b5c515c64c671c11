"""Run by test_screenshot.py on Xvfb: open the completion popup and a call tip in the real
window, grab the whole screen (popups are separate windows), report what was visible."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from ui.main_window import MainWindow


def main() -> None:
    """argv: source file, screenshot path, settings path."""
    app = QApplication(sys.argv[:1])
    window = MainWindow(settings_path=Path(sys.argv[3]), offer_recovery=False)
    window.show()
    QTest.qWaitForWindowExposed(window)
    editor = window.open_files([sys.argv[1]])[0]
    window.activateWindow()
    editor.take_focus()
    editor.gotoPos(editor.lineEndPosition(13))
    QTest.keyClick(editor, Qt.Key.Key_Return)
    QTest.keyClicks(editor, "atomicA")
    QTest.qWait(300)
    popups = [[type(w).__name__, w.x(), w.y(), w.width(), w.height()]
              for w in app.topLevelWidgets() if w.isVisible() and w is not window]
    completion = bool(editor.autoCActive())
    app.primaryScreen().grabWindow(0).save(sys.argv[2])
    editor.autoCCancel()
    QTest.keyClicks(editor, "dd(")
    QTest.qWait(100)
    print(json.dumps({"completion": completion, "calltip": bool(editor.callTipActive()),
                      "popups": popups}), flush=True)
    window.tabs.current().setSavePoint()  # type: ignore[union-attr]
    window.close()


if __name__ == "__main__":
    main()
