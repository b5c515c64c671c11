"""`spec-check`: is a spec strong enough to catch wrong kernels?

A panel of impostors (app.engine.verify.impostors) forges the outputs of typical wrong kernels
for the spec's own cases and seeds; each forgery goes through the verifier's checks. An
impostor that passes every run shows a hole in the spec: the result is "weak" (exit 1) and
names it, with what to change. Warnings (app.engine.verify.specwarnings) point at weaknesses no
impostor proves. Nothing is compiled and no kernel runs; only the spec's reference does, in its
own process and under the same trust rule as for `verify`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.engine.verify.impostors import (
    PANEL,
    Impostor,
    Lab,
    SpecProblem,
    Trial,
    judge,
    show_case,
)
from app.engine.verify.reference import ReferenceError, load_reference
from app.engine.verify.results import Finding
from app.engine.verify.runs import run_status
from app.engine.verify.specwarnings import SpecWarning, find_warnings
from app.isolation import trust
from app.spec.cases import CaseError, Resolved, resolve_each
from app.spec.model import Case, Spec, SpecError, load_spec


class Strength(StrEnum):
    """spec-check's answer: strong (exit 0), weak (exit 1), a spec that cannot be used (exit 2),
    or not checked because its reference may not run here (exit 3)."""

    STRONG = "strong"
    WEAK = "weak"
    BAD_SPEC = "bad_spec"
    UNCHECKED = "unchecked"


class ImpostorStatus(StrEnum):
    """What became of one impostor."""

    CAUGHT = "caught"
    PASSES = "passes"
    SKIPPED = "skipped"


EXIT_CODES = {Strength.STRONG: 0, Strength.WEAK: 1, Strength.BAD_SPEC: 2, Strength.UNCHECKED: 3}


@dataclass(frozen=True)
class ImpostorResult:
    """One impostor against one spec: caught (by which case, seed and check), passing (in
    which cases, and what to change), or skipped (why it does not apply)."""

    name: str
    description: str
    status: ImpostorStatus
    message: str
    case: Case | None = None
    seed: int | None = None
    finding: str = ""
    cases: list[Case] = field(default_factory=list)

    def describe(self) -> str:
        """One line: the status, the name, and the detail."""
        label = "PASSES" if self.status == ImpostorStatus.PASSES else str(self.status)
        return f"{label:<8} {self.name:<26} {self.message}"


@dataclass
class SpecCheck:
    """The outcome of checking one spec."""

    status: Strength
    message: str
    spec_path: str = ""
    impostors: list[ImpostorResult] = field(default_factory=list)
    warnings: list[SpecWarning] = field(default_factory=list)
    runs: int = 0
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 strong, 1 weak, 2 bad spec, 3 not checked."""
        return EXIT_CODES[self.status]

    @property
    def passing(self) -> list[ImpostorResult]:
        """The impostors that the spec lets through."""
        return [i for i in self.impostors if i.status == ImpostorStatus.PASSES]

    def to_json(self) -> dict[str, Any]:
        """Everything, as JSON-ready data."""
        data = asdict(self)
        data["exit_code"] = self.exit_code
        return data

    def describe(self) -> str:
        """A readable report: the answer, each impostor, then the warnings."""
        lines = [f"{self.status.upper()}: {self.message}"]
        lines += ["  " + i.describe() for i in self.impostors]
        if self.warnings:
            lines.append("warnings:")
            lines += ["  " + w.describe() for w in self.warnings]
        if self.impostors:
            lines.append(f"  {self.runs} forged run(s) checked in {self.seconds:.2f} s")
        return "\n".join(lines)


# An impostor's result and the number of forged runs it took.
Tried = tuple[ImpostorResult, int]


def _order(lab: Lab) -> list[tuple[int, int]]:
    """Every (case, seed), smallest cases first: most impostors fall at the first case larger
    than one element, so the big cases are rarely needed."""
    by_size = sorted(range(len(lab.resolved)), key=lambda i: lab.resolved[i].nbytes(lab.spec))
    return [(index, seed) for index in by_size for seed in range(lab.spec.seeds)]


def _caught(impostor: Impostor, trial: Trial, findings: list[Finding]) -> ImpostorResult:
    """An impostor stopped by a run, naming the run and the check that failed."""
    status = run_status(findings)
    first = next(f for f in findings if f.kind == status)
    case = trial.resolved.case
    share = f" ({first.count} of {first.total} elements)" if first.total else ""
    return ImpostorResult(
        impostor.name, impostor.description, ImpostorStatus.CAUGHT,
        f"case {show_case(case)} seed {trial.seed}: {status} in {first.buffer}{share}",
        dict(case), trial.seed, str(status))


