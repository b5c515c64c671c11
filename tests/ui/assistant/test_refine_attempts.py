"""Propose, verify and refine in the window: the attempts arrive as a list with verdict badges
(verified by the real verifier on the CPU backend), two selected attempts show their diff, Apply
puts any attempt into the buffer as one undo step, Stop ends the whole loop keeping what was
made; the Eval view reads the local results store. The model is a scripted stand-in (what the
window does with answers is under test, not what a model says)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.assist.evaluation import store
from app.assist.model.batch import BatchResult, Request
from tests.assist.scripted import MISSING_SEMICOLON, ScriptedModel, learner
from ui.assistant.attempts import AttemptsView, badge_colour, badge_html
from ui.main_window import MainWindow


class WaitingModel(ScriptedModel):
    """On its second call, says so and waits for Stop (a user pressing Stop mid-answer)."""

    def __init__(self) -> None:
        """Answer like the learner."""
        super().__init__(learner)
        self.second = threading.Event()

    def generate_batch(self, requests: list[Request], stop: threading.Event | None = None,
                       on_token: Any = None) -> BatchResult:
        """Wait for Stop on the second call."""
        if len(self.calls) == 1 and stop is not None:
            self.second.set()
            stop.wait(20)
        return super().generate_batch(requests, stop, on_token)


def _window(qtbot: Any, tmp_path: Path, prompter: Any, model: ScriptedModel) -> MainWindow:
    """A shown window whose assistant is `model`."""
    def factory(progress: Callable[[str, float], None], _adapter: str) -> ScriptedModel:
        progress("ready", 1.0)
        return model

    window = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter,
                        offer_recovery=False, assistant_session=factory)
    qtbot.addWidget(window)
    window.show()
    return window


@pytest.fixture
def learning(qtbot: Any, tmp_path: Path, prompter: Any) -> Any:
    """A window whose model learns from the verifier's feedback."""
    window = _window(qtbot, tmp_path, prompter, ScriptedModel(learner))
    yield window
    window.assistant_commands.shutdown()


def _statuses(view: AttemptsView) -> list[str]:
    """The verdicts listed, in order."""
    return [str(a["status"]) for a in view.attempts]


def test_the_attempts_come_with_badges_and_any_can_be_applied(
        qtbot: Any, learning: MainWindow, kernel_copy: Path, private_data: Path) -> None:
    window = learning
    editor = window.open_files([kernel_copy])[0]
    original = editor.text()
    files_before = sorted(kernel_copy.parent.rglob("*"))
    pane = window.assistant_pane
    pane.set_action("propose_rounds")
    assert pane.rounds_box.isEnabled() and pane.rounds_box.value() == 3
    pane.question.setPlainText("c = a + b")
    pane.send_button.click()
    view = pane.attempts
    qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=60000)
    assert _statuses(view) == ["compile_error", "mismatch", "passed"]
    # The attempts live in the data folder: the kernel's own folder is as it was (issue 25.7).
    assert sorted(kernel_copy.parent.rglob("*")) == files_before
    assert list((private_data / "proposals").rglob("vector_add.toml"))
    assert pane.attempts_box.isVisibleTo(pane)
    assert "A kernel passed verification (chain 1, round 3)" in pane.status.text()
    label = view.list.itemWidget(view.list.item(0))
    assert badge_colour("compile_error") in label.text() and "compile error" in label.text()
    # The passing kernel is offered as a diff against the buffer; nothing was applied yet.
    assert pane.proposal.isVisibleTo(pane) and editor.text() == original
    assert [i.data(0x0100) for i in view.list.selectedItems()] == [2], "the pass is selected"
    view.list.clearSelection()
    view.list.item(0).setSelected(True)
    view.list.item(1).setSelected(True)
    diff = view.diff_view.toPlainText()
    assert "chain 1 round 1 (compile_error)" in diff and "chain 1 round 2 (mismatch)" in diff
    assert "+    if (i < n) c[i] = a[i] - b[i];" in diff
    assert not view.apply_button.isEnabled(), "Apply takes one attempt"
    view.list.clearSelection()
    view.list.item(0).setSelected(True)
    view.apply_button.click()
    assert editor.text().endswith(MISSING_SEMICOLON)
    assert window.runner.job.starts == 0, "applying runs nothing"
    editor.undo()
    assert editor.text() == original


