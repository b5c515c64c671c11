"""The local model on its own long-lived QThread: prompts built and answers generated there,
tokens streamed back as signals, Stop through a thread-safe event.

Nothing here imports torch or transformers until the first question: the window starts fast
and a user who never asks never pays for the model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from ui.assistant.refine_job import run_refine

MAX_NEW_TOKENS = 512
READING = "reading the prompt: {} tokens"
AUTO = "auto"  # app.assist.model.adapters.AUTO, without importing it at startup
Progress = Callable[[str, float], None]
# (progress, adapter): the adapter as --adapter takes it (auto, none or a name).
SessionFactory = Callable[[Progress, str], Any]


def default_session(progress: Progress, adapter: str = AUTO) -> Any:
    """The default local model (checked and loaded on first use) with the adapter chosen, found
    as the command line finds it: auto is the model's 'default' adapter when it has one. It
    answers single questions and the batches of Propose and refine alike."""
    # The model stack loads with the first question on this thread, never at startup.
    from app.assist.model.adapters import resolve_adapter
    from app.assist.model.batch import BatchModel
    from app.assist.model.convert import default_model_folder

    folder = default_model_folder()
    return BatchModel(folder, progress=progress, adapter=resolve_adapter(folder, adapter))


class AssistantWorker(QObject):
    """Runs on the assistant thread; never touches a widget, only emits."""

    token = Signal(str)
    progress = Signal(str, float)
    prompted = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    attempt = Signal(object)

    def __init__(self, factory: SessionFactory, adapter: str = AUTO) -> None:
        """Keep the factory and the adapter; the session is made on the first request, on this
        thread."""
        super().__init__()
        self.factory = factory
        self.adapter = adapter
        self.stop_event = threading.Event()
        self._session: Any = None

    def session(self) -> Any:
        """The session, made with the chosen adapter on first use."""
        if self._session is None:
            self._session = self.factory(self.progress.emit, self.adapter)
        return self._session

    @Slot(str)
    def use_adapter(self, adapter: str) -> None:
        """Another adapter: the session is dropped (its weights unloaded) and the next request
        makes a new one. Queued on this thread, so never in the middle of an answer."""
        if adapter == self.adapter:
            return
        self.adapter = adapter
        unload = getattr(self._session, "unload", None)
        if callable(unload):
            unload()
        self._session = None

    @Slot(str, object, int)
    def generate(self, action: str, context: dict[str, str], max_new_tokens: int) -> None:
        """Build the action's prompt from the context snapshot, say what it costs (and what was
        cut to fit), stream the answer, and finish with its text split into code and words."""
        try:
            # The prompt builder (skills, tokenizer budget) loads on the model's thread.
            from app.assist.prompting.prompts import PromptContext, build_prompt

            prompt = build_prompt(action, PromptContext(**context), self.session(),
                                  max_new_tokens)
            self.prompted.emit({"summary": prompt.budget.summary(),
                                "warnings": prompt.budget.warnings(),
                                "skills": list(prompt.skills),
                                "prompt_tokens": prompt.budget.prompt_tokens})
            if getattr(self._session, "loaded", True):  # else loading reports first, then
                self.progress.emit(READING.format(prompt.budget.prompt_tokens), 0.0)  # "ready"
            answer = self._session.generate(prompt.messages, max_new_tokens, self.token.emit,
                                            self.stop_event)
        except Exception as error:  # noqa: BLE001 - every failure reaches the pane as words
            self.failed.emit(f"{type(error).__name__}: {error}" if not str(error) else str(error))
            return
        info = answer.as_dict()  # text, code, explanation, code_complete, speed, reason
        info["warnings"] = [*prompt.budget.warnings(), *answer.warnings]
        info["action"] = action
        self.finished.emit(info)


    @Slot(object)
    def refine(self, request: dict[str, Any]) -> None:
        """Propose and refine kernels for a spec file (ui.assistant.refine_job says how);
        every attempt is emitted as the verifier judges it; Stop ends the whole loop."""
        try:
            info = run_refine(self.session(), request, self.stop_event, self.attempt.emit,
                              self.token.emit)
        except Exception as error:  # noqa: BLE001 - every failure reaches the pane as words
            self.failed.emit(f"{type(error).__name__}: {error}" if not str(error) else str(error))
            return
        self.finished.emit(info)


class AssistantRunner(QObject):
    """Owns the assistant thread and its worker; created on the first question."""

    request = Signal(str, object, int)
    refine_request = Signal(object)
    adapter_request = Signal(str)

    def __init__(self, factory: SessionFactory | None = None,
                 parent: QObject | None = None, adapter: str = AUTO) -> None:
        """Start the thread with the worker on it."""
        super().__init__(parent)
        self.assistant_thread = QThread(self)
        self.assistant_thread.setObjectName("assistant")
        self.worker = AssistantWorker(factory or default_session, adapter)
        self.worker.moveToThread(self.assistant_thread)
        self.request.connect(self.worker.generate)
        self.refine_request.connect(self.worker.refine)
        self.adapter_request.connect(self.worker.use_adapter)
        self.assistant_thread.finished.connect(self.worker.deleteLater)
        self.assistant_thread.start()
        self.busy = False
        self.worker.finished.connect(self._done)
        self.worker.failed.connect(self._done)

    def ask(self, action: str, context: dict[str, str],
            max_new_tokens: int = MAX_NEW_TOKENS) -> bool:
        """Queue a question for the worker; False while an answer is still coming."""
        if self.busy:
            return False
        self.busy = True
        self.worker.stop_event.clear()
        self.request.emit(action, dict(context), max_new_tokens)
        return True

    def refine(self, request: dict[str, Any]) -> bool:
        """Queue a Propose-and-refine run for the worker; False while one is running."""
        if self.busy:
            return False
        self.busy = True
        self.worker.stop_event.clear()
        self.refine_request.emit(dict(request))
        return True

    def use_adapter(self, adapter: str) -> None:
        """Answer from the next request on with this adapter (auto, none or a name); the worker
        takes it after the answer under way, if any."""
        self.adapter_request.emit(adapter)

    def stop(self) -> None:
        """End the answer being generated (the model checks the event between steps)."""
        self.worker.stop_event.set()

    def _done(self, *_: object) -> None:
        """The worker finished or failed."""
        self.busy = False

    def shutdown(self) -> None:
        """Stop any answer and end the thread (the window is closing)."""
        self.stop()
        self.assistant_thread.quit()
        self.assistant_thread.wait(10_000)
