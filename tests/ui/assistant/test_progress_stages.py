"""Issue 17, point 4: no silent waits. A build, a verification and an answer each show their
stages with a running clock (starting the job process and the worker, running the cases;
compiling; loading the model, reading the prompt in tokens, answering), then where the time
went. Real jobs in the real window; the answer comes from a scripted model session."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gui_support import selftest_kernel
from stand_in import WordTokens

from app.assist.model.answer import Answer
from app.assist.model.convert import default_model_folder
from app.assist.model.session import PREFILL_CHUNK, ModelSession
from app.isolation import offline
from ui.main_window import MainWindow


def test_a_verification_shows_each_stage_with_its_clock(qtbot: Any, window: MainWindow,
                                                        tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "hang", "hang")])
    window.runner.set_backend("selftest")
    window.runner.timeout = 2.0
    stages = window.results_pane.stages
    with qtbot.waitSignal(window.runner.verified, timeout=60000):
        assert window.verify()
        assert stages.running and stages.isVisibleTo(window.results_pane)
        qtbot.waitUntil(lambda: stages.names()[-1:] == ["Running the cases"], timeout=30000)
        # Each case runs the spec's 2 seeds and the fresh one drawn for this verification.
        assert "\u25b6 Running the cases: case 1 of 2, seed 1 of 3" in stages.label.text()
        before = stages.label.text()
        qtbot.waitUntil(lambda: stages.label.text() != before, timeout=3000)  # the clock runs
    assert stages.names()[:3] == ["Starting", "Starting the job process", "Starting the worker"]
    assert not stages.running
    assert re.match(r"Took \d+\.\d s: .*running the cases [12]\.\d s", stages.label.text())


def test_a_build_shows_its_stages(qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    with qtbot.waitSignal(window.buildFinished, timeout=120000):
        assert window.build()
    stages = window.compile_pane.stages
    assert "Compiling" in stages.names()
    assert stages.label.text().startswith("Took ")


class LoadingSession(WordTokens):
    """A stand-in model that reports what the real one does: loading (first use), reading the
    prompt in chunks of tokens, then the answer token by token."""

    def __init__(self, progress: Callable[[str, float], None], _adapter: str) -> None:
        """Not loaded yet."""
        self.progress = progress
        self.loaded = False

    def generate(self, messages: list[dict[str, str]], max_new_tokens: int,
                 on_token: Callable[[str], None], stop: threading.Event) -> Answer:
        """Load, read the prompt, answer, each taking a moment."""
        if not self.loaded:
            self.progress("loading weights (cpu, int8)", 0.7)
            time.sleep(0.3)
            self.loaded = True
            self.progress("ready", 1.0)
        total = self.count_messages(messages)
        for start in (0, total // 2):
            self.progress(f"reading the prompt: {start} of {total} tokens", start / total)
            time.sleep(0.3)
        for word in ("The ", "bounds ", "check."):
            on_token(word)
            time.sleep(0.1)
        return Answer("The bounds check.", "eos", total, 3, 0.5, 0.1)


@pytest.fixture
def loading(qtbot: Any, tmp_path: Path, prompter: Any) -> Iterator[MainWindow]:
    """A window whose model loads on the first question."""
    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=LoadingSession)
    qtbot.addWidget(window)
    window.show()
    yield window
    window.assistant_commands.shutdown()


def test_an_answer_shows_loading_reading_the_prompt_in_tokens_and_answering(
        qtbot: Any, loading: MainWindow, kernel_copy: Path) -> None:
    window = loading
    window.open_files([kernel_copy])
    pane = window.assistant_pane
    pane.question.setPlainText("Why check i < n?")
    seen: list[str] = []

    def reading_shown() -> bool:
        """Whether the pane shows the prompt being read, in tokens (keeping what it shows)."""
        seen.append(pane.stages.label.text())
        return "\u25b6 Reading the prompt: " in seen[-1] and "tokens" in seen[-1]

    pane.send_button.click()
    qtbot.waitUntil(reading_shown, timeout=10000)
    qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=10000)
    assert pane.stages.names() == ["Waiting for the model", "Loading the model",
                                   "Reading the prompt", "Answering"]
    assert re.search(r"Reading the prompt: \d+ (of \d+ )?tokens", seen[-1])
    assert any("\u25b6 Loading the model: loading weights" in text for text in seen)
    assert pane.stages.label.text().startswith("Took ")
    assert "answering" in pane.stages.label.text()
    pane.send_button.click()  # loaded now: straight to reading the prompt
    qtbot.waitUntil(lambda: pane.send_button.isEnabled() and not pane.stages.running,
                    timeout=10000)
    assert pane.stages.names() == ["Waiting for the model", "Reading the prompt", "Answering"]


@pytest.mark.skipif(not (default_model_folder() / "manifest.json").exists(),
                    reason="the default model is not prepared (make model)")
def test_the_real_model_reports_reading_the_prompt_in_tokens() -> None:
    offline.enforce()
    seen: list[tuple[str, float]] = []
    session = ModelSession(default_model_folder(), device="cpu", threads=1,
                           progress=lambda text, fraction: seen.append((text, fraction)))
    prompt = [{"role": "user", "content": "Explain:\n" + "y[i] = a * x[i] + y[i];\n" * 80}]
    try:
        answer = session.generate(prompt, max_new_tokens=2)
    finally:
        session.unload()
    reading = [(text, fraction) for text, fraction in seen if text.startswith("reading")]
    total = answer.prompt_tokens
    assert total > 2 * PREFILL_CHUNK
    assert reading[0] == (f"reading the prompt: 0 of {total} tokens", 0.0)
    assert reading[1][0] == f"reading the prompt: {PREFILL_CHUNK} of {total} tokens"
    assert [f for _, f in reading] == sorted(f for _, f in reading)
    assert seen.index(reading[0]) > next(i for i, (t, _) in enumerate(seen) if t == "ready")
