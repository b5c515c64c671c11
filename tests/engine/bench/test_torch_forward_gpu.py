"""On an NVIDIA GPU: an imported KernelBench problem's own forward (ReLU on 4096 x 4096, written
here in KernelBench's format) timed eager and under torch.compile in its sandboxed child, and
`bench --against-pytorch` reporting the task's kernel's speedup over each with its interval.
Skipped without a GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.engine.bench.torch_forward import ForwardOptions, time_forward
from app.engine.verify.results import Status
from app.engine.worker.timing import TimingPlan
from app.spec.model import load_spec
from tests.assist.evaluation.kernelbench_support import cli, import_problem

pytestmark = pytest.mark.gpu


def test_the_forward_of_an_imported_problem_is_timed_eager_and_compiled(tmp_path: Path) -> None:
    spec = load_spec(import_problem(tmp_path, "19_ReLU"))
    timing = time_forward(spec, options=ForwardOptions(backend="pycuda",
                                                       plan=TimingPlan(budget_ms=500.0)))
    print(timing.describe())
    print(json.dumps({k: v for k, v in timing.facts.items()}, indent=1))
    assert timing.status == Status.TIMED, timing.message
    eager, compiled = timing.form("eager"), timing.form("compile")
    assert eager is not None and eager.stats.count >= 10
    assert compiled is not None, timing.compile_error
    assert timing.facts["inputs"].startswith("the kernel's bench inputs")
    assert timing.facts["flush_bytes"] > 0 and timing.facts["spin"] == "torch.cuda._sleep"
    # 64 MiB read and 64 MiB written: at an H200's ~4.8 TB/s no less than about 25 us.
    assert eager.stats.median > 0.02 and compiled.stats.median > 0.02


def test_bench_against_pytorch_reports_the_speedup_over_each_with_its_interval(
        tmp_path: Path) -> None:
    spec = import_problem(tmp_path, "19_ReLU")
    done = cli("bench", str(spec), "--against-pytorch", "--backend", "pycuda", "--budget-ms",
               "500", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    data = json.loads(done.stdout)
    speedups = {s["baseline"]: s for s in data["speedups"]}
    print(json.dumps(speedups, indent=1))
    assert set(speedups) == {"eager", "compile"}
    for item in speedups.values():
        assert 0 < item["low"] <= item["speedup"] <= item["high"]
    # A memory-bound map: the hand kernel and PyTorch's are within a few times of each other.
    assert 0.2 < speedups["eager"]["speedup"] < 5
    text = cli("bench", str(spec), "--against-pytorch", "--backend", "pycuda", "--budget-ms",
               "500")
    print(text.stdout)
    assert text.returncode == 0, text.stdout[-3000:] + text.stderr[-2000:]
    assert "speedup over eager PyTorch:" in text.stdout
    assert "speedup over torch.compile:" in text.stdout
