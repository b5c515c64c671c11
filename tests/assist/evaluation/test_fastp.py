"""KernelBench's own measures of an evaluation (correctness, fast_0/1/2 over eager PyTorch and
torch.compile), on the CPU: the arithmetic from records the eval store wrote and read back, a
real evaluation of two imported problems (the correctness part runs, fast_p says it needs a
GPU), and the command line's paths. The timing itself is in test_fastp_gpu.py."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from app.assist.evaluation import store
from app.assist.evaluation.fastp import (
    COMPILE,
    EAGER,
    KernelBenchMeasures,
    ProblemOutcome,
    describe,
    fast_p,
    geometric_mean_speedup,
)
from app.assist.evaluation.grade import EvalResult, EvalSettings, Evaluation, arms_for
from app.assist.evaluation.kernelbench_timing import first_chain_kernel, measure
from app.assist.tasks.suite import load_task
from app.cli.commands.eval import kernelbench_measures
from tests.assist.evaluation.kernelbench_support import ROOT, cli, import_problem, relu_only_body
from tests.assist.scripted import ScriptedModel


def _timed(task: str, eager: float, compiled: float | None = None) -> ProblemOutcome:
    """A correct problem with its speedups (intervals around them)."""
    return ProblemOutcome(task, 1, True, 0.1, 0.1 * eager, None if compiled is None else
                          0.1 * compiled, eager, eager * 0.95, eager * 1.05, compiled,
                          None if compiled is None else compiled * 0.95,
                          None if compiled is None else compiled * 1.05)


# Seven problems: speedups over eager of 2.5, 1.5, 1.0 (exactly: not faster than p = 1) and
# 0.8, two wrong kernels, and one correct kernel whose timing could not be had.
PROBLEMS = [_timed("a", 2.5, 1.2), _timed("b", 1.5, 0.9), _timed("c", 1.0, 0.5),
            _timed("d", 0.8), ProblemOutcome("e", 1, False), ProblemOutcome("f", 2, False),
            ProblemOutcome("g", 1, True, note="kernel not timed: the worker died")]


def _stored(tmp_path: Path, measures: KernelBenchMeasures) -> KernelBenchMeasures:
    """The measures as an evaluation's line of the store, written and read back."""
    result = EvalResult("run1", "2026-01-01T00:00:00", {"k": 1, "tasks": []})
    path = tmp_path / "results.jsonl"
    store.append_result({**result.as_dict(), "kernelbench": measures.as_dict()}, path)
    (line,), skipped = store.load_results(path)
    assert skipped == 0
    return KernelBenchMeasures.from_dict(line["kernelbench"])


def _kernelbench_fastp(problems: list[ProblemOutcome], p: float, baseline: str) -> float:
    """KernelBench's score.fastp, written out: correct and speedup > p, over all n (here the
    problems whose speedup is known or which are wrong)."""
    known = [o for o in problems if not o.correct or o.speedup(baseline) is not None]
    hits = [o for o in known if o.correct and (o.speedup(baseline) or 0.0) > p]
    return len(hits) / len(known)


def test_fast_p_from_stored_records_counts_correct_and_faster_over_every_problem(
        tmp_path: Path) -> None:
    measures = _stored(tmp_path, KernelBenchMeasures("skills-on+examples-on", PROBLEMS, True,
                                                     device="NVIDIA H200"))
    assert measures.problems == PROBLEMS
    for p, count in ((0.0, 4), (1.0, 2), (2.0, 1)):
        result = fast_p(measures.problems, p, EAGER)
        assert (result.share.count, result.share.total, result.share.unknown) == (count, 6, 1)
        assert result.share.share == pytest.approx(_kernelbench_fastp(PROBLEMS, p, EAGER))
        assert result.share.low is not None and result.share.high is not None
        assert 0.0 <= result.share.low <= result.share.share <= result.share.high <= 1.0
    # torch.compile was timed for three of the four timed problems: d and g are left out.
    over_compile = fast_p(measures.problems, 1.0, COMPILE).share
    assert (over_compile.count, over_compile.total, over_compile.unknown) == (1, 5, 2)
    assert geometric_mean_speedup(measures.problems, EAGER) == pytest.approx(
        (2.5 * 1.5 * 1.0 * 0.8) ** 0.25)
    correct = measures.correctness()
    assert (correct.count, correct.total) == (5, 7)


