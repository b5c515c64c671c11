"""KernelBench stays a fair measure: teach data refuses a task imported from a KernelBench-style
problem, near copies of KernelBench's problems under other names, shapes, spellings and
registers, and keeps a distinct task (verified for real on the CPU backend). The fingerprints
ship with the app; rebuilding them from the snapshot gives the same file."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest

from app.assist.tasks.kernelbench_folder import import_problem
from app.assist.tasks.suite import load_suite
from app.assist.teach import kbprints
from app.assist.teach.data import build
from app.assist.teach.dimreduce import REDUCTIONS
from app.assist.teach.guard import Guard
from app.assist.teach.kbguard import PRINTS, KernelBenchGuard, expressions_in, load_prints
from app.assist.teach.ops import FLOAT_OPS, INT_OPS
from app.assist.teach.shaped import shaped_map
from app.assist.teach.sources import allowed_candidates

# A KernelBench checkout or bare git directory, where this machine has one.
SNAPSHOT = next((p for p in (Path("/work/kernelbench"),
                             Path("/work/.mirror/ScalingIntelligence+KernelBench/repo"))
                 if (p / "KernelBench").is_dir() or (p / "HEAD").is_file()), Path("/nonexistent"))

# A problem in KernelBench's format, in our own words: a ReLU over batch_size x dim.
RELU_PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        """Rectifies its input."""
        def __init__(self):
            super().__init__()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x)

    batch_size = 64
    dim = 1024

    def get_inputs():
        return [torch.randn(batch_size, dim)]

    def get_init_inputs():
        return []
''')
RELU_KERNEL = """extern "C" __global__ void kb_rectify(const float* __restrict__ x,
                                     float* __restrict__ out, int batch_size, int dim)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < batch_size * dim) {
        out[i] = fmaxf(x[i], 0.0f);
    }
}
"""


@pytest.fixture(scope="module")
def guard() -> Guard:
    """The guard of the shipped suite: held-out tasks and KernelBench."""
    return Guard.of(load_suite())


def test_the_fingerprints_ship_with_the_app_and_cover_levels_one_to_three() -> None:
    prints = load_prints()
    levels = {level: sum(1 for p in prints if p.level == level) for level in (1, 2, 3)}
    assert levels[1] >= 90 and levels[2] >= 90 and levels[3] >= 40
    relu = next(p for p in prints if p.stem == "19_ReLU")
    assert dict(relu.ops) == {"relu": 1} and relu.entry == "kb_19_relu"


def test_a_task_imported_from_a_kernelbench_problem_is_refused(tmp_path: Path,
                                                               guard: Guard) -> None:
    problem = tmp_path / "rectify.py"
    problem.write_text(RELU_PROBLEM, encoding="utf-8")
    spec = import_problem(problem, tmp_path / "tasks")
    # A kernel the user wrote for it, which passes: without one, no source offers the task.
    (spec.parent / "kb_rectify.cu").write_text(RELU_KERNEL, encoding="utf-8")
    summary = build(tmp_path / "out", 1, allowed_candidates([spec.parent]), guard,
                    lambda _line: None)
    assert (summary.written, summary.refused_heldout, summary.refused_kernelbench) == (0, 1, 1)
    assert "KernelBench problem" in summary.refusals[0]


@pytest.mark.parametrize("description", [
    # 19_ReLU under another name, a 3-D shape, float16, F.relu spelled out
    "Compute what the PyTorch expression `torch.nn.functional.relu(inp)` gives for the inputs "
    "inp (float16, shape n x c x l), into y (float16, shape n x c x l).",
    # 20_LeakyReLU with another slope, as a forward body
    "forward(self, a) returns `F.leaky_relu(a, negative_slope=0.2)` for a of shape rows x cols.",
    # 25_Swish written with a method call
    "def forward(self, v): return v * v.sigmoid()  # v: (batch, features), float32",
    # 23_Softmax along the last dim in a code block
    "```python\nclass M(nn.Module):\n    def forward(self, t):\n"
    "        return t.softmax(dim=-1)\n```",
    # 1_Conv2D_ReLU_BiasAdd as a whole module of our own: its layer read from __init__
    "Make this fast:\n```python\nclass Net(nn.Module):\n    def __init__(self, cin, cout, k):\n"
    "        super().__init__()\n        self.c = nn.Conv2d(cin, cout, k)\n"
    "        self.b = nn.Parameter(torch.zeros(cout, 1, 1))\n"
    "    def forward(self, t):\n        return F.relu(self.c(t)) + self.b\n```",
    # 100_HingeLoss's docstring, nearly
    "A model that computes Hinge Loss for binary classification tasks, in float32.",
    # the name of an imported problem
    "out = kb_22_tanh(x) over batch_size x dim",
])
def test_near_copies_of_kernelbench_problems_are_refused(description: str, guard: Guard) -> None:
    assert "KernelBench" in guard.refuse("some_kernel", description, "")


@pytest.mark.parametrize("description", [
    "Compute what the PyTorch expression `torch.relu(x) * alpha` gives for the inputs x "
    "(float32, shape batch_size x dim), into out (float32, shape batch_size x dim).",
    "y[i, j] = max(x[i, j], 0) for every i < batch_size, j < dim, float32 data.",
    '"""Absolute value of x (rows x cols, float16) into out."""',
    "out = sigmoid(x) - 0.5; f32; [B, T, C]",
])
def test_distinct_tasks_are_kept(description: str, guard: Guard) -> None:
    assert guard.refuse("some_kernel", description, "") == ""


def test_a_distinct_task_in_the_pytorch_register_is_kept_and_verifies(tmp_path: Path,
                                                                      guard: Guard) -> None:
    rng = random.Random(0)
    candidate = next(c for c in (shaped_map(rng, f"k{n}") for n in range(2000))
                     if c.extra["traits"]["register"] == "pytorch" and "relu" in c.description)
    summary = build(tmp_path, 1, iter([candidate]), guard, lambda _line: None)
    assert (summary.written, summary.refused_kernelbench) == (1, 0), summary.dropped


def test_operations_taught_outside_the_pytorch_register_are_exactly_kernelbench_ones() -> None:
    """ops.Op.kernelbench (and dimreduce.Reduction.kernelbench) say which operations' PyTorch
    forms the guard would refuse; the generator relies on them to keep those forms out."""
    kernelbench = KernelBenchGuard.shipped()
    for op in FLOAT_OPS + INT_OPS:
        for form in op.torch:
            text = f"`{form.format(a='x', b='y', s='alpha')}`"
            assert bool(kernelbench.refuse("k", text)) == op.kernelbench, (op.tag, form)
    for reduction in REDUCTIONS:
        for keep in ("", ", keepdim=True"):
            text = f"`{reduction.torch.format(x='x', d=1, k=keep)}`"
            assert bool(kernelbench.refuse("k", text)) == reduction.kernelbench, reduction.tag


def test_expressions_are_found_in_spans_returns_and_code_blocks() -> None:
    found = expressions_in("Take `torch.abs(x)` then return x.exp() * 2. Then\n```\ny = a - b\n```")
    assert {tuple(sorted(f)) for f in found} == {("-",), ("abs",), ("*", "exp")}


@pytest.mark.skipif(not SNAPSHOT.exists(), reason="no KernelBench snapshot on this machine")
def test_rebuilding_the_fingerprints_from_the_snapshot_gives_the_shipped_file(
        tmp_path: Path) -> None:
    out = tmp_path / "prints.json"
    kbprints.build(SNAPSHOT, out)
    assert out.read_text(encoding="utf-8") == PRINTS.read_text(encoding="utf-8")
