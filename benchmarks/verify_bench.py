"""How long verifying vector_add takes with a warm worker and a cached cubin.

Goal (issue 13): 3 cases x 3 seeds, up to 1M elements, under 300 ms warm on an H200, under
2 s on the CPU backend of a 2-core machine.

    python benchmarks/verify_bench.py [--backend auto|pycuda|cpu] [--repeat 7] [--profile]

Three figures: cold (worker start, compile, reference start), warm (the same verification
again: the Engine's reference is loaded and remembers its answers, app.engine.verify.warm),
and warm with nothing remembered (the first verification of these runs in a warm Engine: the
inputs are drawn and the reference computes again). --profile prints where the warm time of
the parent process goes (cProfile, cumulative; the worker and reference are other processes).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.verify.results import Verdict  # noqa: E402
from app.engine.verify.runs import Engine, VerifyOptions  # noqa: E402
from app.engine.verify.verifier import verify  # noqa: E402
from app.spec.model import Spec, load_spec  # noqa: E402

CASES = [{"n": 1}, {"n": 1000}, {"n": 1_000_003}]


def timed(repeat: int, once: Callable[[], Verdict], before: Callable[[], None]) -> list[float]:
    """Seconds of `repeat` verifications, `before()` running untimed ahead of each."""
    times = []
    for _ in range(repeat):
        before()
        started = time.perf_counter()
        verdict = once()
        times.append(time.perf_counter() - started)
        if not verdict.passed:
            raise SystemExit(verdict.describe())
    return times


def line(label: str, times: list[float]) -> str:
    """Median, min and max in milliseconds."""
    return (f"{label}: median {statistics.median(times) * 1000:.0f} ms, min "
            f"{min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {len(times)}")


def measure(spec: Spec, options: VerifyOptions, repeat: int, profile: bool) -> int:
    """Print the cold, warm and warm-unremembered figures (and a profile when asked)."""
    with Engine() as engine:
        started = time.perf_counter()
        verdict = verify(spec, options, engine)
        cold = time.perf_counter() - started
        if not verdict.passed:
            print(verdict.describe())
            return 1
        once = lambda: verify(spec, options, engine)  # noqa: E731
        profiler = cProfile.Profile() if profile else None
        if profiler:
            profiler.enable()
        warm = timed(repeat, once, lambda: None)
        if profiler:
            profiler.disable()
        fresh = timed(repeat, once, engine.references.forget)
    print(f"backend {verdict.backend} ({verdict.device.get('name', '?')}), "
          f"{len(verdict.runs)} runs (3 cases x 3 seeds, up to 1,000,003 elements)")
    print(f"cold (worker start + compile + reference start): {cold * 1000:.0f} ms")
    print(line("warm (same verification again)", warm))
    print(line("warm, nothing remembered (inputs drawn, reference called)", fresh))
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return 0


def main() -> int:
    """Parse the flags and measure."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    spec = load_spec(ROOT / "resources/kernels/vector_add/vector_add.toml").with_cases(CASES)
    return measure(spec, VerifyOptions(backend=args.backend, seeds=3), args.repeat, args.profile)


if __name__ == "__main__":
    sys.exit(main())
