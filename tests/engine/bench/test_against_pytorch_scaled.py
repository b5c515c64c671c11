"""`bench --against-pytorch` where the problem's own case is too large for this machine
(KernelBench's element-wise problems at 4096 x 393216 need about 100 GiB of host memory for
bench's checks): the kernel and the forward are timed at the spec's case with its leading size
halved until it fits, and the report says so, naming the spec's case and the refusal. The
kernel runs on the selftest backend (a real worker process that copies its first buffer into
the second); the machine's available memory is set to 1 GiB so that the same case is refused
on every machine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.engine.bench.against_pytorch import compare_file, halved
from app.engine.bench.runner import BenchOptions
from app.engine.verify import memory
from app.engine.verify.results import Status
from app.spec.model import load_spec
from tests.assist.evaluation.kernelbench_support import cli

COPY = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns a copy of its input."""
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone()


batch_size = 16384
dim = 4096

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
'''
GIB = 1 << 30


@pytest.fixture
def copy_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The imported problem, its entry the selftest backend's copy; 1 GiB of memory available."""
    source = tmp_path / "level1" / "1_Copy.py"
    source.parent.mkdir()
    source.write_text(COPY)
    done = cli("import", "kernelbench", str(source), "--out", str(tmp_path / "tasks"))
    assert done.returncode == 0, done.stdout + done.stderr
    spec = next((tmp_path / "tasks").rglob("*.toml"))
    spec.write_text(spec.read_text().replace('entry = "kb_1_copy"', 'entry = "copy"'))
    spec.with_suffix(".cu").write_text('extern "C" __global__ void copy() {}\n')
    monkeypatch.setattr(memory, "available_memory", lambda: GIB)
    return spec


def test_a_case_too_large_is_timed_at_its_leading_size_halved(copy_task: Path) -> None:
    options = BenchOptions(backend="selftest", budget_ms=20.0, trusted=True)
    comparison = compare_file(copy_task, options, compile_too=False)
    assert comparison.bench.status == Status.TIMED, comparison.bench.message
    asked = {"batch_size": 16384, "dim": 4096}
    assert comparison.scaled_from == asked
    timed = comparison.bench.points[0].case
    assert timed["dim"] == 4096 and timed["batch_size"] < 16384
    assert 16384 % timed["batch_size"] == 0
    # The largest halving that fits: twice its batch did not.
    spec = load_spec(copy_task)
    again = compare_file(copy_task, replace(options, case={**timed, "batch_size":
                                                           2 * timed["batch_size"]}),
                         compile_too=False)
    assert again.bench.status == Status.UNVERIFIED
    assert memory.is_memory_refusal(again.bench.message) and again.scaled_from is None
    text = comparison.describe()
    assert text.startswith("timed at a smaller case than the spec's {'batch_size': 16384, "
                           "'dim': 4096}, its leading size halved until it fit: case "
                           "{batch_size=16384, dim=4096} needs about"), text
    assert comparison.to_json()["scaled_from"] == asked
    # The forward is timed at the same smaller case (here it needs a GPU, and says so).
    assert "needs an NVIDIA GPU" in comparison.forward.message
    assert halved(spec, {"batch_size": 1, "dim": 4096}) is None


def test_a_case_the_user_chose_is_not_scaled(copy_task: Path) -> None:
    options = BenchOptions(backend="selftest", budget_ms=20.0, trusted=True,
                           case={"batch_size": 16384, "dim": 4096})
    comparison = compare_file(copy_task, options, compile_too=False)
    assert comparison.bench.status == Status.UNVERIFIED
    assert memory.is_memory_refusal(comparison.bench.message)
    assert comparison.scaled_from is None and not comparison.bench.points
