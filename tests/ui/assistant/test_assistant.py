"""The Assistant pane: the model runs on its own thread, tokens stream into the pane, Stop
ends the answer, and the model thread sees a snapshot of the kernel, never a widget."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stand_in import WordTokens

from app.assist.model.answer import Answer
from app.assist.model.convert import default_model_folder
from ui.main_window import MainWindow


class SlowSession(WordTokens):
    """A stand-in model: streams numbered tokens every 20 ms from its own thread, honours
    the stop event, and records what it was asked and on which thread."""

    def __init__(self, progress: Callable[[str, float], None]) -> None:
        """Report 'loaded' like the real session does."""
        progress("ready", 1.0)
        self.messages: list[Any] = []
        self.thread: threading.Thread | None = None

    def generate(self, messages: list[Any], max_new_tokens: int,
                 on_token: Callable[[str], None], stop: threading.Event) -> Answer:
        """Stream until stopped or out of tokens."""
        self.messages, self.thread = messages, threading.current_thread()
        for index in range(max_new_tokens):
            if stop.is_set():
                return Answer(f"{index} tokens", "stopped", 10, index, 0.1)
            on_token(f"t{index} ")
            time.sleep(0.02)
        return Answer("all", "length", 10, max_new_tokens, 1.0)


@pytest.fixture
def assisted(qtbot: Any, tmp_path: Path, prompter: Any) -> Any:
    """A window whose assistant uses SlowSession."""
    sessions: list[SlowSession] = []

    def factory(progress: Callable[[str, float], None], _adapter: str) -> SlowSession:
        sessions.append(SlowSession(progress))
        return sessions[-1]

    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=factory)
    qtbot.addWidget(window)
    window.show()
    yield window, sessions
    if window.assistant is not None:
        window.assistant.shutdown()


def test_answers_stream_in_and_stop_ends_them(qtbot: Any, assisted: Any,
                                              kernel_copy: Path) -> None:
    window, sessions = assisted
    window.open_files([kernel_copy])
    pane = window.assistant_pane
    pane.question.setPlainText("Why check i < n?")
    pane.send_button.click()
    qtbot.waitUntil(lambda: "t3 " in pane.answer.toPlainText(), timeout=10000)
    assert pane.stop_button.isEnabled() and not pane.send_button.isEnabled()
    session = sessions[0]
    assert session.thread is not threading.main_thread()  # the model's own thread
    prompt = "\n".join(m["content"] for m in session.messages)
    assert "Why check i < n?" in prompt and "vector_add(const float*" in prompt
    started = time.perf_counter()
    pane.stop_button.click()
    # The pane's own state, not the worker's signal: a waitSignal on the worker fires on the
    # worker's thread, before the queued call that updates the pane has run.
    qtbot.waitUntil(lambda: pane.status.text().startswith("Stopped."), timeout=5000)
    assert time.perf_counter() - started < 1.0
    assert pane.send_button.isEnabled()


def test_an_action_without_its_context_says_what_is_missing(qtbot: Any, assisted: Any) -> None:
    window, _ = assisted
    pane = window.assistant_pane
    pane.action_box.setCurrentIndex(pane.action_box.findData("fix_compile"))
    assert window.ask_assistant("fix_compile", "")
    qtbot.waitUntil(lambda: "could not answer" in pane.status.text(), timeout=10000)
    assert "diagnostics" in pane.status.text()


@pytest.mark.skipif(not os.environ.get("KERNEL_STUDIO_SLOW_TESTS"),
                    reason="loads the real model (about a minute on 2 shared cores); set "
                           "KERNEL_STUDIO_SLOW_TESTS=1 to run it")
@pytest.mark.skipif(not (default_model_folder() / "manifest.json").exists(),
                    reason="the default model is not prepared (make model)")
def test_the_real_local_model_streams_and_stops(qtbot: Any, window: MainWindow,
                                                kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    pane = window.assistant_pane
    assert window.ask_assistant("explain", "What does this kernel compute?")
    qtbot.waitUntil(lambda: len(pane.answer.toPlainText()) > 0, timeout=120000)
    assert window.assistant is not None
    pane.stop_button.click()
    qtbot.waitUntil(lambda: pane.status.text().startswith("Stopped."), timeout=10000)
