"""Measuring an evaluation of KernelBench tasks as KernelBench does (app.assist.evaluation.fastp):
for each task, its first chain's kernel (KernelBench's sample 0); when it passed and a GPU is at
hand, that kernel is benched and the problem's own PyTorch forward timed at the same case, on
the same inputs, eager and under torch.compile (app.engine.bench.against_pytorch). On the CPU
backend the correctness part is measured and fast_p says it needs a GPU."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.assist.evaluation.fastp import COMPILE, EAGER, KernelBenchMeasures, ProblemOutcome
from app.assist.evaluation.grade import EvalResult, EvalSettings
from app.assist.refine.attempts import load_attempt
from app.assist.refine.verifypool import vouch_for
from app.assist.tasks.suite import Task, TaskError
from app.engine.bench.against_pytorch import PytorchComparison, compare, kernel_samples
from app.engine.bench.runner import BenchOptions
from app.engine.bench.torch_forward import gpu_refusal
from app.engine.verify.results import Status
from app.spec.model import SpecError, load_spec

Progress = Callable[[str], None]
# The bench budget per kernel: enough for a tight interval on a kernel of microseconds.
BUDGET_MS = 1000.0


def is_kernelbench(task: Task) -> bool:
    """Whether a task was imported from KernelBench (its problem.py lies beside its spec)."""
    return (task.spec_path.parent / "problem.py").is_file()


def first_chain_kernel(run_dir: Path, task: Task, arm: str) -> Path | None:
    """The spec of chain 1's kept kernel (KernelBench's sample 0), if it passed: its first
    passing attempt, or with speed rounds the fastest that passed."""
    chain = run_dir / task.name / arm / "chain-1"
    rounds = sorted(chain.glob("round-*"), key=lambda p: int(p.name.split("-")[1])
                    if p.name.split("-")[1].isdigit() else 0)
    passed = []
    for folder in rounds:
        attempt = load_attempt(folder)
        spec = folder / task.spec_path.name
        if attempt is not None and attempt.passed and spec.is_file():
            passed.append((attempt, spec))
    timed = [(a.time_ms, spec) for a, spec in passed if a.time_ms is not None]
    if timed:
        return min(timed, key=lambda item: item[0])[1]
    return passed[0][1] if passed else None


def _median(comparison: PytorchComparison, form: str) -> float | None:
    """The forward's median time of one form, when it was timed."""
    timed = comparison.forward.form(form)
    return timed.stats.median if timed else None


def outcome_of(task: Task, comparison: PytorchComparison) -> ProblemOutcome:
    """A correct problem's outcome from its kernel's comparison with the forward."""
    samples = kernel_samples(comparison.bench)
    eager, compiled = comparison.speedup(EAGER), comparison.speedup(COMPILE)
    notes = [comparison.scaled_note()] if comparison.scaled_from is not None else []
    if comparison.bench.status != Status.TIMED:
        notes.append(f"kernel not timed: {comparison.bench.message}")
    elif comparison.forward.status != Status.TIMED:
        notes.append(comparison.forward.describe())
    elif compiled is None:
        notes.append(f"torch.compile not timed: {comparison.forward.compile_error}")
    return ProblemOutcome(
        task.name, task.level, True, sorted(samples)[len(samples) // 2] if samples else None,
        _median(comparison, EAGER), _median(comparison, COMPILE),
        eager.speedup if eager else None, eager.low if eager else None,
        eager.high if eager else None, compiled.speedup if compiled else None,
        compiled.low if compiled else None, compiled.high if compiled else None,
        "; ".join(notes))


def time_problem(task: Task, kernel: Path, settings: EvalSettings) -> tuple[ProblemOutcome, str]:
    """Bench a passing kernel against its problem's forward; the outcome, and the GPU's name."""
    try:
        original = task.spec()
        spec = load_spec(kernel)
    except (TaskError, SpecError) as error:
        return ProblemOutcome(task.name, task.level, True, note=f"not timed: {error}"), ""
    options = BenchOptions(backend=settings.backend, timeout=settings.timeout,
                           budget_ms=BUDGET_MS, trusted=vouch_for(original, settings.backend))
    comparison = compare(spec, kernel, options)
    device = comparison.forward.facts.get("device") or comparison.bench.device.get("name", "")
    return outcome_of(task, comparison), str(device)


def measure(result: EvalResult, settings: EvalSettings,
            progress: Progress | None = None) -> KernelBenchMeasures:
    """KernelBench's measures of the evaluation's first arm over its KernelBench tasks."""
    say = progress or (lambda _message: None)
    arm = settings.arms[0].name
    reason = gpu_refusal(settings.backend)
    measures = KernelBenchMeasures(arm, timed=reason is None, reason=reason or "")
    for task in (t for t in settings.tasks if is_kernelbench(t)):
        kernel = first_chain_kernel(Path(result.run_dir), task, arm)
        if kernel is None or reason is not None:
            measures.problems.append(ProblemOutcome(task.name, task.level, kernel is not None))
            continue
        say(f"timing {task.name}: its kernel, then its PyTorch forward (eager, torch.compile)")
        outcome, device = time_problem(task, kernel, settings)
        measures.problems.append(outcome)
        measures.device = measures.device or device
    return measures
