"""Compile times for the kernel templates (resources/kernels/*/*.cu): cold, warm and cache hit.

- cold: a fresh compile child (start Python, load NVRTC) plus the compile, cache off;
- warm: the child already running, cache off (median of --repeat);
- hit: a verified cache entry (median of --repeat x 4).
Goals (issue 3): warm NVRTC compile of a ~20-line kernel <= 100 ms; cache hit <= 5 ms.
The cache goes to a private temporary folder, never the user's.

    python benchmarks/compile_bench.py [--repeat 7] [--arch sm_90] [--backend nvrtc|nvcc] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.compile import CompileResult, compile_file  # noqa: E402
from app.compile.service import SERVICE  # noqa: E402

WARM_GOAL_MS, HIT_GOAL_MS = 100.0, 5.0


def timed(path: Path, **kwargs: object) -> float:
    """Seconds for one compile_file call (which must succeed)."""
    started = time.perf_counter()
    result: CompileResult = compile_file(path, **kwargs)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise SystemExit(f"{path.name} did not compile: {result.message}")
    return elapsed


def measure(path: Path, repeat: int, arch: str, backend: str) -> dict[str, float | int | str]:
    """Cold, warm and hit times (ms) for one kernel."""
    common = {"arch": arch, "backend": backend}
    SERVICE.close()  # the next compile starts a new child: that is what "cold" means
    cold = timed(path, use_cache=False, **common)
    warm = [timed(path, use_cache=False, **common) for _ in range(repeat)]
    timed(path, use_cache=True, **common)  # store the entry
    hits = [timed(path, use_cache=True, **common) for _ in range(repeat * 4)]
    lines = len(path.read_text().splitlines())
    return {"kernel": path.stem, "lines": lines, "cold_ms": cold * 1e3,
            "warm_ms": statistics.median(warm) * 1e3, "warm_min_ms": min(warm) * 1e3,
            "warm_max_ms": max(warm) * 1e3, "hit_ms": statistics.median(hits) * 1e3}


def print_table(rows: list[dict[str, float | int | str]]) -> None:
    """One line per kernel."""
    print(f"{'kernel':<12}{'lines':>6}{'cold ms':>10}{'warm ms':>10}{'(min-max)':>16}"
          f"{'hit ms':>9}")
    for row in rows:
        spread = f"{row['warm_min_ms']:.0f}-{row['warm_max_ms']:.0f}"
        print(f"{row['kernel']:<12}{row['lines']:>6}{row['cold_ms']:>10.0f}"
              f"{row['warm_ms']:>10.1f}{spread:>16}{row['hit_ms']:>9.2f}")


def verdict(rows: list[dict[str, float | int | str]]) -> tuple[bool, str]:
    """Whether the goals hold: warm for the ~20-line kernels, hits for every kernel."""
    small = [r for r in rows if int(r["lines"]) <= 25]
    worst_warm = max(float(r["warm_ms"]) for r in small) if small else float("nan")
    worst_hit = max(float(r["hit_ms"]) for r in rows)
    ok = worst_warm <= WARM_GOAL_MS and worst_hit <= HIT_GOAL_MS
    names = ", ".join(str(r["kernel"]) for r in small)
    return ok, (f"warm compile of ~20-line kernels ({names}): {worst_warm:.1f} ms "
                f"(goal <= {WARM_GOAL_MS:.0f}); cache hit, worst kernel: {worst_hit:.2f} ms "
                f"(goal <= {HIT_GOAL_MS:.0f}): {'goals met' if ok else 'GOAL MISSED'}")


def main() -> int:
    """Measure every template; exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--backend", default="nvrtc", choices=["nvrtc", "nvcc"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kernels = sorted((ROOT / "resources" / "kernels").glob("*/*.cu"))
    if not kernels:
        raise SystemExit("no kernel templates in resources/kernels")
    with tempfile.TemporaryDirectory(prefix="compile-bench-") as cache:
        os.environ["KERNEL_STUDIO_CACHE"] = cache
        rows = [measure(path, args.repeat, args.arch, args.backend) for path in kernels]
    SERVICE.close()
    ok, summary = verdict(rows)
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary, "ok": ok}, indent=2))
    else:
        print_table(rows)
        print(summary)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
