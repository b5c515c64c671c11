"""The rest of a KernelBench problem's day, in the window: after the evaluation, open the
passing attempt, save it as the task's kernel (apply), and verify it there, against the
problem's own forward (issue 25, workflows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_kernelbench_day import PROBLEM, bounded_body, cli

from app.assist.evaluation.grade import EvalSettings, Evaluation, arms_for
from app.assist.tasks.suite import load_task
from app.engine.verify.results import Verdict
from tests.assist.scripted import ScriptedModel
from ui.main_window import MainWindow


def test_open_the_passing_attempt_apply_it_and_verify(qtbot: Any, window: MainWindow,
                                                       tmp_path: Path) -> None:
    problem = tmp_path / "level1" / "78_Scale_Bound.py"
    problem.parent.mkdir()
    problem.write_text(PROBLEM)
    assert cli("import", "kernelbench", str(problem), "--out", str(tmp_path / "tasks")) \
        .returncode == 0
    spec_path = next((tmp_path / "tasks").rglob("*.toml"))
    task = load_task(spec_path)
    settings = EvalSettings(tasks=[task], run_dir=tmp_path / "run", arms=arms_for("off", "off"),
                            k=1, rounds=1, backend="cpu", heldout=frozenset())
    Evaluation(ScriptedModel(bounded_body), settings).run()
    spec = task.spec()
    attempt = next((tmp_path / "run").rglob(spec.source))
    assert not spec.source_path.exists()  # the task has no kernel of its own yet

    window.runner.set_backend("cpu")
    editor = window.open_files([attempt])[0]
    window.prompter.save_path = str(spec.source_path)
    assert window.tabs.save_as(editor)  # the attempt becomes the task's kernel
    assert spec.source_path.read_text() == attempt.read_text()
    with qtbot.waitSignal(window.runner.verified, timeout=180_000) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict) and verdict.status == "passed", verdict.describe()
    assert window.runner.last_spec == spec_path