def _try(lab: Lab, impostor: Impostor, order: list[tuple[int, int]]) -> Tried:
    """Run one impostor until a run catches it; also the number of runs it took."""
    reason = impostor.skip(lab)
    if reason:
        return ImpostorResult(impostor.name, impostor.description, ImpostorStatus.SKIPPED,
                              reason), 0
    for count, (index, seed) in enumerate(order, start=1):
        trial = lab.trial(index, seed)
        try:
            forgery = impostor.forge(lab, trial)
        except ReferenceError as error:
            return ImpostorResult(impostor.name, impostor.description, ImpostorStatus.SKIPPED,
                                  f"the reference cannot compute this impostor's answer: "
                                  f"{error}"), count
        findings = judge(lab, trial, forgery)
        if findings:
            return _caught(impostor, trial, findings), count
    cases = [dict(r.case) for r in lab.resolved]
    return ImpostorResult(
        impostor.name, impostor.description, ImpostorStatus.PASSES,
        f"passes all {len(order)} runs, in every case ({', '.join(map(show_case, cases))}); "
        f"{impostor.hint}", cases=cases), len(order)


def _summary(results: list[ImpostorResult]) -> tuple[Strength, str]:
    """The answer and its one-line message."""
    passing = [r.name for r in results if r.status == ImpostorStatus.PASSES]
    tried = [r for r in results if r.status != ImpostorStatus.SKIPPED]
    if passing:
        return Strength.WEAK, (f"{len(passing)} of {len(tried)} impostors would pass "
                               f"verification: {', '.join(passing)}")
    return Strength.STRONG, f"all {len(tried)} impostors are caught"


def _resolve_all(spec: Spec) -> list[Resolved]:
    """Every case resolved; SpecProblem naming the field where one cannot be."""
    try:
        return resolve_each(spec, list(spec.cases))
    except CaseError as error:
        raise SpecProblem(str(error)) from None


def _run_panel(spec: Spec) -> tuple[list[Tried], list[SpecWarning]]:
    """Every impostor and every warning, with the reference in its own process throughout;
    SpecProblem where the spec's own inputs or reference fail."""
    resolved = _resolve_all(spec)
    try:
        reference = load_reference(spec.reference_path, spec.base_dir)
    except ReferenceError as error:
        raise SpecProblem(str(error)) from None
    with reference:
        lab = Lab(spec, reference, resolved)
        order = _order(lab)
        tried = [_try(lab, impostor, order) for impostor in PANEL]
        return tried, find_warnings(lab)


def check_spec(spec: Spec, vouched: bool | None = None) -> SpecCheck:
    """Run the impostor panel and the warnings on a parsed spec. The spec's reference runs, as
    for verify: inside the sandbox, or where none can be had only if app.isolation.trust allows it
    (`vouched` as for trust.decide); otherwise the answer is UNCHECKED, naming what to do."""
    started = time.perf_counter()
    path = str(spec.path or "")
    decision = trust.decide(spec, vouched)
    if decision.refusal:
        return SpecCheck(Strength.UNCHECKED, decision.refusal, path)
    try:
        tried, warnings = _run_panel(spec)
    except SpecProblem as error:
        return SpecCheck(Strength.BAD_SPEC, str(error), path,
                         seconds=time.perf_counter() - started)
    results = [result for result, _runs in tried]
    status, message = _summary(results)
    return SpecCheck(status, message, path, results, warnings,
                     sum(runs for _result, runs in tried), time.perf_counter() - started)


def check_spec_file(path: Path | str) -> SpecCheck:
    """check_spec() for a spec file; a file that cannot be read or parsed is BAD_SPEC with the
    parser's message (it names every problem and its field)."""
    try:
        spec = load_spec(path)
    except SpecError as error:
        # One problem reads best on one line; several keep the parser's list.
        message = f"{path}: {error.problems[0]}" if len(error.problems) == 1 else str(error)
        return SpecCheck(Strength.BAD_SPEC, message, str(path))
    return check_spec(spec)


def brief_warnings(spec: Spec, vouched: bool | None = None) -> list[str]:
    """One line per weakness, for verify's output: each impostor the spec lets pass, then each
    warning. Empty for a spec that cannot be checked (verify reports that itself). Runs the
    spec's reference under the same rule as verify (`vouched` as for trust.decide)."""
    result = check_spec(spec, vouched)
    lines = [f"weak spec: a kernel that {i.description} would pass; spec-check names the fix"
             for i in result.passing]
    return lines + [w.message for w in result.warnings]
