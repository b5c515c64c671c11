"""Evaluation graded by execution: the pass@k estimator against brute force, the bootstrap
interval, arms, the results store and the HTML report; evaluations with the real verifier and a
scripted model (a broken task, a silent model, a hanging candidate and Stop each end with a clear
message and the partial results kept); and the CI-sized run of `kernel-studio eval` with the
real default model and the real verifier."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.assist.errors import GenerationFailed
from app.assist.evaluation import report, store
from app.assist.evaluation.grade import EvalSettings, Evaluation, arms_for, chain_seed
from app.assist.evaluation.metrics import (
    TaskOutcome,
    bootstrap_interval,
    lift,
    pass_at_k,
    summarize,
)
from app.assist.model.batch import Request
from app.assist.tasks.suite import TASKS_DIR, TaskError, load_suite, load_task
from app.cli.commands.eval import text_report
from tests.assist.scripted import ADDS, SPINS, SUBTRACTS, ScriptedModel, learner, right

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("n", "c", "k"), [(4, 0, 1), (4, 1, 1), (4, 1, 4), (5, 2, 2),
                                           (6, 3, 4), (3, 3, 2)])
def test_pass_at_k_is_the_chance_that_one_of_k_drawn_passes(n: int, c: int, k: int) -> None:
    samples = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(samples, k))
    brute = sum(any(d) for d in draws) / len(draws)
    assert pass_at_k(n, c, k) == pytest.approx(brute)


def test_pass_at_k_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(2, 3, 1)


def _outcome(task: str, chains: int, passed: int, level: int = 1) -> TaskOutcome:
    """An outcome with only the counts that matter here."""
    return TaskOutcome(task, level, "float32", chains, passed)


def test_summary_and_lift_with_its_bootstrap_interval() -> None:
    off = [_outcome(f"t{i}", 4, 0) for i in range(10)]
    on = [_outcome(f"t{i}", 4, 4 if i < 5 else 0, level=2 if i % 2 else 1) for i in range(10)]
    summary = summarize(on, 4)
    assert summary.pass_at_1 == pytest.approx(0.5) and summary.pass_at_k == pytest.approx(0.5)
    assert set(summary.by_level) == {"1", "2"}
    result = lift("off", "on", off, on)
    assert result.mean == pytest.approx(0.5) and result.tasks == 10
    assert result.low is not None and result.high is not None
    assert 0.1 < result.low < 0.5 < result.high <= 0.9
    assert bootstrap_interval([0.0] * 8) == (0.0, 0.0)
    assert lift("a", "b", off, []).mean is None


def test_arms_compare_one_thing_at_a_time() -> None:
    assert [a.name for a in arms_for("both", "off")] == ["skills-off", "skills-on"]
    assert [(a.skills, a.examples) for a in arms_for("on", "both")] == [(True, False),
                                                                        (True, True)]
    with pytest.raises(ValueError, match="one thing at a time"):
        arms_for("both", "both")
    assert chain_seed("add_f32", 0, 0) == chain_seed("add_f32", 0, 0) != chain_seed(
        "add_f32", 1, 0)


def _settings(tmp_path: Path, names: list[str], **overrides: object) -> EvalSettings:
    """Settings over tasks of the suite, one arm unless told otherwise."""
    suite = load_suite()
    values: dict[str, object] = {"tasks": suite.named(names), "run_dir": tmp_path / "run",
                                 "arms": arms_for("off", "off"), "k": 2, "rounds": 3,
                                 "backend": "cpu", "heldout": suite.heldout()}
    values.update(overrides)
    return EvalSettings(**values)  # type: ignore[arg-type]


def test_an_evaluation_measures_pass_rates_rounds_and_compile_errors(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ["add_f32"], arms=arms_for("both", "off"))
    result = Evaluation(ScriptedModel(learner), settings).run()
    summaries = result.summaries()
    assert set(summaries) == {"skills-off", "skills-on"}
    for summary in summaries.values():
        assert summary["pass_at_1"] == 1.0 and summary["rounds_to_pass"] == 3.0
        assert summary["compile_error_rate"] == pytest.approx(1 / 3)
        assert summary["attempts"] == 6
    (item,) = result.lifts
    assert item.mean == 0.0 and item.tasks == 1
    assert not result.stopped and not result.broken


def test_answers_that_repeat_a_tried_kernel_are_counted_and_told_not_taken_for_rounds(
        tmp_path: Path) -> None:
    """At the run's temperature each chain writes the wrong kernel, and again in its second
    round; asked again hotter, the right one: two rounds a chain, and the repeats counted in
    the summary and told in the text report."""
    def writer(request: Request) -> str:
        return SUBTRACTS if request.options.temperature < 0.5 else ADDS

    settings = _settings(tmp_path, ["add_f32"], temperature=0.3, rounds=3)
    result = Evaluation(ScriptedModel(writer), settings).run()
    summary = result.summaries()["skills-off+examples-off"]
    assert summary["pass_at_1"] == 1.0 and summary["rounds_to_pass"] == 2.0
    assert summary["redraws"] == 2 and summary["attempts"] == 4
    assert "2 answers repeated a kernel their chain had tried" in text_report(result)


def test_a_broken_task_is_skipped_with_its_reason_and_the_rest_is_measured(
        tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    shutil.copytree(TASKS_DIR / "add_f32", folder / "add_f32")
    shutil.copytree(TASKS_DIR / "relu_f32", folder / "relu_f32")
    (folder / "relu_f32" / "relu_f32_ref.py").write_text(
        "def reference(x, n):\n    raise ValueError('this reference is broken')\n")
    shutil.copytree(TASKS_DIR / "exp_f32", folder / "exp_f32")
    toml = folder / "exp_f32" / "exp_f32.toml"
    toml.write_text(toml.read_text().replace("level = 1", "level = 9"))
    (folder / "index.toml").write_text('dev = ["add_f32", "relu_f32", "exp_f32"]\nheldout = []\n')
    suite = load_suite(folder)
    assert [(n, "level must be" in m) for n, _s, m in suite.broken] == [("exp_f32", True)]
    settings = _settings(tmp_path, [], tasks=list(suite.tasks), rounds=1,
                         broken=[{"task": n, "message": m} for n, m in suite.broken_in("dev")])
    result = Evaluation(ScriptedModel(right), settings).run()
    broken = {b["task"]: b["message"] for b in result.broken}
    assert set(broken) == {"exp_f32", "relu_f32"}
    assert "this reference is broken" in broken["relu_f32"]
    outcomes = {o.task: o for o in result.outcomes["skills-off+examples-off"]}
    assert outcomes["add_f32"].passed == 2 and outcomes["relu_f32"].chains == 0


def test_a_model_that_writes_nothing_is_named_in_the_notes(tmp_path: Path) -> None:
    result = Evaluation(ScriptedModel(lambda _r: ""), _settings(tmp_path, ["add_f32"],
                                                                rounds=2)).run()
    assert any("wrote nothing in all 4 attempts" in n for n in result.notes)
    assert result.summaries()["skills-off+examples-off"]["pass_at_1"] == 0.0


def test_a_hanging_candidate_is_killed_and_named_in_the_notes(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ["add_f32"], k=1, rounds=1, timeout=1.0)
    result = Evaluation(ScriptedModel(lambda _r: SPINS), settings).run()
    assert any("did not finish within the time limit" in n for n in result.notes)
    (outcome,) = result.outcomes["skills-off+examples-off"]
    assert outcome.chains == 1 and outcome.passed == 0


def test_stop_keeps_the_decided_chains_and_the_store_keeps_the_partial_run(
        tmp_path: Path) -> None:
    stop = threading.Event()
    settings = _settings(tmp_path, ["add_f32", "relu_f32"], k=1, rounds=3)
    result = Evaluation(ScriptedModel(learner, stop_on_call=3), settings, stop).run()
    assert result.stopped
    attempts = [p for p in (tmp_path / "run").rglob("attempt.json")]
    assert len(attempts) >= 3
    data = result.as_dict()
    store.append_result(data)
    (stored,), skipped = store.load_results()
    assert stored["stopped"] is True and skipped == 0
    assert stored["settings"]["tasks"] == ["add_f32", "relu_f32"]


def test_the_store_skips_lines_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    store.append_result({"id": "a"}, path)
    with path.open("a") as handle:
        handle.write("{not json\n")
    store.append_result({"id": "b"}, path)
    results, skipped = store.load_results(path)
    assert [r["id"] for r in results] == ["a", "b"] and skipped == 1


def test_the_report_is_one_file_that_fetches_nothing(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ["add_f32"], k=1, arms=arms_for("both", "off"))
    result = Evaluation(ScriptedModel(learner), settings).run().as_dict()
    text = report.render(result)
    assert text.startswith("<!DOCTYPE html>") and "skills-on" in text and "<svg" in text
    for fetching in ("http:", "https:", "src=", "<script", "<link", "@import"):
        assert fetching not in text


def test_a_task_file_outside_the_suite_can_be_evaluated_and_a_bad_one_is_refused(
        tmp_path: Path) -> None:
    task = load_task(TASKS_DIR / "add_f32" / "add_f32.toml")
    assert task.split == "" and task.level == 1
    with pytest.raises(TaskError, match="no \\[task\\] table"):
        load_task(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml")


def test_eval_on_the_cpu_with_the_real_model_and_verifier(default_folder: Path,
                                                          tmp_path: Path) -> None:
    """The CI-sized run: 3 tasks (one per level), 1 chain, 2 rounds, the default model on one
    thread, every candidate through the real verifier; JSON, store and report."""
    env = dict(os.environ, KERNEL_STUDIO_DATA=str(tmp_path / "data"))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app", "eval", "--limit", "3", "-k", "1", "--rounds", "2",
         "--max-new-tokens", "32", "--skills", "off", "--examples", "off", "--threads", "1",
         "--out", str(tmp_path / "run"), "--report", str(tmp_path / "report.html"), "--json"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False)
    seconds = time.perf_counter() - started
    print(f"eval --limit 3 -k 1 --rounds 2 (32 new tokens): {seconds:.1f} s")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "estimate: at most" in done.stderr
    result = json.loads(done.stdout)
    outcomes = result["outcomes"]["skills-off+examples-off"]
    assert sorted(o["level"] for o in outcomes) == [1, 2, 3]
    attempts = list((tmp_path / "run").rglob("attempt.json"))
    assert 3 <= len(attempts) <= 6
    statuses = {json.loads(p.read_text())["status"] for p in attempts}
    assert statuses <= {"passed", "compile_error", "mismatch", "unwritten", "guard_zone",
                        "input_changed", "timeout", "crash", "launch_error", "no_code"}, statuses
    (stored,), _ = store.load_results(tmp_path / "data" / "eval" / "results.jsonl")
    assert stored["id"] == result["id"]
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")


class FailingModel(ScriptedModel):
    """Answers once, then fails as a model out of memory does."""

    def generate_batch(self, requests, stop=None, on_token=None):  # type: ignore[no-untyped-def]
        """The second call raises."""
        if self.calls:
            raise GenerationFailed("the model failed while generating a batch of 1: out of "
                                   "memory", "try a smaller --batch")
        return super().generate_batch(requests, stop, on_token)


def test_a_model_that_fails_midway_ends_the_run_with_what_was_decided(tmp_path: Path) -> None:
    result = Evaluation(FailingModel(learner), _settings(tmp_path, ["add_f32"], k=1)).run()
    assert result.stopped
    assert any("the model failed, so the run ended early" in n for n in result.notes)
    assert len(list((tmp_path / "run").rglob("attempt.json"))) == 1


def test_a_report_that_cannot_be_written_is_refused_before_the_model_loads(
        tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", "utf-8")
    for path, reason in ((afile / "r.html", "does not exist"), (tmp_path, "is a folder")):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "app", "eval", "--limit", "1", "--report", str(path)],
            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
            env=dict(os.environ, KERNEL_STUDIO_DATA=str(tmp_path / "data")))
        assert done.returncode == 2 and reason in done.stderr, done.stderr[-1000:]
        assert "Traceback" not in done.stderr
        assert time.perf_counter() - started < 30  # refused at once, no model loaded
