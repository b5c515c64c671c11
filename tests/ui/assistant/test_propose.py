"""Propose from the Assistant pane: the spec and the description reach the model's prompt, the
token budget (and anything cut) is shown, code in the answer appears as a coloured diff against
the buffer, Apply replaces the buffer in one undoable step, and nothing is run.

The answers come from a stand-in session that streams a fixed text on the model's thread; the
real parser (app.assist) splits it into code and explanation. The real default model is exercised
by the opt-in slow test at the end (it takes about a minute on 2 shared cores).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from stand_in import ANSWER, PROPOSED, ScriptedSession

from app.assist.model.convert import default_model_folder
from ui.assistant.diff_view import COLOURS
from ui.main_window import MainWindow


def make_window(qtbot: Any, tmp_path: Path, prompter: Any, text: str = ANSWER,
                context: int = 100_000) -> tuple[MainWindow, list[ScriptedSession]]:
    """A shown window whose assistant answers with `text`."""
    sessions: list[ScriptedSession] = []

    def factory(progress: Callable[[str, float], None], _adapter: str) -> ScriptedSession:
        progress("ready", 1.0)
        sessions.append(ScriptedSession(text, context))
        return sessions[-1]

    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=factory)
    qtbot.addWidget(window)
    window.show()
    return window, sessions


@pytest.fixture
def proposing(qtbot: Any, tmp_path: Path, prompter: Any) -> Any:
    """A window whose model proposes PROPOSED."""
    window, sessions = make_window(qtbot, tmp_path, prompter)
    yield window, sessions
    window.assistant_commands.shutdown()


def send_propose(qtbot: Any, window: MainWindow, description: str) -> None:
    """Choose Propose, type the description, press Send, wait for the answer."""
    pane = window.assistant_pane
    pane.set_action("propose")
    pane.question.setPlainText(description)
    assert "Describe the kernel" in pane.question.placeholderText()
    pane.send_button.click()
    assert window.assistant is not None
    qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=10000)


def test_a_proposal_is_a_coloured_diff_and_apply_is_one_undo_step(
        qtbot: Any, proposing: Any, kernel_copy: Path) -> None:
    window, sessions = proposing
    editor = window.open_files([kernel_copy])[0]
    original = editor.text()
    pane = window.assistant_pane
    send_propose(qtbot, window, "c = a + b with a grid-stride loop")
    prompt = "\n".join(m["content"] for m in sessions[0].messages)
    assert "c = a + b with a grid-stride loop" in prompt
    assert 'entry = "vector_add"' in prompt  # the spec went with the description
    assert pane.budget.text().startswith("Budget: prompt ") and "Warning" not in pane.budget.text()
    assert pane.answer.raw_text() == ANSWER
    assert pane.proposal.isVisibleTo(pane) and pane.apply_button.isEnabled()
    diff = pane.diff_view.toPlainText()
    assert "+    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;" in diff
    assert "-    if (i < n) {" in diff
    colours = pane.diff_view.colours()
    assert colours == COLOURS[True]  # the dark theme's palette
    lines = diff.splitlines()
    marked = pane.diff_view.marked_lines()
    assert marked[lines.index("-    if (i < n) {")] == colours["removed"]
    added = next(i for i, line in enumerate(lines) if line.startswith("+    for"))
    assert marked[added] == colours["added"]
    assert all(not lines[row].startswith((" ", "+++", "---")) for row in marked)
    assert editor.text() == original  # showing a diff changes nothing
    pane.apply_button.click()
    assert editor.text() == PROPOSED and editor.is_modified()
    assert window.runner.job.starts == 0 and not window.runner.running  # nothing was run
    assert "Applied" in pane.proposal_note.text() and not pane.apply_button.isEnabled()
    editor.take_focus()
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == original  # one step back to exactly the old text
    assert not editor.is_modified()
    qtbot.keyClick(editor, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == PROPOSED


def test_a_buffer_edited_after_the_diff_gets_a_fresh_diff_before_apply(
        qtbot: Any, proposing: Any, kernel_copy: Path) -> None:
    window, _ = proposing
    editor = window.open_files([kernel_copy])[0]
    send_propose(qtbot, window, "grid-stride loop")
    editor.insertText(0, "// my note\n")
    window.assistant_pane.apply_button.click()
    assert editor.text().startswith("// my note\n")  # not replaced yet
    assert "-// my note" in window.assistant_pane.diff_view.toPlainText()
    assert "The buffer changed since the diff was made" in window.messages.messages()[-1][1]
    window.assistant_pane.apply_button.click()
    assert editor.text() == PROPOSED


def test_without_an_open_buffer_apply_opens_the_code_in_a_new_one(
        qtbot: Any, proposing: Any, kernel_copy: Path) -> None:
    window, _ = proposing
    window.spec_panel.load(kernel_copy.with_suffix(".toml"))
    send_propose(qtbot, window, "c = a + b")
    assert window.tabs.count() == 0
    window.assistant_pane.apply_button.click()
    editor = window.tabs.current()
    assert editor is not None and editor.text() == PROPOSED
    assert window.tabs.document(editor).title == "proposed.cu"


def test_a_prompt_cut_to_fit_says_what_was_cut(qtbot: Any, tmp_path: Path, prompter: Any,
                                               kernel_copy: Path) -> None:
    window, sessions = make_window(qtbot, tmp_path, prompter, context=1100)
    try:
        window.open_files([kernel_copy])
        send_propose(qtbot, window, "c = a + b with a grid-stride loop")
        budget = window.assistant_pane.budget
        assert "Warning: cut to fit the model's context: " in budget.text()
        assert "color" in budget.styleSheet()
        assert "cut to fit" in window.assistant_pane.status.text()  # repeated when done
    finally:
        window.assistant_commands.shutdown()


def test_an_answer_without_code_proposes_nothing(qtbot: Any, tmp_path: Path, prompter: Any,
                                                 kernel_copy: Path) -> None:
    window, _ = make_window(qtbot, tmp_path, prompter, text="Use a grid-stride loop.")
    try:
        window.open_files([kernel_copy])
        send_propose(qtbot, window, "c = a + b")
        pane = window.assistant_pane
        assert not pane.proposal.isVisibleTo(pane) and window.assistant_commands.proposal is None
    finally:
        window.assistant_commands.shutdown()


@pytest.mark.skipif(not os.environ.get("KERNEL_STUDIO_SLOW_TESTS"),
                    reason="loads the real model (about a minute on 2 shared cores); set "
                           "KERNEL_STUDIO_SLOW_TESTS=1 to run it")
@pytest.mark.skipif(not (default_model_folder() / "manifest.json").exists(),
                    reason="the default model is not prepared (make model)")
def test_the_real_local_model_proposes_and_its_code_applies(qtbot: Any, window: MainWindow,
                                                            kernel_copy: Path) -> None:
    from app.assist.model.answer import parse_answer

    editor = window.open_files([kernel_copy])[0]
    original = editor.text()
    pane = window.assistant_pane
    pane.set_action("propose")
    pane.question.setPlainText("c = a + b with a grid-stride loop")
    pane.send_button.click()
    qtbot.waitUntil(lambda: pane.budget.text().startswith("Budget: prompt "), timeout=120000)
    qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=300000)
    text = pane.answer.toPlainText()
    assert text and pane.status.text().startswith("Done")
    # The 135M model does not always answer in CUDA (it once wrote a Python block for another
    # description): whatever it wrote, the pane proposes exactly the code the parser finds.
    code = parse_answer(text).code
    proposal = window.assistant_commands.proposal
    assert (proposal.code if proposal else None) == code
    assert pane.proposal.isVisibleTo(pane) == (code is not None)
    if proposal is not None:
        pane.apply_button.click()
        assert editor.text() == proposal.code
        editor.take_focus()
        qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert editor.text() == original
