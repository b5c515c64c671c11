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
from app.engine.verify.memory import is_memory_refusal
from app.engine.verify.results import Status
from app.spec.cases import CaseError
from app.spec.model import Case, Spec, SpecError, load_spec

# Halvings of the leading size tried before giving up on a case too large for this machine.
MAX_HALVINGS = 12


@dataclass
class PytorchComparison:
    """The kernel's bench report, the forward's timing, and the speedups over each form."""

    bench: BenchReport
    forward: ForwardTiming
    speedups: list[Speedup] = field(default_factory=list)
    # When the spec's bench case did not fit this machine: that case, and why (both were then
    # timed at the smaller case in bench's report).
    scaled_from: Case | None = None
    scaled_why: str = ""

    def scaled_note(self) -> str:
        """Where the comparison ran at a smaller case than the spec's, which and why."""
        if self.scaled_from is None:
            return ""
        return (f"timed at a smaller case than the spec's {self.scaled_from}, its leading size "
                f"halved until it fit: {self.scaled_why}")

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
        if self.scaled_from is not None:
            lines.insert(0, self.scaled_note())
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
                              "high": s.high, "level": s.level} for s in self.speedups],
                "scaled_from": self.scaled_from, "scaled_why": self.scaled_why}


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


def halved(spec: Spec, case: Case) -> Case | None:
    """The case with the leading size of the spec's first input halved (KernelBench's batch
    size, or a matrix's side), or None when there is none to halve. Only that one size changes,
    so sizes worked out from the others (a convolution's output) stay right."""
    first = next((a for a in spec.args if a.is_buffer and not a.is_output), None)
    leading = first.shape[0] if first is not None and first.shape else None
    value = case.get(leading) if isinstance(leading, str) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 2:
        return None
    return {**case, str(leading): value // 2}


def _bench_fitting(spec: Spec, path: Path | str, options: BenchOptions,
                   progress: Progress | None) -> tuple[BenchReport, BenchOptions, str]:
    """Bench at the spec's case; where that case is too large for this machine (KernelBench's
    element-wise problems at their own size need more host memory than bench's checks can have
    on a 128 GiB machine), at the largest halving of its leading size that fits, unless the
    caller chose the case. The report, the options it ran with and the first refusal."""
    report = bench_file(path, options, progress=progress)
    why = report.message
    if options.case is not None or options.sweep is not None or not is_memory_refusal(why):
        return report, options, ""
    case: Case | None = cases_for(spec, options)[0]
    for _ in range(MAX_HALVINGS):
        case = halved(spec, case) if case is not None else None
        if case is None or not is_memory_refusal(report.message):
            break
        options = replace(options, case=case)
        report = bench_file(path, options, progress=progress)
    return report, options, why


def compare(spec: Spec, path: Path | str, options: BenchOptions, compile_too: bool = True,
            progress: Progress | None = None) -> PytorchComparison:
    """Bench the kernel, then time the forward at the same case; never raises for a kernel or
    a problem. A spec that is no KernelBench task is refused before anything runs."""
    if problem_file(spec) is None:
        message = NOT_KERNELBENCH.format(spec=Path(path).name)
        return PytorchComparison(BenchReport(Status.SPEC_ERROR, message),
                                 ForwardTiming(Status.SPEC_ERROR, message))
    try:
        asked = cases_for(spec, options)[0]
    except CaseError as error:
        report = BenchReport(Status.SPEC_ERROR, str(error))
        return PytorchComparison(report, ForwardTiming(Status.SPEC_ERROR, str(error)))
    report, options, why = _bench_fitting(spec, path, options, progress)
    scaled = (asked, why) if options.case is not None and options.case != asked else (None, "")
    if report.status != Status.TIMED and report.exit_code != 3:
        return PytorchComparison(report, _not_timed(report), [], *scaled)
    case = cases_for(spec, options)[0]
    if progress is not None:
        progress("timing the PyTorch forward (eager, torch.compile)", 0.95)
    forward = time_forward(spec, case, forward_options(options, compile_too))
    return PytorchComparison(report, forward, speedups(kernel_samples(report), forward,
                                                       options.seed), *scaled)


def compare_file(path: Path | str, options: BenchOptions, compile_too: bool = True,
                 progress: Progress | None = None) -> PytorchComparison:
    """compare() for a spec file (one spec: no --vs, no --sweep)."""
    try:
        spec = load_spec(path)
    except SpecError as error:
        report = BenchReport(Status.SPEC_ERROR, str(error))
        return PytorchComparison(report, ForwardTiming(Status.SPEC_ERROR, str(error)))
    return compare(spec, path, replace(options, vs=None, sweep=None), compile_too, progress)
