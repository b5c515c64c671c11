"""The window's side of the assistant: send snapshots to the model's thread, turn an answer with
code into a proposal shown as a diff, and apply it to the buffer as one undoable step.

Applying never runs anything: the proposed code is compiled, verified or timed only when the
user then asks, through the same worker and verifier as any kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QSettings

from app.base.paths import proposals_dir
from ui.assistant.pane import AssistantPane, action_title
from ui.assistant.worker import AssistantRunner, SessionFactory
from ui.commands.assistant_context import ContextSources
from ui.editor.cuda_editor import CudaEditor
from ui.eval.view import EvalDialog
from ui.message_log import Reporter
from ui.preferences.table import ASSISTANT_ADAPTER, read_one, write_one

NEW_BUFFER_TITLE = "proposed.cu"


@dataclass(frozen=True)
class Proposal:
    """Code the model proposed, and the buffer (and its version) the diff was made against."""

    code: str
    buffer_id: str | None
    version: int
    complete: bool


class AssistantCommands(QObject):
    """Owns the assistant's thread (made on the first question) and the pending proposal."""

    def __init__(self, pane: AssistantPane, sources: ContextSources, *,
                 report: Reporter, show_pane: Callable[[str], None],
                 factory: SessionFactory | None = None, store: QSettings | None = None,
                 parent: QObject | None = None) -> None:
        """Nothing starts until the first question. `sources` are the panes a question's
        snapshot is read from (their tabs are where proposals are applied); `factory` makes the
        model session (tests hand in a scripted one); `store` keeps the adapter chosen."""
        super().__init__(parent)
        self.store = store
        self.pane, self.sources, self.tabs = pane, sources, sources.tabs
        self.report, self.show_pane = report, show_pane
        self.factory = factory
        self.runner: AssistantRunner | None = None
        self.proposal: Proposal | None = None
        self._target: str | None = None  # the buffer current when the question was sent
        self.eval_dialog: EvalDialog | None = None

    def wire(self) -> None:
        """Route the pane's requests here."""
        self.pane.askRequested.connect(self.ask)
        self.pane.stopRequested.connect(self.stop)
        self.pane.applyRequested.connect(self.apply)
        self.pane.discardRequested.connect(self.discard)
        self.pane.attempts.stopRequested.connect(self.stop)
        self.pane.attempts.applyRequested.connect(self.apply_attempt)
        self.pane.evalRequested.connect(self.show_eval)
        if self.store is not None:
            self.pane.adapter_choice.keep(str(read_one(self.store, ASSISTANT_ADAPTER)))
        self.pane.adapter_choice.chosen.connect(self.use_adapter)

    def stop(self) -> None:
        """Stop the answer being written, or the whole Propose-and-refine loop."""
        if self.runner is not None:
            self.runner.stop()

    def use_adapter(self, adapter: str) -> None:
        """The adapter chosen in the pane, kept in the settings file: a running model's thread
        makes a new session with it for the next question (one not started yet reads the choice
        when it starts)."""
        if self.store is not None:
            write_one(self.store, ASSISTANT_ADAPTER, adapter)
        if self.runner is not None:
            self.runner.use_adapter(adapter)

    def _start_runner(self) -> AssistantRunner:
        """The model's thread and worker, connected to the pane."""
        runner = AssistantRunner(self.factory, self, self.pane.adapter_choice.choice())
        worker, pane = runner.worker, self.pane
        worker.token.connect(pane.append)
        worker.progress.connect(pane.show_progress)
        worker.prompted.connect(pane.show_prompt)
        worker.finished.connect(self.answered)
        worker.failed.connect(pane.fail)
        worker.attempt.connect(pane.attempts.add_attempt)
        return runner

    def ask(self, action: str, question: str) -> bool:
        """Send a snapshot of the kernel and the question (for propose: the description)."""
        self.runner = self.runner or self._start_runner()
        if action == "propose_rounds":
            return self.refine(question)
        context = self.sources.gather(question)
        if action == "propose" and "question" in context:
            context["description"] = context.pop("question")
        if not self.runner.ask(action, context):
            return False
        editor = self.tabs.current()
        self._target = self.tabs.document(editor).buffer_id if editor else None
        self.proposal = None
        self.pane.begin(action_title(action))
        self.show_pane("assistant")
        return True

    def refine(self, description: str) -> bool:
        """Propose, verify and refine kernels for the spec file of the Spec pane: K chains of
        up to R rounds, every attempt listed as the verifier judges it."""
        spec = self.sources.spec_panel.path
        if spec is None or not spec.is_file():
            self.report("error", "Propose, verify and refine needs a spec file",
                        "Open or save the kernel's spec (the Spec pane), then ask again.")
            return False
        request = {"spec": str(spec), "description": description.strip(),
                   "chains": self.pane.chains_box.value(), "rounds": self.pane.rounds_box.value(),
                   "speed_rounds": self.pane.speed_rounds(),
                   "run_dir": str(proposals_dir(spec))}
        assert self.runner is not None
        if not self.runner.refine(request):
            return False
        editor = self.tabs.current()
        self._target = self.tabs.document(editor).buffer_id if editor else None
        self.proposal = None
        self.pane.begin(action_title("propose_rounds"))
        self.pane.show_attempts()
        self.show_pane("assistant")
        return True

    def apply_attempt(self, code: str) -> bool:
        """Apply one attempt's kernel to the buffer the run was started from (one undo step)."""
        self.propose(code, self._target)
        return self.apply()

    def show_eval(self) -> None:
        """The evaluations in the local results store, in a window of their own (made once,
        a child of the main window, read again each time it is shown)."""
        if self.eval_dialog is None:
            self.eval_dialog = EvalDialog(self.pane.window())
        else:
            self.eval_dialog.view.refresh()
        self.eval_dialog.show()
        self.eval_dialog.raise_()

    # -- proposals ----------------------------------------------------------------------------

    def answered(self, info: dict[str, Any]) -> None:
        """Show how the answer ended; code in it becomes a proposal, shown as a diff."""
        self.pane.finish(info)
        if info.get("action") == "propose_rounds":
            self._refined(info)
        code = info.get("code")
        if isinstance(code, str) and code.strip():
            self.propose(code, self._target, bool(info.get("code_complete", True)))

    def _refined(self, info: dict[str, Any]) -> None:
        """Say how a Propose-and-refine run ended and where its attempts are."""
        passed = info.get("passed")
        where = f"every attempt is in {info.get('run_dir')}"
        if passed:
            self.pane.status.setText(f"A kernel passed verification (chain {passed['chain']}, "
                                     f"round {passed['round']}){_speed_words(info)}; {where}.")
        else:
            ended = "Stopped" if info.get("finish_reason") == "stopped" else "No kernel passed"
            self.pane.status.setText(f"{ended} after {info.get('attempts')} attempts; {where}.")

    def _editor(self, buffer_id: str | None) -> CudaEditor | None:
        """The open editor of a buffer, if it is still open."""
        return self.tabs.editor_of(buffer_id)

    def propose(self, code: str, buffer_id: str | None, complete: bool = True) -> None:
        """Diff `code` against the buffer's text now and offer it for applying."""
        # app.assist (about 65 ms of imports): loaded with the first proposal, not at startup.
        from app.assist.refine.diff import unified_diff

        editor = self._editor(buffer_id)
        name = self.tabs.document(editor).title if editor else "(new buffer)"
        base = editor.text() if editor else ""
        self.proposal = Proposal(code, buffer_id if editor else None,
                                 editor.version if editor else 0, complete)
        note = "Review the change; Apply replaces the buffer (Ctrl+Z undoes it). Nothing runs " \
               "until you Build or Verify."
        if editor is None:
            note = "Apply opens the proposed code in a new buffer. Nothing runs until you ask."
        if not complete:
            note = "Careful: the code block was cut off (stopped or out of tokens). " + note
        self.pane.show_proposal(unified_diff(base, code, name, "proposed"),
                                                 note, can_apply=base != code)

    def apply(self) -> bool:
        """Put the proposed code into its buffer as one undo step (or a new buffer when it had
        none); a buffer edited since the diff gets a fresh diff to review first."""
        proposal = self.proposal
        if proposal is None:
            return False
        editor = self._editor(proposal.buffer_id)
        if proposal.buffer_id is not None and editor is None:
            self.report("error", "The buffer this proposal was made for is closed",
                               "Open the kernel again and ask once more.")
            return False
        if editor is not None and editor.version != proposal.version:
            self.propose(proposal.code, proposal.buffer_id, proposal.complete)
            self.report("info", "The buffer changed since the diff was made",
                               "The diff now shows the change against your latest text; press "
                               "Apply again to use it.")
            return False
        if editor is None:
            editor = self.tabs.add_buffer(proposal.code, None, NEW_BUFFER_TITLE,
                                                 modified=True)
        else:
            editor.replace_text_undoably(proposal.code)
            self.tabs.setCurrentWidget(editor)
        self.proposal = None
        self.pane.clear_proposal("Applied. Ctrl+Z in the editor undoes it; "
                                                  "Build (Ctrl+B) or Verify (F5) to check it.")
        self.report("info", "Applied the assistant's proposal (not run)",
                           "Ctrl+Z undoes it; Build or Verify when you are ready.")
        return True

    def discard(self) -> None:
        """Forget the proposal."""
        self.proposal = None
        self.pane.clear_proposal("Discarded.")

    def shutdown(self) -> None:
        """Stop any answer and end the model's thread (the window is closing)."""
        if self.runner is not None:
            self.runner.shutdown()


def _speed_words(info: dict[str, Any]) -> str:
    """', the fastest that passed: 12.0 us, 1.80x the first' after speed rounds, else ''."""
    # Loaded with the first proposal, as the rest of app.assist (not at startup).
    from app.assist.refine.speed import kept_words

    ms, speedup = (info.get("passed") or {}).get("time_ms"), info.get("speedup")
    said = kept_words(ms if isinstance(ms, int | float) else None,
                      speedup if isinstance(speedup, int | float) else None)
    return f", {said}" if said else ""
