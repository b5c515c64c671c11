"""GUI test fixtures: the real window offscreen, a scripted prompter, private folders, and a
check that every test leaves no top-level widget behind."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from gui_support import ScriptedPrompter
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QWidget

from app.base.paths import RESOURCES
from ui.main_window import MainWindow


def _flush_deletes() -> None:
    """Run pending deleteLater() calls."""
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QApplication.processEvents()


@pytest.fixture(autouse=True)
def no_leaked_top_level_widgets(qapp: QApplication) -> Iterator[None]:
    """Fail a test that leaves a top-level widget alive (set up first, so checked last)."""
    # C++ addresses, not id(): PySide may wrap a C++-made widget anew on each call, and a new
    # wrapper's id may be an old one's (hiding a leak) or differ (reporting a false one).
    before = {shiboken6.getCppPointer(w)[0] for w in QApplication.topLevelWidgets()}
    yield
    _flush_deletes()
    leaked = [w for w in QApplication.topLevelWidgets()
              if shiboken6.getCppPointer(w)[0] not in before]
    names = [f"{type(w).__name__}({w.objectName() or w.windowTitle()!r})" for w in leaked]
    for widget in leaked:
        widget.close()
        widget.deleteLater()
    _flush_deletes()
    assert not names, f"leaked top-level widgets: {names}"


@pytest.fixture(autouse=True)
def private_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder (settings, recovery) of this test's own."""
    data = tmp_path / "data"
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(data))
    return data


@pytest.fixture
def prompter() -> ScriptedPrompter:
    """The scripted prompter the window fixture uses."""
    return ScriptedPrompter()


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, prompter: ScriptedPrompter) -> Iterator[MainWindow]:
    """The real main window, shown offscreen, with its settings in tmp."""
    main = MainWindow(settings_path=tmp_path / "settings.ini", prompter=prompter,
                      offer_recovery=False)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    yield main
    main.runner.shutdown()


@pytest.fixture
def kernel_copy(tmp_path: Path) -> Path:
    """A private copy of the vector_add template; returns its .cu path."""
    target = tmp_path / "kernels" / "vector_add"
    shutil.copytree(RESOURCES / "kernels" / "vector_add", target)
    return target / "vector_add.cu"


def editor_widget(main: MainWindow) -> QWidget:
    """The current editor (asserting there is one)."""
    editor = main.tabs.current()
    assert editor is not None
    return editor
