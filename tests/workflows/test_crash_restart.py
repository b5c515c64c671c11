"""A crash with unsaved text and a changed layout, then a restart (issue 25, point 10): the
kernels, the unsaved text, the theme, the window's size and the closed dock are all back, the
file on disk never changed, and the crashed session's temporary folder is gone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from gui_support import ScriptedPrompter

from app.base.paths import RESOURCES
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
LINE = "// unsaved before the crash\n"


def test_kill_9_then_restart_brings_the_whole_workspace_back(
        qtbot: Any, tmp_path: Path, private_data: Path, prompter: ScriptedPrompter) -> None:
    kernels = []
    for name in ("vector_add", "saxpy"):
        shutil.copytree(RESOURCES / "kernels" / name, tmp_path / name)
        kernels.append(tmp_path / name / f"{name}.cu")
    saved = kernels[0].read_text()
    settings = tmp_path / "settings.ini"
    env = {**os.environ, "KERNEL_STUDIO_DATA": str(private_data), "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("crash_session.py")),
                           str(settings), LINE, *map(str, kernels)], env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == -9, done.stdout + done.stderr  # killed, as by a crash
    assert "kept" in done.stdout.split(), done.stdout
    copy = Path(next(x for x in done.stdout.splitlines() if x.startswith("copy ")).split()[1])
    assert copy.is_dir()

    prompter.recover = True
    window = MainWindow(settings_path=settings, prompter=prompter)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: window.tabs.count() == 2 and bool(window.tabs.modified_editors()),
                        timeout=30_000)
        paths = [window.tabs.document(e).path for e in window.tabs.editors()]
        assert sorted(paths) == sorted(kernels)
        first = window.tabs.find_path(kernels[0])
        assert first is not None and first.text().startswith(LINE) and first.is_modified()
        assert kernels[0].read_text() == saved
        assert window.themes.theme.name == "light"
        assert (window.width(), window.height()) == (760, 560)
        assert not window.docks["assistant"].isVisible()
        qtbot.waitUntil(lambda: not copy.exists(), timeout=10_000)
    finally:
        window.runner.shutdown()
