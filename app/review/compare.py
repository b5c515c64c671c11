"""`kernel-studio compare`: variants of one task side by side. Each is compiled (resources,
occupancy, instruction mix), verified on the baseline's cases and seeds, and, on a GPU, the ones
that passed are timed interleaved with their ratio to the baseline and its 95% interval.

`compare_variants(variants, baseline, options)` never raises for a kernel's misbehaviour: every
outcome is in the CompareReport, which describes itself for the terminal and as JSON.
"""

from __future__ import annotations

from collections.abc import Callable

from app.compile import MAX_SOURCE_BYTES
from app.engine.verify.seeds import DEFAULT_RANDOM_SEEDS, draw_seeds
from app.review.evaluate import RunOptions, time_specs, verify_on
from app.review.model import CompareReport, VariantResult
from app.review.profile import compile_facts
from app.review.variants import Variant

Progress = Callable[[str, float], None]


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


def _one(variant: Variant, base: Variant, options: RunOptions, progress: Progress,
         fresh: tuple[int, ...]) -> VariantResult:
    """Compile and verify one variant on the baseline's cases and seeds and the fresh ones."""
    progress("compiling", 0.0)
    facts = compile_facts(variant.spec, options.arch, options.compiler)
    verdict = verify_on(variant.spec, list(base.spec.cases), base.spec.seeds, options, progress,
                        fresh)
    return VariantResult(variant.name, str(variant.path), variant.spec.source,
                         read_source(variant), facts, verdict)


def compare_variants(variants: list[Variant], baseline: Variant, options: RunOptions,
                     progress: Progress | None = None) -> CompareReport:
    """Compile and verify every variant, then time the ones that passed."""
    progress = progress or (lambda _t, _f: None)
    share = 0.6 / len(variants)
    # The baseline's seeds give inputs anyone can compute: every variant also runs on seeds
    # drawn now, the same for all of them (app.engine.verify.seeds).
    fresh = draw_seeds(DEFAULT_RANDOM_SEEDS, range(baseline.spec.seeds))
    results = [_one(v, baseline, options, _scaled(progress, i * share, share, v.name), fresh)
               for i, v in enumerate(variants)]
    passing = [(v.name, v.spec) for v, r in zip(variants, results, strict=True)
               if r.verdict.passed]
    timing = time_specs(passing, baseline.name, options, _scaled(progress, 0.6, 0.4, "timing"))
    progress("done", 1.0)
    return CompareReport(baseline.name, results, timing, [dict(c) for c in baseline.spec.cases],
                         baseline.spec.seeds)


def fresh_seeds_line(report: CompareReport) -> str:
    """Which seeds were drawn for this compare, and how to replay one ('' when none ran)."""
    verdict = next((v.verdict for v in report.variants if v.verdict.fresh_seeds), None)
    if verdict is None:
        return ""
    return verdict.seeds_line().replace("this run", "this compare (the same for every variant)")
