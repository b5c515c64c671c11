"""The Assistant pane's adapter control: it says which adapter the next question loads (with its
held-out pass@1), lists automatic, none and every adapter of the model with refused ones
disabled, keeps the choice in the settings file, and a switch reaches the model's thread as a
new session made with the new adapter (the old one unloaded), never a load at startup.

The adapters are real: the shipped default adapter copied (hard links) into a private models
folder, a second one re-sealed with the real manifest functions, and a tampered third."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QApplication
from stand_in import WordTokens

from app.assist.model import adapters as teach_adapters
from app.assist.model.adapters import CARD_NAME, recorded_source, seal
from app.assist.model.answer import Answer
from app.assist.model.convert import DEFAULT_MODEL_NAME, default_model_folder
from app.base.paths import RESOURCES
from ui.assistant import adapter_choice, worker
from ui.assistant.adapter_choice import AdapterChoice
from ui.main_window import MainWindow

SHIPPED = RESOURCES / "adapters" / DEFAULT_MODEL_NAME / "default"


def _link_or_copy(source: str, target: str) -> None:
    """A hard link (the weights are 19 MB), a copy across file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _adapter(root: Path, name: str) -> Path:
    """The shipped adapter under another name (files linked; every write here is atomic)."""
    return Path(shutil.copytree(SHIPPED, root / name, copy_function=_link_or_copy))


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A models folder whose default model has three adapters: the shipped 'default', 'short'
    (its card without an evaluation, sealed again) and 'tampered' (its card edited after)."""
    root = tmp_path / "models" / DEFAULT_MODEL_NAME / "adapters"
    root.mkdir(parents=True)
    _adapter(root, "default")
    for name in ("short", "tampered"):
        folder = _adapter(root, name)
        card = json.loads((folder / CARD_NAME).read_text(encoding="utf-8"))
        card.pop("eval")
        (folder / CARD_NAME).unlink()  # a new file, never a write through the link
        (folder / CARD_NAME).write_text(json.dumps(card), encoding="utf-8")
        if name == "short":
            seal(folder, recorded_source(folder))
    monkeypatch.setenv("KERNEL_STUDIO_MODELS", str(tmp_path / "models"))
    return root.parent


class RecordingSession(WordTokens):
    """A stand-in model that says which adapter it was made with and whether it was unloaded."""

    def __init__(self, progress: Callable[[str, float], None], adapter: str) -> None:
        """Made by the worker's factory on the model's thread."""
        progress("ready", 1.0)
        self.adapter, self.unloaded = adapter, False

    def generate(self, messages: list[Any], max_new_tokens: int,
                 on_token: Callable[[str], None], stop: threading.Event) -> Answer:
        """Answer with the adapter's name."""
        on_token(self.adapter)
        return Answer(self.adapter, "eos", 10, 1, 0.1)

    def unload(self) -> None:
        """Drop the (pretend) weights."""
        self.unloaded = True


@pytest.fixture
def assisted(qtbot: Any, tmp_path: Path, prompter: Any,
             models: Path) -> Iterator[tuple[MainWindow, list[RecordingSession]]]:
    """A shown window whose assistant makes RecordingSessions, the assistant pane in front."""
    sessions: list[RecordingSession] = []

    def factory(progress: Callable[[str, float], None], adapter: str) -> RecordingSession:
        sessions.append(RecordingSession(progress, adapter))
        return sessions[-1]

    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=factory)
    qtbot.addWidget(window)
    window.show()
    window.show_pane("assistant")
    choice = window.assistant_pane.adapter_choice
    qtbot.waitUntil(lambda: choice.box.count() > 2)  # read once the pane is shown
    yield window, sessions
    if window.assistant is not None:
        window.assistant.shutdown()


def _entries(choice: AdapterChoice) -> list[tuple[str, str, bool, str]]:
    """(value, title, enabled, tooltip) of each entry of the list."""
    model = choice.box.model()
    assert isinstance(model, QStandardItemModel)
    return [(choice.box.itemData(i), choice.box.itemText(i), model.item(i).isEnabled(),
             str(choice.box.itemData(i, Qt.ItemDataRole.ToolTipRole) or ""))
            for i in range(choice.box.count())]


def test_the_label_names_the_default_adapter_and_its_held_out_score(assisted: Any) -> None:
    window, sessions = assisted
    choice = window.assistant_pane.adapter_choice
    assert choice.choice() == "auto"
    assert choice.text() == "Adapter: default (automatic) \u2014 held-out pass@1 0.43"
    assert choice.label.buddy() is choice.box  # Alt+A
    assert sessions == []  # listing adapters loads no model


def test_the_list_has_automatic_none_every_adapter_and_the_tampered_one_disabled(
        assisted: Any) -> None:
    window, _sessions = assisted
    entries = _entries(window.assistant_pane.adapter_choice)
    assert [(v, t, e) for v, t, e, _tip in entries] == [
        ("auto", "automatic (default)", True), ("none", "none (base model)", True),
        ("default", "default (held-out pass@1 0.43)", True),
        ("short", "short (held-out pass@1 not measured)", True),
        ("tampered", "tampered", False)]
    tip = entries[-1][3]
    assert "tampered" in tip and CARD_NAME in tip  # the manifest check's own words


