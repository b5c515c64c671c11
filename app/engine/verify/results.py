"""Typed results of verification, which describe themselves for people and for JSON.

A timeout or a crash is a result with a stage and a message, never an exception."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from app.base import codec

# A run's start in words (the values of app.engine.verify.buffers.Start; results sits below
# buffers, which imports the spec and NumPy).
START_WORDS = {"poison": "outputs started as the poison NaN",
               "zeros": "outputs started at zero",
               "values": "outputs started as random ordinary values"}


class Status(StrEnum):
    """Every status a run, a verdict or a timing report can have; JSON keeps the strings."""

    PASSED = "passed"
    TIMED = "timed"
    MISMATCH = "mismatch"
    UNWRITTEN = "unwritten"
    GUARD_ZONE = "guard_zone"
    INPUT_CHANGED = "input_changed"
    TIMEOUT = "timeout"
    CRASH = "crash"
    COMPILE_ERROR = "compile_error"
    LAUNCH_ERROR = "launch_error"
    SANITIZER = "sanitizer"
    UNVERIFIED = "unverified"
    CANCELLED = "cancelled"
    SPEC_ERROR = "spec_error"
    REFERENCE_ERROR = "reference_error"


# What each status means, in plain words for the results pane and the CLI.
PLAIN_WORDS = {
    Status.PASSED: "every output matched the reference within tolerance",
    Status.TIMED: "every variant was verified and timed",
    Status.MISMATCH: "outputs differ from the reference",
    Status.UNWRITTEN: "the kernel left output elements unwritten (they still hold the poison "
                      "value)",
    Status.GUARD_ZONE: "the kernel wrote outside a buffer (the guard zone around it changed)",
    Status.INPUT_CHANGED: "the kernel modified an input buffer",
    Status.TIMEOUT: "the kernel did not finish within the time limit and was killed",
    Status.CRASH: "the kernel crashed the worker (a CUDA error such as an illegal address)",
    Status.COMPILE_ERROR: "the kernel did not compile",
    Status.LAUNCH_ERROR: "the kernel could not be loaded or launched",
    Status.SANITIZER: "compute-sanitizer reported errors",
    Status.UNVERIFIED: "a check could not run, so nothing is claimed",
    Status.CANCELLED: "the run was cancelled",
    Status.SPEC_ERROR: "the spec cannot be used",
    Status.REFERENCE_ERROR: "the reference failed or returned something unusable",
}
FAILING = frozenset({Status.MISMATCH, Status.UNWRITTEN, Status.GUARD_ZONE, Status.INPUT_CHANGED,
                     Status.TIMEOUT, Status.CRASH, Status.COMPILE_ERROR, Status.LAUNCH_ERROR,
                     Status.SANITIZER})
UNDECIDED = frozenset({Status.UNVERIFIED, Status.CANCELLED})
BAD_INPUT = frozenset({Status.SPEC_ERROR, Status.REFERENCE_ERROR})
# Runs that end a verification early: nothing later could be trusted or would be different.
STOPPING = frozenset({Status.TIMEOUT, Status.CRASH, Status.CANCELLED, Status.LAUNCH_ERROR,
                      Status.UNVERIFIED})
# Within one run, the most telling finding decides the run's status.
FINDING_PRIORITY = (Status.GUARD_ZONE, Status.INPUT_CHANGED, Status.UNWRITTEN, Status.MISMATCH)


def known_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The entries of `data` that are fields of the dataclass `cls` (JSON may carry derived
    extras, such as exit_code, which are not constructor arguments)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def exit_code_for(status: Status, success: Status) -> int:
    """The exit codes of docs/spec.md: 0 for `success`, 2 bad spec or reference, 3 could not decide,
    1 for every way a kernel can fail."""
    if status == success:
        return 0
    if status in BAD_INPUT:
        return 2
    if status in UNDECIDED:
        return 3
    return 1


@dataclass(frozen=True)
class Finding:
    """One thing wrong with one buffer in one run."""

    kind: Status
    buffer: str
    message: str
    count: int = 0
    total: int = 0
    first_indices: list[list[int]] = field(default_factory=list)
    expected: list[Any] = field(default_factory=list)
    actual: list[Any] = field(default_factory=list)
    max_abs_error: float | None = None
    max_rel_error: float | None = None

    def describe(self) -> str:
        """Several lines naming the buffer, the first bad indices and values, and the errors."""
        lines = [f"{self.buffer}: {self.message}"]
        for index, want, got in zip(self.first_indices, self.expected, self.actual,
                                    strict=False):
            lines.append(f"    at {tuple(index)}: expected {want}, got {got}")
        if self.max_abs_error is not None:
            lines.append(f"    largest errors: absolute {self.max_abs_error:.3g}, "
                         f"relative {self.max_rel_error:.3g}")
        return "\n".join(lines)


@dataclass(frozen=True)
class RunResult:
    """One case and one seed."""

    case: dict[str, int | float]
    seed: int
    status: Status
    message: str = ""
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    # What the outputs held before the launch (buffers.Start: poison, zeros, values).
    start: str = ""

    @property
    def passed(self) -> bool:
        """Whether this run passed."""
        return self.status == Status.PASSED

    @classmethod
    def from_json(cls, data: Any) -> RunResult:
        """A run from its JSON (CodecError naming the field when it is not one)."""
        return codec.from_data(cls, data, "run result")

    def title(self) -> str:
        """`case {n=1000} seed 2: passed`; a failed run also says how its outputs started."""
        case = ", ".join(f"{k}={v}" for k, v in self.case.items())
        return f"case {{{case}}} seed {self.seed}: {self.status}" + (
            f" ({START_WORDS[self.start]})" if not self.passed and self.start in START_WORDS
            else "")


@dataclass
class Verdict:
    """The outcome of verifying one spec."""

    status: Status
    message: str
    backend: str = ""
    device: dict[str, Any] = field(default_factory=dict)
    spec_path: str = ""
    runs: list[RunResult] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    sanitizer: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    emulated: bool = False
    # Every seed each case ran with, and those of them drawn at random for this verification
    # (app.engine.verify.seeds): replay one with `kernel-studio verify SPEC --seed S`.
    seeds: list[int] = field(default_factory=list)
    fresh_seeds: list[int] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return self.status == Status.PASSED

    @property
    def exit_code(self) -> int:
        """The exit codes of docs/spec.md: 0 passed, 1 failed, 2 bad spec, 3 undecided."""
        return exit_code_for(self.status, Status.PASSED)

    def to_json(self) -> dict[str, Any]:
        """Everything, as JSON-ready data (the codec's, with the plain words and exit code)."""
        return codec.to_object(self)

    @classmethod
    def from_json(cls, data: Any) -> Verdict:
        """A verdict from to_json's data (across the GUI's job pipe, say); CodecError naming
        the field when it is not one."""
        return codec.from_data(cls, data, "verdict")

    def describe(self) -> str:
        """A readable report: the verdict, then every run, with details for failures."""
        lines = [f"{self.status.upper()}: {self.message}"]
        if self.backend:
            where = self.device.get("name", self.backend)
            lines.append(f"  backend: {self.backend} ({where})" + (
                " - CPU emulation: results only, timing is not meaningful"
                if self.emulated else ""))
        for run in self.runs:
            lines.append(f"  {run.title()}" + (f" - {run.message}" if run.message else ""))
            for finding in run.findings:
                lines.extend("    " + line for line in finding.describe().splitlines())
        for item in self.sanitizer:
            lines.append(f"  sanitizer: {item.get('tool')}: {item.get('kind')} in "
                         f"{item.get('kernel')} at {item.get('location') or 'unknown line'}")
        if self.runs:
            lines.append(f"  {len([r for r in self.runs if r.passed])}/{len(self.runs)} runs "
                         f"passed in {self.seconds:.2f} s")
        if self.fresh_seeds:
            lines.append(f"  {self.seeds_line()}")
        return "\n".join(lines)

    def seeds_line(self) -> str:
        """Which seeds were drawn for this verification and how to replay one ('' if none)."""
        if not self.fresh_seeds:
            return ""
        fresh = ", ".join(map(str, self.fresh_seeds))
        return (f"fresh seeds drawn for this run: {fresh} (replay one with kernel-studio "
                f"verify SPEC --seed {self.fresh_seeds[0]})")


def _verdict_extras(verdict: Verdict) -> dict[str, Any]:
    """What a verdict's JSON says beyond its fields: the status in words and the exit code."""
    return {"plain_words": PLAIN_WORDS.get(verdict.status, ""), "exit_code": verdict.exit_code}


codec.shape(Verdict, _verdict_extras)


def overall_status(runs: list[RunResult]) -> Status:
    """passed when every run passed, else the status of the first failing run."""
    for run in runs:
        if not run.passed:
            return run.status
    return Status.PASSED