def test_the_stored_line_holds_the_figures_beside_the_records(tmp_path: Path) -> None:
    measures = KernelBenchMeasures("arm", PROBLEMS, True, device="NVIDIA H200")
    path = tmp_path / "results.jsonl"
    store.append_result({**EvalResult("x", "now", {"k": 1}).as_dict(),
                         "kernelbench": measures.as_dict()}, path)
    stored = json.loads(path.read_text())["kernelbench"]
    assert stored["fast_p"]["eager"]["fast_1"]["count"] == 2
    assert stored["fast_p"]["compile"]["fast_0"]["total"] == 5
    assert stored["correct"]["share"] == pytest.approx(5 / 7)
    assert math.isclose(stored["geomean_speedup"]["compile"], (1.2 * 0.9 * 0.5) ** (1 / 3))
    text = describe(KernelBenchMeasures.from_dict(stored), "pass@1 0.714")
    assert "fast_1 0.333 (95% interval" in text and "2 of 6; 1 not timed, left out" in text
    assert "g (level 1): correct; kernel not timed: the worker died" in text


def test_an_evaluation_of_two_imported_problems_on_the_cpu_scores_correctness_only(
        tmp_path: Path) -> None:
    specs = [import_problem(tmp_path, stem, with_kernel=False)
             for stem in ("19_ReLU", "77_Scale_Bound")]
    tasks = [load_task(spec) for spec in specs]
    settings = EvalSettings(tasks=tasks, run_dir=tmp_path / "run", arms=arms_for("off", "off"),
                            k=1, rounds=1, backend="cpu", heldout=frozenset())
    result = Evaluation(ScriptedModel(relu_only_body), settings).run()
    assert first_chain_kernel(tmp_path / "run", tasks[0], settings.arms[0].name) is not None
    assert first_chain_kernel(tmp_path / "run", tasks[1], settings.arms[0].name) is None
    measures = _stored(tmp_path, measure(result, settings))
    assert [(o.task, o.correct) for o in measures.problems] == [
        ("kb_19_relu", True), ("kb_77_scale_bound", False)]
    assert not measures.timed and "needs an NVIDIA GPU" in measures.reason
    assert measures.fast_p_table() == []
    assert "fast_p: not measured: timing PyTorch's forward needs an NVIDIA GPU" in \
        describe(measures)
    correctness_only = kernelbench_measures(result, settings, timing=False)
    assert [o.correct for o in correctness_only.problems] == [True, False]
    assert not correctness_only.timed and correctness_only.reason == \
        "--no-timing: correctness only"


def test_eval_kernelbench_refuses_no_tasks_and_tasks_not_from_kernelbench(
        tmp_path: Path) -> None:
    env = dict(os.environ, KERNEL_STUDIO_DATA=str(tmp_path / "data"))
    none = cli("eval", "--kernelbench", env=env, timeout=120)
    assert none.returncode == 2 and "--kernelbench needs the imported tasks" in none.stderr
    suite_task = ROOT / "resources" / "tasks" / "add_f32" / "add_f32.toml"
    other = cli("eval", "--kernelbench", str(suite_task), env=env, timeout=120)
    assert other.returncode == 2, other.stderr
    assert "is not a task imported from KernelBench" in other.stderr
    alone = cli("eval", "--no-timing", str(suite_task), env=env, timeout=120)
    assert alone.returncode == 2 and "--no-timing goes with --kernelbench" in alone.stderr


def test_eval_kernelbench_on_the_cpu_with_the_real_model_stores_the_measures(
        default_folder: Path, tmp_path: Path) -> None:
    """The folder of imported tasks as `import kernelbench --out` leaves it; the default
    model; correctness decided on the CPU backend and fast_p said to need a GPU."""
    for stem in ("19_ReLU", "77_Scale_Bound"):
        import_problem(tmp_path, stem, with_kernel=False)
    env = dict(os.environ, KERNEL_STUDIO_DATA=str(tmp_path / "data"))
    done = cli("eval", "--kernelbench", str(tmp_path / "tasks"), "-k", "1", "--rounds", "1",
               "--max-new-tokens", "32", "--skills", "off", "--examples", "off", "--threads",
               "1", "--backend", "cpu", "--no-estimate", "--out", str(tmp_path / "run"),
               env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "KernelBench measures (2 problems" in done.stdout
    assert "next to pass@k: pass@1" in done.stdout and "fast_p: not measured" in done.stdout
    (stored,), _ = store.load_results(tmp_path / "data" / "eval" / "results.jsonl")
    measures = KernelBenchMeasures.from_dict(stored["kernelbench"])
    assert [o.task for o in measures.problems] == ["kb_19_relu", "kb_77_scale_bound"]
    assert not measures.timed and "needs an NVIDIA GPU" in measures.reason
    assert stored["kernelbench"]["correct"]["total"] == 2
