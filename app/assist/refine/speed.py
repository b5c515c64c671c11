"""Keep the fastest that passes (issue 27): on a GPU, a chain whose kernel passed may go on for
speed. Every kernel that passes is timed (bench's own timer at the spec's [bench] case, or its
largest verify case where it has none); a speed round asks for a faster kernel with that timing
as its feedback, and the chain keeps the fastest
kernel that passed, with its time against the first one's. A speed round whose kernel fails
replaces nothing: the chain keeps what it had.

Only a GPU's time says anything of a kernel's speed: the CPU emulation's does not, so on the CPU
backend speed rounds are refused with the reason (speed_refusal).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.spec.model import Case, Spec, SpecError, load_spec

# Enough for a tight median on a kernel of microseconds, little enough per round.
BUDGET_MS = 400.0


@dataclass(frozen=True)
class Timing:
    """A passing kernel's time (ms a launch, None when it could not be timed) and the words
    that say so."""

    ms: float | None
    text: str


# (the attempt's spec file, whether the caller vouched for it) -> its timing
Timer = Callable[[Path, bool | None], Timing]


class BenchTimer:
    """Benches kernels that just passed (verification is not repeated) on one warm worker,
    kept for the whole run: close() ends it."""

    def __init__(self, backend: str = "auto", budget_ms: float = BUDGET_MS) -> None:
        """Nothing starts until the first kernel is timed."""
        self.backend, self.budget_ms = backend, budget_ms
        self._engine: Any = None

    def __call__(self, path: Path, trusted: bool | None) -> Timing:
        """The kernel's median time at its [bench] case (or largest verify case)."""
        # Imported here: the bench machinery is only needed once a kernel passes.
        from app.engine.bench.against_pytorch import kernel_samples
        from app.engine.bench.runner import BenchOptions, bench_file
        from app.engine.verify.runs import Engine

        try:
            case, where = timed_case(load_spec(path))
        except SpecError as error:
            return Timing(None, f"it could not be timed: {error}")
        options = BenchOptions(backend=self.backend, budget_ms=self.budget_ms,
                               verify_first=False, trusted=trusted, peaks=False, case=case)
        self._engine = self._engine or Engine()
        report = bench_file(path, options, engine=self._engine)
        samples = kernel_samples(report)
        if not samples:
            return Timing(None, f"it could not be timed: {report.message}")
        median = statistics.median(samples)
        return Timing(median, f"it took {micros(median)} a launch at {where} (the median of "
                              f"{len(samples)} samples)")

    def close(self) -> None:
        """End the worker, if one started."""
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def __enter__(self) -> BenchTimer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def timed_case(spec: Spec) -> tuple[Case | None, str]:
    """The case a kernel is timed at, and its words: the spec's [bench] case, or where it has
    none (the suite's tasks) its largest verify case."""
    if spec.bench_case:
        return None, "its [bench] case"
    largest = max(spec.cases, key=lambda case: sum(case.values()))
    listed = ", ".join(f"{k}={v}" for k, v in largest.items())
    return dict(largest), f"its largest verify case {{{listed}}}"


def speed_refusal(backend: str) -> str:
    """Why speed rounds cannot run with this backend ('' when they can)."""
    from app.engine.worker import backends

    why = "speed rounds time each kernel that passes on an NVIDIA GPU"
    if backend == "cpu":
        return (f"{why}, and the CPU backend was chosen: its emulation's times say nothing "
                "of a GPU's")
    if backend not in ("auto", "pycuda"):
        return f"{why}, and the backend {backend!r} is not one"
    chosen, reason = backends.choose("pycuda")
    return "" if chosen else f"{why}, and none can be used here ({reason})"


def micros(ms: float) -> str:
    """A time in words."""
    return f"{ms * 1000:.1f} us"


def feedback(latest: Timing | None, best_ms: float, best_round: int, first_ms: float) -> str:
    """A speed round's feedback: how the kernel shown did, the fastest so far, and the ask."""
    said = f"The kernel below passed verification; {latest.text}." if latest else \
        "The kernel below passed verification."
    fastest = (f" The fastest kernel that passed so far took {micros(best_ms)} (round "
               f"{best_round}; the first took {micros(first_ms)}).")
    return (said + fastest + " Write a faster kernel for the same task: the same name, "
            "arguments and results, so that it passes verification again.")


def kept_words(time_ms: float | None, speedup: float | None) -> str:
    """'the fastest that passed: 12.0 us, 1.80x the first' (or '' for a kernel never timed):
    what propose and the window say of the kernel a chain kept."""
    if time_ms is None:
        return ""
    faster = f", {speedup:.2f}x the first" if speedup else ""
    return f"the fastest that passed: {micros(time_ms)}{faster}"
