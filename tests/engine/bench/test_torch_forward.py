"""Timing a KernelBench problem's PyTorch forward, on a machine without a GPU: the refusal with
its reason (as bench refuses the CPU backend), a spec that is no KernelBench task, the real
child process in the real sandbox (a problem that fails to load is named with its line; a
PyTorch without CUDA is said to be one), and `bench --against-pytorch` on the command line.
On the GPU: test_torch_forward_gpu.py."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from app.base import system
from app.engine.bench.torch_forward import (
    ForwardOptions,
    ForwardRequest,
    child_command,
    recorded_init,
    run_child,
    time_forward,
)
from app.engine.bench.torch_forward import _environment as child_environment
from app.engine.bench.torch_forward import _write_inputs as write_inputs
from app.engine.verify.results import Status
from app.engine.worker.timing import TimingPlan
from app.isolation import sandbox
from app.spec.model import load_spec
from tests.assist.evaluation.kernelbench_support import ROOT, cli, import_problem

NO_GPU = not system.list_gpus()


def _child(spec_path: Path, problem_text: str | None = None) -> str:
    """Run the forward's child process on a small case (sandboxed where a sandbox can be had);
    its reply's message."""
    spec = load_spec(spec_path)
    if problem_text is not None:
        (spec.base_dir / "problem.py").write_text(problem_text)
    scratch = Path(tempfile.mkdtemp(prefix="ks-forward-test-"))
    files = write_inputs(spec, {"batch_size": 8, "dim": 16}, scratch)
    request = ForwardRequest(files, TimingPlan().to_message(), True, recorded_init(spec))
    env = child_environment()
    sandboxed = sandbox.available()[0]
    command = child_command(spec.base_dir / "problem.py", scratch, env, sandboxed)
    reply = run_child(command, request, env, scratch, 120.0, sandboxed)
    assert not reply.ok
    return reply.message


def test_without_a_gpu_the_forward_is_refused_with_the_reason(tmp_path: Path) -> None:
    spec = load_spec(import_problem(tmp_path, "19_ReLU"))
    refused = time_forward(spec, options=ForwardOptions(backend="cpu"))
    assert refused.status == Status.UNVERIFIED and refused.exit_code == 3
    assert "timing PyTorch's forward needs an NVIDIA GPU" in refused.message
    assert refused.case == {"batch_size": 4096, "dim": 4096}
    if NO_GPU:
        auto = time_forward(spec)
        assert auto.exit_code == 3 and "no NVIDIA GPU found" in auto.message


def test_a_spec_that_is_no_kernelbench_task_is_refused_before_anything_runs() -> None:
    spec = load_spec(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml")
    refused = time_forward(spec)
    assert refused.status == Status.SPEC_ERROR and refused.exit_code == 2
    assert "not a task imported from KernelBench (no problem.py beside it)" in refused.message


def test_the_child_names_a_problem_that_fails_to_load_and_its_line(tmp_path: Path) -> None:
    spec = import_problem(tmp_path, "19_ReLU")
    message = _child(spec, "import torch\n\nraise RuntimeError('no such model here')\n")
    assert message == ("problem.py failed to load: RuntimeError: no such model here "
                       "(problem.py line 3)")


@pytest.mark.skipif(not NO_GPU, reason="a GPU is present: the child would time the forward")
def test_the_child_says_when_pytorch_sees_no_gpu(tmp_path: Path) -> None:
    message = _child(import_problem(tmp_path, "19_ReLU"))
    assert "sees no CUDA device here" in message and "the forward needs a GPU" in message


def test_bench_against_pytorch_on_the_cpu_backend_refuses_both_timings(tmp_path: Path) -> None:
    spec = import_problem(tmp_path, "19_ReLU")
    text = cli("bench", str(spec), "--against-pytorch", "--backend", "cpu")
    assert text.returncode == 3, text.stdout + text.stderr
    assert "timing needs an NVIDIA GPU" in text.stdout
    assert "PyTorch forward not timed: timing PyTorch's forward needs an NVIDIA GPU" in \
        text.stdout
    as_json = cli("bench", str(spec), "--against-pytorch", "--backend", "cpu", "--json")
    data = json.loads(as_json.stdout)
    assert data["exit_code"] == 3 and data["speedups"] == []
    assert data["bench"]["status"] == "unverified" and data["pytorch"]["status"] == "unverified"


def test_bench_against_pytorch_usage_errors(tmp_path: Path) -> None:
    spec = import_problem(tmp_path, "19_ReLU")
    both = cli("bench", str(spec), "--against-pytorch", "--vs", str(spec))
    assert both.returncode == 2 and "leave out --vs and --sweep" in both.stderr
    alone = cli("bench", str(spec), "--no-compile")
    assert alone.returncode == 2 and "--no-compile goes with --against-pytorch" in alone.stderr
    other = cli("bench", str(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml"),
                "--against-pytorch")
    assert other.returncode == 2 and "not a task imported from KernelBench" in other.stdout
