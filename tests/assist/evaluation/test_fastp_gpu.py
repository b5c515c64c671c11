"""On an NVIDIA GPU: an evaluation of two imported KernelBench problems (a scripted model that
writes their right kernels; the importer, the verifier, bench and the forward's timing are the
real ones) reports KernelBench's correctness and fast_0/1/2 over eager PyTorch and
torch.compile, with every problem's speedup and interval. Skipped without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.assist.evaluation import store
from app.assist.evaluation.fastp import (
    BASELINES,
    EAGER,
    P_VALUES,
    KernelBenchMeasures,
    describe,
    fast_p,
)
from app.assist.evaluation.grade import EvalSettings, Evaluation, arms_for
from app.assist.evaluation.kernelbench_timing import measure
from app.assist.tasks.suite import load_task
from tests.assist.evaluation.kernelbench_support import import_problem, right_body
from tests.assist.scripted import ScriptedModel

pytestmark = pytest.mark.gpu


def test_an_evaluation_of_two_imported_problems_reports_fast_p(tmp_path: Path) -> None:
    tasks = [load_task(import_problem(tmp_path, stem, with_kernel=False))
             for stem in ("19_ReLU", "77_Scale_Bound")]
    settings = EvalSettings(tasks=tasks, run_dir=tmp_path / "run", arms=arms_for("off", "off"),
                            k=1, rounds=1, backend="pycuda", heldout=frozenset())
    result = Evaluation(ScriptedModel(right_body), settings).run()
    measures = measure(result, settings, print)
    print(describe(measures))
    assert measures.timed and measures.device, measures.reason
    assert [o.correct for o in measures.problems] == [True, True]
    for outcome in measures.problems:
        assert outcome.speedup_eager is not None, outcome.note
        assert outcome.eager_low is not None and outcome.eager_high is not None
        assert outcome.eager_low <= outcome.speedup_eager <= outcome.eager_high
        assert outcome.speedup_compile is not None, outcome.note
    table = measures.fast_p_table()
    assert {(f.baseline, f.p) for f in table} == {(b, p) for b in BASELINES for p in P_VALUES}
    assert fast_p(measures.problems, 0.0, EAGER).share.share == 1.0
    path = tmp_path / "results.jsonl"
    store.append_result({**result.as_dict(), "kernelbench": measures.as_dict()}, path)
    (line,), _ = store.load_results(path)
    assert KernelBenchMeasures.from_dict(line["kernelbench"]) == measures
