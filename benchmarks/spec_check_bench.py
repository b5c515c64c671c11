"""spec-check time per kernel template (resources/kernels/*/*.toml): the whole check as the
command runs it (load the spec, resolve the cases, run the reference, forge and judge the
impostors, compute the warnings), in one process, the reference module loaded afresh each time.
Goal (issue 12): well under 1 s per template on the 2-core machine.

    python benchmarks/spec_check_bench.py [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.verify.speccheck import check_spec_file  # noqa: E402

GOAL_S = 1.0


def measure(path: Path, repeat: int) -> dict[str, float | int | str]:
    """Median, fastest and slowest seconds of `repeat` checks of one spec."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = check_spec_file(path)
        times.append(time.perf_counter() - started)
    assert result is not None
    return {"template": path.stem, "status": str(result.status), "runs": result.runs,
            "median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


def main() -> int:
    """Time every template; exit 1 if one is not strong or misses the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="checks per template (median)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    paths = sorted((ROOT / "resources" / "kernels").glob("*/*.toml"))
    rows = [measure(path, max(1, args.repeat)) for path in paths]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'template':<12}{'status':>8}{'runs':>6}{'median s':>10}{'min s':>8}{'max s':>8}")
        for row in rows:
            print(f"{row['template']:<12}{row['status']:>8}{row['runs']:>6}"
                  f"{row['median_s']:>10.3f}{row['min_s']:>8.3f}{row['max_s']:>8.3f}")
    bad = [r for r in rows if r["status"] != "strong" or float(r["max_s"]) >= GOAL_S]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
