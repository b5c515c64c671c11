"""A build refused before the compiler ran (an unsupported arch, an option the allowlist
refuses) says why in the Build pane, not "0 error(s), 0 warning(s)" (issue 25, point 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from ui.main_window import MainWindow


@pytest.mark.parametrize(("arch", "options", "words"), [
    ("sm_999", "", "sm_999 is not supported"),
    (None, "--load-this-plugin", "--load-this-plugin"),
])
def test_a_refused_build_names_its_reason(qtbot: Any, window: MainWindow, kernel_copy: Path,
                                           arch: str | None, options: str, words: str) -> None:
    editor = window.open_files([kernel_copy])[0]
    window.runner.arch = arch
    window.runner.extra_options = tuple(options.split())
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert not blocker.args[0]["ok"]
    pane = window.compile_pane
    assert words in pane.summary.text() and "0 error(s)" not in pane.summary.text()
    assert words in pane.log.toPlainText()


def test_settings_refuse_an_architecture_this_nvrtc_cannot_build() -> None:
    from ui.preferences.table import problems

    assert "sm_999 is not supported" in problems({"build/arch": "sm_999"})["build/arch"]
    assert "not a real GPU architecture" in problems({"build/arch": "compute_90"})["build/arch"]
    assert "build/arch" not in problems({"build/arch": "sm_90"})
