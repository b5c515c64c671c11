"""Propose -> Apply -> Verify -> Undo, as a person does it in the window: the proposal applies
as one undoable edit, its unsaved text is what Verify runs, Undo brings the old text back and
that verifies too; the file on disk never changes. The model is a stand-in streaming a fixed
answer (what a model would say is not under test); the window, the parser, the CPU backend and
the verifier are real."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from stand_in import ANSWER, PROPOSED, ScriptedSession

from app.engine.verify.results import Verdict
from ui.main_window import MainWindow


def verify_now(qtbot: Any, window: MainWindow) -> Verdict:
    """Press F5 and wait for the verdict."""
    with qtbot.waitSignal(window.runner.verified, timeout=180_000) as blocker:
        qtbot.keyClick(window.tabs.current(), Qt.Key.Key_F5)
    return blocker.args[0]


def test_propose_apply_verify_undo(qtbot: Any, tmp_path: Path, prompter: Any,
                                   kernel_copy: Path) -> None:
    def factory(progress: Callable[[str, float], None], _adapter: str) -> ScriptedSession:
        progress("ready", 1.0)
        return ScriptedSession(ANSWER, 100_000)

    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=factory)
    qtbot.addWidget(window)
    window.show()
    try:
        window.runner.set_backend("cpu")
        saved = kernel_copy.read_text()
        editor = window.open_files([kernel_copy])[0]
        pane = window.assistant_pane
        pane.set_action("propose")
        pane.question.setPlainText("c = a + b with a grid-stride loop")
        pane.send_button.click()
        qtbot.waitUntil(lambda: pane.apply_button.isEnabled(), timeout=30_000)
        pane.apply_button.click()
        assert editor.text() == PROPOSED and editor.is_modified()
        applied = verify_now(qtbot, window)
        assert applied.status == "passed" and window.runner.folders.holds(window.runner.last_spec)
        editor.take_focus()
        qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert editor.text() == saved and not editor.is_modified()
        assert verify_now(qtbot, window).status == "passed"
        assert window.runner.last_spec == kernel_copy.with_suffix(".toml")  # the saved files
        assert kernel_copy.read_text() == saved
    finally:
        window.assistant_commands.shutdown()
        window.runner.shutdown()
