"""Keep the fastest that passes (issue 27): after a chain's first pass, speed rounds ask for a
faster kernel with the timing as feedback, and the chain keeps the fastest kernel that passed.
The loop, the real verifier (CPU backend) and the run folder are under test with a scripted
model; the times come from a table keyed by each kernel's marked variant, since the CPU
emulation's time says nothing of a GPU's (the GPU test, test_speed_rounds_gpu.py, benches real
kernels). Speed rounds are refused on the CPU backend, with the reason, before a model loads."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from app.assist.evaluation.kernelbench_timing import first_chain_kernel
from app.assist.evaluation.metrics import TaskOutcome, summarize
from app.assist.model.batch import Request
from app.assist.model.session import GenerationOptions
from app.assist.refine.attempts import load_attempt
from app.assist.refine.loop import Chain, Job, LoopSettings, RefineLoop
from app.assist.refine.speed import Timing, micros
from app.assist.refine.verifypool import VerifyPool
from app.assist.tasks.suite import TASKS_DIR, load_task
from app.base import codec
from app.cli.entry import main
from app.engine.verify.runs import VerifyOptions
from tests.assist.scripted import ADDS, SUBTRACTS, ScriptedModel

ADD = TASKS_DIR / "add_f32" / "add_f32.toml"
# (variant, right kernel?, ms a launch), in the order the rounds write them
SCRIPT = [("slow", True, 0.030), ("fast", True, 0.010), ("faster_but_wrong", False, 0.001),
          ("slower", True, 0.050)]
TIMES = {name: ms for name, _right, ms in SCRIPT}


class Writer:
    """Writes the script's variants in turn, each marked by a macro the timer reads (in code, not
    a comment: kernels that differ only in comments are one kernel to the loop)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Request) -> str:
        name, right, _ms = SCRIPT[min(self.calls, len(SCRIPT) - 1)]
        self.calls += 1
        return f"#define VARIANT_{name}\n" + (ADDS if right else SUBTRACTS)


class TableTimer:
    """Times a passing candidate from its variant's entry in TIMES; records what it timed."""

    def __init__(self) -> None:
        self.timed: list[str] = []

    def __call__(self, spec_path: Path, trusted: bool | None) -> Timing:
        found = re.search(r"#define VARIANT_(\w+)", (spec_path.parent / "add_f32.cu").read_text())
        assert found is not None
        self.timed.append(found.group(1))
        ms = TIMES[found.group(1)]
        return Timing(ms, f"it took {micros(ms)} a launch")


def _run(tmp_path: Path, speed_rounds: int, timer: TableTimer) -> tuple[Chain, ScriptedModel]:
    """One chain on add_f32 with speed rounds, verified for real on the CPU backend."""
    task = load_task(ADD)
    chain = Chain(Job(task.name, task.spec(), task.description, "arm", False), 0, 0,
                  GenerationOptions())
    model = ScriptedModel(Writer())
    stop = threading.Event()
    settings = LoopSettings(tmp_path / "run", 3, speed_rounds=speed_rounds, timer=timer)
    with VerifyPool(VerifyOptions(backend="cpu"), 1, stop) as pool:
        RefineLoop(model, pool, settings, stop).run([chain])
    return chain, model


def test_speed_rounds_keep_the_fastest_kernel_that_passed(tmp_path: Path) -> None:
    timer = TableTimer()
    chain, model = _run(tmp_path, 3, timer)
    assert [a.status for a in chain.attempts] == ["passed", "passed", "mismatch", "passed"]
    assert chain.finished and chain.passed and chain.rounds_to_pass == 1
    # Every kernel that passed was timed, the wrong one never.
    assert timer.timed == ["slow", "fast", "slower"]
    assert chain.kept is chain.attempts[1] and chain.speedup == pytest.approx(3.0)
    kept = load_attempt(Path(chain.attempts[1].folder))
    assert kept is not None and kept.time_ms == pytest.approx(0.010)

    prompts = [calls[0].messages[-1]["content"] for calls in model.calls]
    assert all(p.startswith("Make the kernel below faster") for p in prompts[1:])
    assert "it took 30.0 us a launch" in prompts[1] and "#define VARIANT_slow" in prompts[1]
    assert "took 10.0 us (round 2; the first took 30.0 us)" in prompts[2]
    assert "#define VARIANT_fast" in prompts[2]
    # After a faster kernel that failed, the kept one is shown again, and why.
    assert "(round 3) did not pass (mismatch)" in prompts[3]
    assert "#define VARIANT_fast" in prompts[3]

    # KernelBench's sample 0 is the chain's kept kernel.
    spec = first_chain_kernel(tmp_path / "run", load_task(ADD), "arm")
    assert spec is not None and spec.parent == Path(chain.attempts[1].folder)


def test_without_speed_rounds_a_chain_ends_at_its_first_pass_untimed(tmp_path: Path) -> None:
    timer = TableTimer()
    chain, _model = _run(tmp_path, 0, timer)
    assert [a.status for a in chain.attempts] == ["passed"] and chain.finished
    assert timer.timed == [] and chain.kept is chain.attempts[0] and chain.speedup is None


def test_an_arm_reports_the_geometric_mean_of_its_kept_kernels_speedups() -> None:
    outcomes = [TaskOutcome("a", 1, "float32", 2, 2, speedups=(2.0, 8.0)),
                TaskOutcome("b", 1, "float32", 1, 0)]
    summary = summarize(outcomes, 2)
    assert summary.speedup == pytest.approx(4.0) and summary.timed_chains == 2
    assert summarize([TaskOutcome("b", 1, "float32", 1, 0)], 1).speedup is None


@pytest.mark.parametrize("command", [["eval", "add_f32", "-k", "1"], ["propose", str(ADD)]])
def test_speed_rounds_are_refused_on_the_cpu_backend_before_a_model_loads(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--speed-rounds", "2", "--backend", "cpu"]) == 2
    said = capsys.readouterr().err
    assert "speed rounds time each kernel that passes on an NVIDIA GPU, and the CPU backend " \
        "was chosen" in said and "leave out --speed-rounds" in said


def test_speedups_are_stored_only_where_speed_rounds_ran() -> None:
    timed = TaskOutcome("a", 1, "float32", 1, 1, speedups=(1.5,))
    plain = TaskOutcome("b", 1, "float32", 1, 1)
    assert codec.to_object(timed)["speedups"] == [1.5] and "speedups" not in codec.to_object(plain)
    assert codec.to_object(summarize([timed], 1))["speedup"] == pytest.approx(1.5)
    assert "speedup" not in codec.to_object(summarize([plain], 1))
    assert TaskOutcome.from_dict(codec.to_object(timed)) == timed
