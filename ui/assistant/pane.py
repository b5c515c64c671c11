"""The Assistant pane: ask the local model about the current kernel or have it propose one,
watch the answer stream, stop it at any time, and review proposed code as a diff before
applying it.

The pane only shows things and asks: the window owns the editor, makes the diff and applies
it (one undo step). Nothing here runs code; proposed code runs only when the user then presses
Build or Verify.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ui.assistant.adapter_choice import AdapterChoice
from ui.assistant.answer_view import AnswerView
from ui.assistant.attempts import AttemptsView
from ui.assistant.diff_view import DiffView
from ui.assistant.model_stages import HINTS, READY, model_stage
from ui.stages import StageList

ACTIONS = (("ask", "Ask"), ("propose", "Propose a kernel"),
           ("propose_rounds", "Propose, verify and refine"), ("explain", "Explain the kernel"),
           ("fix_compile", "Fix compile errors"), ("fix_verify", "Fix a failed verification"),
           ("optimize", "Optimize"))
PLACEHOLDERS = {
    "ask": "Ask about the kernel in the current tab\u2026",
    "propose": "Describe the kernel you want; the spec in the Spec pane goes with it\u2026",
    "propose_rounds": "Describe the kernel (default: the spec's task description); every "
                      "attempt is verified and told why it failed\u2026",
}
DEFAULT_PLACEHOLDER = "Anything to add (optional)\u2026"
SEND_KEYS = "Ctrl+Enter"
SPEED_TIP = ("Speed rounds: after a chain's first pass, this many more rounds ask for a faster "
             "kernel; each that passes is timed on the GPU and the fastest is kept")
NO_SPEED_YET = "Speed rounds need a GPU to time kernels on (looking for one\u2026)"
ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
WARNING_STYLE = "color: #d18b00;"


def _spin(low: int, high: int, value: int, tip: str) -> QSpinBox:
    """A small number box."""
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setToolTip(tip)
    return box


def _compact(button: QPushButton) -> QPushButton:
    """A button no wider than its text needs (the style's usual 80 px minimum would keep the
    pane, and every pane tabbed with it, wide at a small window)."""
    button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text()) + 20)
    return button


def action_title(name: str) -> str:
    """The title of an action as the pane lists it."""
    return dict(ACTIONS).get(name, name)


class AssistantPane(QWidget):
    """Action, question, Send and Stop over the streamed answer and the proposed change."""

    askRequested = Signal(str, str)
    stopRequested = Signal()
    applyRequested = Signal()
    discardRequested = Signal()
    evalRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        """Idle until a question is sent."""
        super().__init__(parent)
        self.adapter_choice = AdapterChoice()
        self.action_box = QComboBox()
        for name, title in ACTIONS:
            self.action_box.addItem(title, name)
        self.question = QPlainTextEdit()
        self.question.setMaximumHeight(70)
        self.answer = AnswerView()
        self.stages = StageList(model_stage, HINTS)
        self._tokens = 0  # streamed pieces of the answer so far
        self._prompt_tokens = 0
        self.budget = QLabel()
        self.budget.setWordWrap(True)
        self.status = QLabel("The local model loads on the first question; nothing leaves "
                             "this machine.")
        self.status.setWordWrap(True)
        self.send_button = QPushButton("Send")
        self.send_button.setToolTip(f"Send the question with the chosen action ({SEND_KEYS} "
                                    "in the question box)")
        self.stop_button = QPushButton("Stop")
        self.diff_view = DiffView()
        self.proposal_note = QLabel()
        self.proposal_note.setWordWrap(True)
        self.apply_button = QPushButton("Apply")
        self.apply_button.setToolTip("Replace the buffer with the proposed code (Ctrl+Z in the "
                                     "editor undoes it). Nothing runs until you Build or Verify.")
        self.discard_button = QPushButton("Discard")
        self.enlarge_button = QPushButton("Larger diff")
        self.enlarge_button.setCheckable(True)
        self.enlarge_button.setToolTip("Give the whole pane to the proposed change (the answer "
                                       "comes back when you press it again)")
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.proposal = QGroupBox("Proposed change (against the buffer)")
        self.chains_box = _spin(1, 8, 1, "Independent chains (K)")
        self.rounds_box = _spin(1, 10, 3, "Attempts per chain (R), each told why the last "
                                          "failed")
        self.speed_box = _spin(0, 5, 0, SPEED_TIP)
        self.speed_refusal = NO_SPEED_YET  # until the backend probe answers
        self.loop_row = QWidget()
        self.attempts = AttemptsView()
        self.attempts_box = QGroupBox("Attempts (each verified)")
        self.eval_button = QPushButton("Eval results\u2026")
        self.eval_button.setToolTip("Evaluations of the model on the task suite "
                                    "(kernel-studio eval), from the local results store")
        # The longest action's title would set the pane's narrowest width: a shorter box
        # shows the start of the chosen title, the list opens wide enough for every title.
        self.action_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.action_box.setMinimumContentsLength(12)
        for button in (self.send_button, self.stop_button, self.apply_button,
                       self.discard_button, self.enlarge_button, self.eval_button):
            _compact(button)
        self._build()
        self._action_changed()
        self.set_running(False)
        self.clear_proposal()

    def _build(self) -> None:
        """Controls on top; the answer and the proposal share the rest."""
        row = QHBoxLayout()
        row.addWidget(self.action_box, 1)
        row.addWidget(self.send_button)
        row.addWidget(self.stop_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.proposal_note, 1)
        buttons.addWidget(self.enlarge_button)
        buttons.addWidget(self.discard_button)
        buttons.addWidget(self.apply_button)
        column = QVBoxLayout(self.proposal)
        column.setContentsMargins(2, 2, 2, 2)
        column.addWidget(self.diff_view, 1)
        column.addLayout(buttons)
        splitter = self.splitter
        splitter.addWidget(self.answer)
        splitter.addWidget(self.proposal)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)  # a proposal's diff gets most of the room
        self._build_loop_row()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        # The adapter and the evaluations that scored it share a row (a row of their own each
        # would not fit a narrow pane).
        model_row = QHBoxLayout()
        model_row.addWidget(self.adapter_choice, 1)
        model_row.addWidget(self.eval_button)
        layout.addLayout(model_row)
        layout.addWidget(self.loop_row)
        layout.addWidget(self.question)
        layout.addWidget(self.budget)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.attempts_box, 1)  # shown by Propose, verify and refine
        layout.addWidget(self.stages)
        layout.addWidget(self.status)
        self.send_button.clicked.connect(self._send)
        self.stop_button.clicked.connect(self.stopRequested)
        self.apply_button.clicked.connect(self.applyRequested)
        self.discard_button.clicked.connect(self.discardRequested)
        self.enlarge_button.toggled.connect(self.enlarge_diff)
        self.action_box.currentIndexChanged.connect(self._action_changed)
        self.eval_button.clicked.connect(self.evalRequested)
        self.adapter_choice.chosen.connect(self._adapter_chosen)
        self.question.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+Enter in the question box sends it (Enter alone still breaks the line)."""
        if (watched is self.question and event.type() == QEvent.Type.KeyPress
                and isinstance(event, QKeyEvent) and event.key() in ENTER_KEYS
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            if self.send_button.isEnabled():  # not while an answer streams
                self._send()
            return True
        return super().eventFilter(watched, event)

    def _build_loop_row(self) -> None:
        """Chains, rounds and speed rounds of Propose and refine, and the attempts box. Speed
        gets a line of its own: on one line the three would widen the narrowest pane."""
        grid = QGridLayout(self.loop_row)
        grid.setContentsMargins(0, 0, 0, 0)
        for index, (text, box) in enumerate((("Chains", self.chains_box),
                                             ("Rounds", self.rounds_box),
                                             ("Speed", self.speed_box))):
            grid.addWidget(QLabel(text), index // 2, 2 * (index % 2))
            grid.addWidget(box, index // 2, 2 * (index % 2) + 1)
        grid.setColumnStretch(4, 1)
        column = QVBoxLayout(self.attempts_box)
        column.setContentsMargins(2, 2, 2, 2)
        column.addWidget(self.attempts)
        self.attempts_box.setVisible(False)

    def _action_changed(self) -> None:
        """Say what the text box is for with this action; chains and rounds for the loop."""
        action = str(self.action_box.currentData())
        hint = PLACEHOLDERS.get(action, DEFAULT_PLACEHOLDER)
        self.question.setPlaceholderText(f"{hint} ({SEND_KEYS} sends)")
        for box in (self.chains_box, self.rounds_box):
            box.setEnabled(action == "propose_rounds")
        self._update_speed()

    def set_speed_refusal(self, why: str) -> None:
        """Why speed rounds cannot run here ('' when a GPU can time kernels): the box is
        greyed with the reason as its tool tip, as Bench is."""
        self.speed_refusal = why
        self._update_speed()

    def _update_speed(self) -> None:
        """The Speed box: only for Propose and refine, only where kernels can be timed."""
        usable = not self.speed_refusal and self.action_box.currentData() == "propose_rounds"
        self.speed_box.setEnabled(usable)
        self.speed_box.setToolTip(self.speed_refusal or SPEED_TIP)

    def speed_rounds(self) -> int:
        """The speed rounds asked for (0 where they cannot run)."""
        return self.speed_box.value() if self.speed_box.isEnabled() else 0

    def _adapter_chosen(self, _choice: str) -> None:
        """Say when another adapter takes effect."""
        self.status.setText("Adapter changed: the next question loads the model with it.")

    def show_attempts(self) -> None:
        """A new Propose-and-refine run: the attempts box, empty, and running."""
        self.attempts.clear()
        self.attempts.set_running(True)
        self.attempts_box.setVisible(True)

    def _send(self) -> None:
        """Ask for the chosen action with the typed question (or description)."""
        self.askRequested.emit(str(self.action_box.currentData()), self.question.toPlainText())

    def set_action(self, name: str) -> None:
        """Choose an action by name."""
        self.action_box.setCurrentIndex(max(0, self.action_box.findData(name)))

    def set_running(self, running: bool) -> None:
        """Send while idle, Stop while an answer streams (or the loop runs)."""
        self.send_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.attempts.set_running(running)

    def begin(self, title: str) -> None:
        """Clear the answer and any earlier proposal for a new question."""
        self.answer.clear_answer()
        self.budget.clear()
        self.clear_proposal()
        self.status.setText(f"{title}: waiting for the model\u2026")
        self._tokens, self._prompt_tokens = 0, 0
        self.stages.begin("Waiting for the model")
        self.set_running(True)

    def append(self, text: str) -> None:
        """Add streamed text at the end (rendered as Markdown as it comes)."""
        self.answer.append_text(text)
        self._tokens += 1
        self.stages.advance(f"answering: {self._tokens} tokens")

    def show_progress(self, message: str, fraction: float) -> None:
        """The model's progress: loading it, then reading the prompt; each a stage."""
        if message == READY and self._prompt_tokens:  # loaded: the prompt is read next
            message, fraction = f"reading the prompt: {self._prompt_tokens} tokens", 0.0
        self.stages.advance(message, fraction)
        percent = f" ({fraction:.0%})" if fraction >= 0 else ""
        self.status.setText(f"{message}{percent}")

    def show_prompt(self, info: dict[str, Any]) -> None:
        """The prompt's token budget, its skills, and what was cut to fit (never silently)."""
        self._prompt_tokens = int(info.get("prompt_tokens") or 0)
        skills = ", ".join(info.get("skills") or []) or "none"
        warnings = [str(w) for w in info.get("warnings") or []]
        text = f"Budget: {info.get('summary', '')}; skills: {skills}."
        if warnings:
            text += "\nWarning: " + "; ".join(warnings)
        self.budget.setText(text)
        self.budget.setStyleSheet(WARNING_STYLE if warnings else "")

    def finish(self, info: dict[str, Any]) -> None:
        """The answer ended: say how, how fast, and any warnings."""
        reason = str(info.get("finish_reason", ""))
        speed = float(info.get("tokens_per_s") or 0.0)
        text = "Stopped." if reason == "stopped" else f"Done ({reason})."
        if speed:
            text += f" {speed:.1f} tokens/s."
        warnings = [str(w) for w in info.get("warnings") or []]
        self.status.setText(" ".join([text, *warnings]))
        self.answer.render_markdown()
        self.stages.finish()
        self.set_running(False)

    def fail(self, message: str) -> None:
        """The model could not answer."""
        self.status.setText(f"The assistant could not answer: {message}")
        self.stages.finish()
        self.set_running(False)

    # -- the proposed change ------------------------------------------------------------------

    def show_proposal(self, diff: str, note: str, can_apply: bool = True) -> None:
        """Show proposed code as a diff against the buffer, with Apply and Discard."""
        self.diff_view.show_diff(diff or "(the proposed code is the same as the buffer)")
        self.proposal_note.setText(note)
        self.apply_button.setEnabled(can_apply)
        self.proposal.setVisible(True)
        total = max(self.splitter.height(), 400)
        self.splitter.setSizes([total // 4, total - total // 4])

    def enlarge_diff(self, larger: bool) -> None:
        """Give the proposal the whole pane (the answer and the question hidden), or share."""
        for widget in (self.answer, self.question, self.budget):
            widget.setVisible(not larger)
        self.enlarge_button.setChecked(larger)

    def clear_proposal(self, note: str = "") -> None:
        """No proposal (or the last one was applied or discarded, as `note` says)."""
        self.diff_view.show_diff("")
        self.proposal_note.setText(note)
        self.apply_button.setEnabled(False)
        self.proposal.setVisible(bool(note))
        if not note:
            self.enlarge_diff(False)
