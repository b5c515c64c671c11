"""How long verifying vector_add takes with a warm worker and a cached cubin.

Goal (issue 4): 3 cases x 3 seeds, up to 1M elements, <= 300 ms on a GPU. On the CPU backend
the goal is <= 2 s including the host compile (issue 8).

    python benchmarks/verify_bench.py [--backend auto|pycuda|cpu] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.verify.runs import Engine, VerifyOptions  # noqa: E402
from app.engine.verify.verifier import verify  # noqa: E402
from app.spec import load_spec  # noqa: E402

CASES = [{"n": 1}, {"n": 1000}, {"n": 1_000_003}]


def main() -> int:
    """Verify once cold (worker start, compile), then `--repeat` times warm; print the times."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    spec = load_spec(ROOT / "resources/kernels/vector_add/vector_add.toml").with_cases(CASES)
    options = VerifyOptions(backend=args.backend, seeds=3)
    with Engine() as engine:
        started = time.perf_counter()
        verdict = verify(spec, options, engine)
        cold = time.perf_counter() - started
        if not verdict.passed:
            print(verdict.describe())
            return 1
        warm = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            verdict = verify(spec, options, engine)
            warm.append(time.perf_counter() - started)
    print(f"backend {verdict.backend} ({verdict.device.get('name', '?')}), "
          f"{len(verdict.runs)} runs (3 cases x 3 seeds, up to 1,000,003 elements)")
    print(f"cold (worker start + compile): {cold * 1000:.0f} ms")
    print(f"warm: median {statistics.median(warm) * 1000:.0f} ms, "
          f"min {min(warm) * 1000:.0f} ms, max {max(warm) * 1000:.0f} ms over {len(warm)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
