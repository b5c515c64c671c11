"""Build (Ctrl+B) on a template kernel instantiates the entries of its spec: the Build result
holds scale<float, 4>'s kernel under its lowered name, with its SASS."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.base.paths import RESOURCES
from ui.main_window import MainWindow

LOWERED = "_Z5scaleIfLi4EEvPKT_PS0_S0_i"


def test_build_instantiates_the_specs_template_entry(qtbot: Any, window: MainWindow,
                                                     tmp_path: Path) -> None:
    folder = tmp_path / "kernels" / "scale"
    shutil.copytree(RESOURCES / "kernels" / "scale", folder)
    editor = window.open_files([folder / "scale.cu"])[0]
    spec = window.spec_panel.spec()
    assert spec is not None and spec.entry == "scale<float, 4>"
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    data = blocker.args[0]
    assert data["ok"], data.get("message")
    assert data["lowered"] == {"scale<float, 4>": LOWERED}
    assert [k["name"] for k in data["kernels"]] == [LOWERED]
    assert data["sass"][LOWERED]
