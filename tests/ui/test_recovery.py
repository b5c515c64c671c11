"""Never lose the user's text: autosave within 2 s of the last change, recovery after a real
crash (a child process killed with SIGKILL), and a clean exit that leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gui_support import ScriptedPrompter

from app.workspace import recovery
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def crash_after_editing(path: Path, text: str, data: Path, settings: Path) -> float:
    """Edit `path` in a child window that then dies; returns seconds until its autosave."""
    env = {**os.environ, "KERNEL_STUDIO_DATA": str(data), "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("crash_helper.py")),
                           str(path), text, str(settings)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == -9, done.stderr  # killed, as by a crash
    line = next(x for x in done.stdout.splitlines() if x.startswith("autosaved"))
    return float(line.split()[1])


def test_an_autosaved_buffer_is_offered_back_after_a_crash(
        qtbot: Any, kernel_copy: Path, private_data: Path, tmp_path: Path,
        prompter: ScriptedPrompter) -> None:
    original = kernel_copy.read_text()
    seconds = crash_after_editing(kernel_copy, "// unsaved work\n", private_data,
                                  tmp_path / "crashed.ini")
    assert seconds <= 2.0
    assert kernel_copy.read_text() == original  # the crash never touched the file
    window = MainWindow(settings_path=tmp_path / "next.ini", prompter=prompter,
                        offer_recovery=False)
    qtbot.addWidget(window)
    window.show()
    assert window.offer_recovery() == 1
    assert prompter.asked[-1] == ("recover", ["vector_add.cu"])
    editor = window.tabs.current()
    assert editor is not None and editor.is_modified()
    assert editor.text() == "// unsaved work\n" + original
    assert window.tabs.document(editor).path == kernel_copy
    # The old session's folder is gone; the text now lives in this session's recovery folder.
    assert recovery.crashed_sessions() == []
    assert window.recovery.has(window.tabs.document(editor).buffer_id)
    assert window.tabs.save(editor)
    assert kernel_copy.read_text() == "// unsaved work\n" + original
    assert not window.recovery.has(window.tabs.document(editor).buffer_id)


def test_declined_recovery_is_set_aside_not_deleted(
        qtbot: Any, kernel_copy: Path, private_data: Path, tmp_path: Path,
        prompter: ScriptedPrompter) -> None:
    crash_after_editing(kernel_copy, "// keep me\n", private_data, tmp_path / "crashed.ini")
    prompter.recover = False
    window = MainWindow(settings_path=tmp_path / "next.ini", prompter=prompter,
                        offer_recovery=False)
    qtbot.addWidget(window)
    assert window.offer_recovery() == 0 and window.tabs.count() == 0
    kept = list(recovery.set_aside_root().rglob("*.json"))
    assert len(kept) == 1 and "// keep me" in kept[0].read_text()
    assert window.offer_recovery() == 0 and prompter.asked.count(prompter.asked[-1]) == 1


def test_a_live_session_is_never_offered_and_a_clean_exit_leaves_nothing(
        qtbot: Any, kernel_copy: Path, tmp_path: Path, prompter: ScriptedPrompter) -> None:
    window = MainWindow(settings_path=tmp_path / "a.ini", prompter=prompter,
                        offer_recovery=False)
    qtbot.addWidget(window)
    editor = window.open_files([kernel_copy])[0]
    editor.insertText(0, "// live\n")
    window.tabs.autosave(editor)
    assert recovery.recoverable() == []  # its lock is held: not a crash
    assert window.close()
    assert not window.recovery.folder.exists()
