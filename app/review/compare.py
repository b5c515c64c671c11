"""`kernel-studio compare`: variants of one task side by side. Each is compiled (resources,
occupancy, instruction mix), verified on the baseline's cases and seeds, and, on a GPU, the ones
that passed are timed interleaved with their ratio to the baseline and its 95% interval.

`compare_variants(variants, baseline, options)` never raises for a kernel's misbehaviour: every
outcome is in the CompareReport, which describes itself for the terminal and as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app import __version__
from app.compile import MAX_SOURCE_BYTES
from app.engine.verify.results import BAD_INPUT, FAILING, UNDECIDED, Status, Verdict
from app.review.evaluate import RunOptions, Timing, time_specs, verify_on
from app.review.profile import CompileFacts, compile_facts
from app.review.variants import Variant

Progress = Callable[[str, float], None]
FORMAT = 1


@dataclass
class VariantResult:
    """One variant: where it is, its source, its compile and its verdict."""

    name: str
    spec_path: str
    source_name: str
    source: str
    compile: CompileFacts
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"name": self.name, "spec_path": self.spec_path, "source_name": self.source_name,
                "source": self.source, "compile": self.compile.to_json(),
                "verdict": self.verdict.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VariantResult:
        """A variant's result from to_json's data."""
        return cls(str(data["name"]), str(data["spec_path"]), str(data.get("source_name", "")),
                   str(data.get("source", "")), CompileFacts.from_json(data["compile"]),
                   Verdict.from_json(data["verdict"]))


def exit_code(statuses: list[Status], timing_status: str) -> int:
    """2 a bad spec or reference, 1 a kernel failed (verification or timing checks), 3 could
    not decide, 0 every variant passed (timed, where a GPU could time them)."""
    if any(s in BAD_INPUT for s in statuses):
        return 2
    if any(s in FAILING for s in statuses) or timing_status in FAILING:
        return 1
    if any(s in UNDECIDED for s in statuses):
        return 3
    return 0


@dataclass
class CompareReport:
    """Every variant's compile and verdict, the timing, and the baseline they are measured
    against."""

    baseline: str
    variants: list[VariantResult]
    timing: Timing
    cases: list[dict[str, int | float]] = field(default_factory=list)
    seeds: int = 0
    version: str = __version__

    @property
    def exit_code(self) -> int:
        """DESIGN.md's exit codes over every variant."""
        return exit_code([v.verdict.status for v in self.variants], self.timing.status)

    def variant(self, name: str) -> VariantResult:
        """The variant called `name`."""
        return next(v for v in self.variants if v.name == name)

    def summary(self) -> str:
        """One line: how many passed, and what timing said."""
        passed = [v.name for v in self.variants if v.verdict.passed]
        failed = [f"{v.name} ({v.verdict.status})" for v in self.variants if not v.verdict.passed]
        text = f"{len(passed)}/{len(self.variants)} variants passed"
        if failed:
            text += ": not " + ", ".join(failed)
        return text

    def to_json(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        return {"format": FORMAT, "kind": "compare", "version": self.version,
                "baseline": self.baseline, "cases": self.cases, "seeds": self.seeds,
                "variants": [v.to_json() for v in self.variants],
                "timing": self.timing.to_json(), "summary": self.summary(),
                "exit_code": self.exit_code}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompareReport:
        """A report from to_json's data (from a compare process's --json, say); ValueError
        when it is not one."""
        if data.get("kind") != "compare":
            raise ValueError("this is not a compare report")
        try:
            return cls(str(data["baseline"]),
                       [VariantResult.from_json(v) for v in data["variants"]],
                       Timing.from_json(data.get("timing") or {}),
                       list(data.get("cases") or []), int(data.get("seeds") or 0),
                       str(data.get("version", "")))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"the compare report is incomplete ({error})") from None


def read_source(variant: Variant) -> str:
    """The kernel's text for the side-by-side view ('' when it cannot be read)."""
    path = variant.spec.source_path
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _scaled(progress: Progress, start: float, part: float, prefix: str) -> Progress:
    """A progress callback for one step of the whole."""
    def report(text: str, fraction: float) -> None:
        """Forward one step."""
        progress(f"{prefix}: {text}", start + part * max(0.0, min(fraction, 1.0)))
    return report


def _one(variant: Variant, base: Variant, options: RunOptions,
         progress: Progress) -> VariantResult:
    """Compile and verify one variant on the baseline's cases and seeds."""
    progress("compiling", 0.0)
    facts = compile_facts(variant.spec, options.arch, options.compiler)
    verdict = verify_on(variant.spec, list(base.spec.cases), base.spec.seeds, options, progress)
    return VariantResult(variant.name, str(variant.path), variant.spec.source,
                         read_source(variant), facts, verdict)


def compare_variants(variants: list[Variant], baseline: Variant, options: RunOptions,
                     progress: Progress | None = None) -> CompareReport:
    """Compile and verify every variant, then time the ones that passed."""
    progress = progress or (lambda _t, _f: None)
    share = 0.6 / len(variants)
    results = [_one(v, baseline, options, _scaled(progress, i * share, share, v.name))
               for i, v in enumerate(variants)]
    passing = [(v.name, v.spec) for v, r in zip(variants, results, strict=True)
               if r.verdict.passed]
    timing = time_specs(passing, baseline.name, options, _scaled(progress, 0.6, 0.4, "timing"))
    progress("done", 1.0)
    return CompareReport(baseline.name, results, timing, [dict(c) for c in baseline.spec.cases],
                         baseline.spec.seeds)