def _ask(qtbot: Any, window: MainWindow, kernel: Path) -> str:
    """Ask a question and wait for the answer; the answer's text (the session's adapter)."""
    window.open_files([kernel])
    assert window.ask_assistant("ask", "which adapter?")
    pane = window.assistant_pane
    qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=10_000)
    return pane.answer.toPlainText().strip()


def test_switching_from_the_keyboard_makes_a_new_session_with_the_new_adapter(
        qtbot: Any, assisted: Any, kernel_copy: Path, tmp_path: Path) -> None:
    window, sessions = assisted
    choice = window.assistant_pane.adapter_choice
    assert _ask(qtbot, window, kernel_copy) == "auto"
    window.activateWindow()
    qtbot.keyClick(window.assistant_pane, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is choice.box)
    qtbot.keyClick(choice.box, Qt.Key.Key_Down)  # automatic -> none
    assert choice.choice() == "none"
    assert choice.text() == "Adapter: none, the base model alone"
    assert "next question" in window.assistant_pane.status.text()
    assert len(sessions) == 1  # nothing is made until the next question
    assert _ask(qtbot, window, kernel_copy) == "none"
    assert [s.adapter for s in sessions] == ["auto", "none"]
    assert sessions[0].unloaded and not sessions[1].unloaded
    stored = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert stored.value("assistant/adapter") == "none"


def test_a_refused_adapter_cannot_be_picked_and_a_kept_one_says_why(
        qtbot: Any, assisted: Any, models: Path, tmp_path: Path) -> None:
    window, _sessions = assisted
    choice = window.assistant_pane.adapter_choice
    choice.box.setFocus()
    for _ in range(3):  # automatic -> none -> default -> short
        qtbot.keyClick(choice.box, Qt.Key.Key_Down)
    assert choice.choice() == "short"
    qtbot.keyClick(choice.box, Qt.Key.Key_Down)  # the tampered one is skipped: no change
    assert choice.choice() == "short"
    assert choice.text() == "Adapter: short \u2014 held-out pass@1 not measured"
    # A choice kept from before that has since been refused: said in the line, not hidden.
    choice.set_choice("tampered")
    assert choice.text().startswith("Adapter: tampered: refused: ")
    assert choice.label.styleSheet() == adapter_choice.WARNING_STYLE


def test_the_choice_is_kept_for_the_next_window(qtbot: Any, tmp_path: Path, prompter: Any,
                                                models: Path) -> None:
    settings = tmp_path / "kept.ini"
    store = QSettings(str(settings), QSettings.Format.IniFormat)
    store.setValue("assistant/adapter", "short")
    store.sync()
    window = MainWindow(settings_path=settings, prompter=prompter, offer_recovery=False)
    qtbot.addWidget(window)
    window.show()
    window.show_pane("assistant")
    choice = window.assistant_pane.adapter_choice
    qtbot.waitUntil(lambda: choice.box.count() > 2)
    assert choice.choice() == "short" and choice.box.currentData() == "short"
    assert choice.text() == "Adapter: short \u2014 held-out pass@1 not measured"
    window.runner.shutdown()


def test_the_gui_loads_what_the_command_line_loads(models: Path) -> None:
    folder = models
    made = {name: worker.default_session(lambda _m, _f: None, name)
            for name in ("auto", "none", "short")}
    assert {name: s.adapter for name, s in made.items()} == {
        name: teach_adapters.resolve_adapter(folder, name) for name in made}
    assert made["auto"].adapter == "default" and made["none"].adapter is None
    assert made["auto"].folder == folder and not made["auto"].loaded
    shutil.rmtree(folder / "adapters" / "default")  # no default adapter: auto is the base model
    assert worker.default_session(lambda _m, _f: None, "auto").adapter is None


def test_the_names_match_the_core() -> None:
    assert (adapter_choice.AUTO, adapter_choice.NONE, adapter_choice.DEFAULT_NAME) == (
        teach_adapters.AUTO, teach_adapters.NONE, teach_adapters.DEFAULT_NAME)
    assert worker.AUTO == teach_adapters.AUTO


@pytest.mark.skipif(not os.environ.get("KERNEL_STUDIO_SLOW_TESTS"),
                    reason="loads the real model (about a minute on 2 shared cores); set "
                           "KERNEL_STUDIO_SLOW_TESTS=1 to run it")
@pytest.mark.skipif(not (default_model_folder() / "adapters" / "default").is_dir(),
                    reason="the default model or its adapter is not installed (make model)")
def test_the_real_window_answers_with_the_default_adapter(qtbot: Any, window: MainWindow,
                                                          kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    window.show_pane("assistant")
    pane = window.assistant_pane
    qtbot.waitUntil(lambda: "held-out pass@1" in pane.adapter_choice.text())
    assert window.ask_assistant("explain", "What does this kernel compute?")
    qtbot.waitUntil(lambda: len(pane.answer.toPlainText()) > 0, timeout=180_000)
    assert window.assistant is not None
    pane.stop_button.click()
    qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=10_000)
    session = window.assistant.worker.session()
    assert session.adapter == "default" and session.loaded
    assert session.prompt_style == "compact-v1"  # the style the adapter's card names
