"""`bench --against-pytorch`: a KernelBench task's kernel timed by the usual bench path, then
the problem's own PyTorch forward at the same case and on the same inputs (eager, and
torch.compile where it works: app.engine.bench.torch_forward), and the kernel's speedup over
each with its bootstrap interval."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.engine.bench.reports import BenchReport
from app.engine.bench.runner import BenchOptions, Progress, bench_file, cases_for
from app.engine.bench.torch_forward import (
    NOT_KERNELBENCH,
    ForwardOptions,
    ForwardTiming,
    Speedup,
    problem_file,
    speedups,
    time_forward,
)
from app.engine.verify.results import Status
from app.spec.cases import CaseError
from app.spec.model import Spec, SpecError, load_spec


@dataclass
class PytorchComparison:
    """The kernel's bench report, the forward's timing, and the speedups over each form."""

    bench: BenchReport
    forward: ForwardTiming
    speedups: list[Speedup] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The bench's exit code when it did not time the kernel, else the forward's."""
        return self.bench.exit_code or self.forward.exit_code

    def speedup(self, baseline: str) -> Speedup | None:
        """The speedup over one form (eager or compile), when both were timed."""
        return next((s for s in self.speedups if s.baseline == baseline), None)

    def describe(self) -> str:
        """The bench report, the forward's times, the speedups."""
        lines = [self.bench.describe(), self.forward.describe()]
        lines += [f"  {s.describe()}" for s in self.speedups]
        if self.speedups:
            lines.append("  (ratio of medians, kernel and forward both timed cold with CUDA "
                         "events, the host's queueing hidden by a spin kernel)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Both reports with every sample, and the speedups."""
        return {"exit_code": self.exit_code, "bench": self.bench.to_json(),
                "pytorch": self.forward.to_json(),
                "speedups": [{"baseline": s.baseline, "speedup": s.speedup, "low": s.low,
                              "high": s.high, "level": s.level} for s in self.speedups]}


def kernel_samples(report: BenchReport) -> list[float]:
    """The kernel's samples (ms) at the first case, when it was timed."""
    if report.status != Status.TIMED or not report.points or not report.points[0].variants:
        return []
    return list(report.points[0].variants[0].samples_ms)


def forward_options(options: BenchOptions, compile_too: bool) -> ForwardOptions:
    """The forward's options from bench's: the same backend, plan and trust."""
    return ForwardOptions(backend=options.backend, plan=options.plan(), compile=compile_too,
                          trusted=options.trusted)


def _not_timed(report: BenchReport) -> ForwardTiming:
    """The forward's report when the kernel was not timed (nothing is compared)."""
    return ForwardTiming(report.status, "not timed, since the kernel was not: "
                                        f"{report.message}")


def compare(spec: Spec, path: Path | str, options: BenchOptions, compile_too: bool = True,
            progress: Progress | None = None) -> PytorchComparison:
    """Bench the kernel, then time the forward at the same case; never raises for a kernel or
    a problem. A spec that is no KernelBench task is refused before anything runs."""
    if problem_file(spec) is None:
        message = NOT_KERNELBENCH.format(spec=Path(path).name)
        return PytorchComparison(BenchReport(Status.SPEC_ERROR, message),
                                 ForwardTiming(Status.SPEC_ERROR, message))
    report = bench_file(path, options, progress=progress)
    if report.status != Status.TIMED and report.exit_code != 3:
        return PytorchComparison(report, _not_timed(report))
    try:
        case = cases_for(spec, options)[0]
    except CaseError as error:
        return PytorchComparison(report, ForwardTiming(Status.SPEC_ERROR, str(error)))
    if progress is not None:
        progress("timing the PyTorch forward (eager, torch.compile)", 0.95)
    forward = time_forward(spec, case, forward_options(options, compile_too))
    return PytorchComparison(report, forward, speedups(kernel_samples(report), forward,
                                                       options.seed))


def compare_file(path: Path | str, options: BenchOptions, compile_too: bool = True,
                 progress: Progress | None = None) -> PytorchComparison:
    """compare() for a spec file (one spec: no --vs, no --sweep)."""
    try:
        spec = load_spec(path)
    except SpecError as error:
        report = BenchReport(Status.SPEC_ERROR, str(error))
        return PytorchComparison(report, ForwardTiming(Status.SPEC_ERROR, str(error)))
    return compare(spec, path, replace(options, vs=None, sweep=None), compile_too, progress)