def test_stop_ends_the_whole_loop_and_keeps_the_attempts(
        qtbot: Any, tmp_path: Path, prompter: Any, kernel_copy: Path) -> None:
    model = WaitingModel()
    window = _window(qtbot, tmp_path, prompter, model)
    try:
        window.open_files([kernel_copy])
        pane = window.assistant_pane
        pane.set_action("propose_rounds")
        pane.send_button.click()
        assert model.second.wait(60)
        qtbot.waitUntil(lambda: len(pane.attempts.attempts) == 1, timeout=30000)
        assert pane.attempts.stop_button.isEnabled()
        pane.attempts.stop_button.click()
        qtbot.waitUntil(lambda: pane.send_button.isEnabled(), timeout=30000)
        assert _statuses(pane.attempts) == ["compile_error", "stopped"]
        assert "Stopped after 2 attempts" in pane.status.text()
        assert not pane.attempts.stop_button.isEnabled()
        run = Path(pane.status.text().split("every attempt is in ")[1].rstrip("."))
        assert len(list(run.rglob("attempt.json"))) == 2
    finally:
        window.assistant_commands.shutdown()


def test_refine_without_a_spec_says_what_to_do(learning: MainWindow) -> None:
    messages: list[tuple[str, str]] = []
    learning.assistant_commands.report = lambda kind, text, hint="": messages.append(
        (kind, text))
    assert not learning.assistant_commands.ask("propose_rounds", "anything")
    assert messages == [("error", "Propose, verify and refine needs a spec file")]


def test_the_eval_view_reads_the_results_store(qtbot: Any, learning: MainWindow) -> None:
    for index, (off, on) in enumerate(((0.0, 0.25), (0.125, 0.5))):
        store.append_result({
            "id": f"run{index}", "started": f"2026-12-0{index + 1}T10:00:00", "seconds": 60,
            "settings": {"k": 4, "rounds": 3}, "stopped": index == 1,
            "summaries": {arm: {"tasks": 8, "pass_at_1": value, "pass_at_k": value,
                                "compile_error_rate": 0.5, "rounds_to_pass": 2.0,
                                "new_tokens": 1000} for arm, value in
                          (("skills-off", off), ("skills-on", on))},
            "lifts": [{"control": "skills-off", "treatment": "skills-on", "tasks": 8,
                       "mean": on - off, "low": 0.0, "high": 0.5}]})
    with open(store.store_path(), "a") as handle:
        handle.write("not json\n")
    learning.assistant_pane.eval_button.click()
    dialog = learning.assistant_commands.eval_dialog
    assert dialog is not None
    view = dialog.view
    try:
        assert view.table.rowCount() == 4
        assert view.table.item(0, 0).text() == "2026-12-02T10:00:00 (stopped)"
        assert view.table.item(1, 4).text() == "skills-on"
        assert view.table.item(1, 11).text().startswith("+0.375 (+0.000 to +0.500, 8 tasks)")
        xs, ys = view.chart.series["skills-on"]
        assert list(xs) == [1, 2] and list(ys) == [0.25, 0.5]
        assert "2 evaluation(s)" in view.note.text() and "1 line(s) could not be read" in \
            view.note.text()
    finally:
        dialog.close()


def test_speed_rounds_are_greyed_with_the_reason_where_kernels_cannot_be_timed(
        learning: MainWindow) -> None:
    pane = learning.assistant_pane
    pane.set_action("propose_rounds")
    learning.set_backend("cpu")
    assert not pane.speed_box.isEnabled() and pane.speed_rounds() == 0
    assert "Speed rounds time each kernel that passes. Not with the CPU backend" in \
        pane.speed_box.toolTip()
    # Where a GPU can time (as the probe says on a GPU machine), only Propose and refine has it.
    pane.set_speed_refusal("")
    pane.speed_box.setValue(2)
    assert pane.speed_box.isEnabled() and pane.speed_rounds() == 2
    pane.set_action("explain")
    assert not pane.speed_box.isEnabled() and pane.speed_rounds() == 0


def test_an_attempt_timed_by_a_speed_round_shows_its_time() -> None:
    row = badge_html({"status": "passed", "chain": 1, "round": 2, "time_ms": 0.0123})
    assert "round 2 12.3 us" in row
    assert " us" not in badge_html({"status": "passed", "chain": 1, "round": 1})


def test_a_round_asked_again_after_repeats_says_how_many_times() -> None:
    row = badge_html({"status": "mismatch", "chain": 1, "round": 2, "redraws": 2})
    assert "round 2 (asked again 2x: it repeated a tried kernel)" in row
    assert "asked again" not in badge_html({"status": "mismatch", "chain": 1, "round": 1})
