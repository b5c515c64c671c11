"""Verification time on the CPU backend (issue 8): vector_add, 3 cases x 3 seeds up to about
1M elements, through the real command line, as a user without a GPU would run it.

- cold: an empty cache, so the emulation runtime, the kernel library and the NVRTC diagnostics
  compile are all built; a new process (Python start, worker start) as from a shell;
- warm: the same command again: every build comes from the cache (median of --repeat);
- warm worker: verify again inside one process whose worker is already running (the GUI's
  case; median of --repeat);
- launch: the kernel's own time for the 1M-element case, from the verdict's runs;
- warm without sandbox: the warm command with KERNEL_STUDIO_SANDBOX=none and the spec trusted
  (in a private data folder), so the sandbox's own cost is the difference (issue 13).
Goal: warm <= 2 s on 2 cores, including the (cached) host compile, with the sandbox in force
where one can be had (the worker, its compiler, the compile child and the reference process all
start inside bubblewrap). Caches go to a private temporary folder, never the user's.

    python benchmarks/cpu_backend_bench.py [--repeat 3] [--threads N] [--full] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.verify.runs import Engine, VerifyOptions  # noqa: E402
from app.engine.verify.verifier import verify_file  # noqa: E402
from app.isolation import sandbox  # noqa: E402

SPEC = ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml"
CASES = ["n=1", "n=1025", "n=1000003"]
GOAL_SECONDS = 2.0


def cli(full: bool, env: dict[str, str] | None = None) -> tuple[float, dict[str, object]]:
    """Seconds for one `kernel-studio verify --backend cpu --json`, and its verdict."""
    cases = [] if full else [arg for case in CASES for arg in ("--case", case)]
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "app", "verify", str(SPEC), "--backend", "cpu",
                             "--json", *cases], capture_output=True, text=True, cwd=ROOT,
                            timeout=600, env={**os.environ, **(env or {})})
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"verify failed (exit {result.returncode}):\n{result.stdout}\n"
                         f"{result.stderr}")
    verdict: dict[str, object] = json.loads(result.stdout)
    return elapsed, verdict


def warm_worker(full: bool, repeat: int) -> list[float]:
    """Seconds per verification on one engine whose worker is already running."""
    cases = None if full else [{"n": int(c.split("=")[1])} for c in CASES]
    options = VerifyOptions(backend="cpu", cases=cases)  # type: ignore[arg-type]
    times = []
    with Engine() as engine:
        verify_file(SPEC, options, engine)  # starts the worker and loads the kernel
        for _ in range(repeat):
            started = time.perf_counter()
            verdict = verify_file(SPEC, options, engine)
            times.append(time.perf_counter() - started)
            if not verdict.passed:
                raise SystemExit(verdict.describe())
    return times


def launch_seconds(verdict: dict[str, object]) -> float:
    """The kernel time of the largest case, as the worker measured it."""
    runs = verdict.get("runs", [])
    assert isinstance(runs, list)
    largest = max(runs, key=lambda r: r["case"]["n"])
    return float(largest["seconds"])


def unsandboxed(full: bool, repeat: int, data: str) -> list[float]:
    """Warm seconds with the sandbox turned off and the spec trusted instead."""
    env = {"KERNEL_STUDIO_SANDBOX": "none", "KERNEL_STUDIO_DATA": data}
    subprocess.run([sys.executable, "-m", "app", "trust", str(SPEC)], capture_output=True,
                   cwd=ROOT, env={**os.environ, **env}, check=True, timeout=120)
    return [cli(full, env)[0] for _ in range(repeat)]


def measure(repeat: int, full: bool, data: str) -> dict[str, object]:
    """Every figure, in seconds."""
    cold, verdict = cli(full)
    warm_runs = [cli(full) for _ in range(repeat)]
    warm = [seconds for seconds, _ in warm_runs]
    worker = warm_worker(full, repeat)
    bare = unsandboxed(full, repeat, data)
    runs = verdict.get("runs", [])
    return {"runs": len(runs) if isinstance(runs, list) else 0,
            "threads": dict(verdict.get("device", {})).get("threads"),  # type: ignore[call-overload]
            "cold_s": cold, "warm_s": statistics.median(warm), "warm_max_s": max(warm),
            "warm_worker_s": statistics.median(worker),
            "launch_1m_s": launch_seconds(warm_runs[-1][1]), "goal_s": GOAL_SECONDS,
            "cores": os.cpu_count(), "sandbox": sandbox.probe().describe(),
            "warm_unsandboxed_s": statistics.median(bare)}


def main() -> int:
    """Measure in a private cache and print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, help="CPU threads for launches (default: cores)")
    parser.add_argument("--full", action="store_true", help="the spec's 5 cases instead of 3")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.threads:
        os.environ["KERNEL_STUDIO_CPU_THREADS"] = str(args.threads)
    with tempfile.TemporaryDirectory(prefix="ks-cpu-bench-") as cache:
        os.environ["KERNEL_STUDIO_CACHE"] = cache
        figures = measure(args.repeat, args.full, os.path.join(cache, "data"))
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"vector_add on the CPU backend: {figures['runs']} runs, {figures['threads']} CPU "
          f"threads, {figures['cores']} cores")
    print(f"  cold (empty cache, new process)  {figures['cold_s']:6.2f} s")
    print(f"  warm (cached builds, new process) {figures['warm_s']:5.2f} s  "
          f"(max {figures['warm_max_s']:.2f} s; goal <= {GOAL_SECONDS:g} s)")
    print(f"  warm worker (same process)       {figures['warm_worker_s']:6.2f} s")
    print(f"  warm without sandbox (trusted)   {figures['warm_unsandboxed_s']:6.2f} s")
    print(f"  sandbox: {figures['sandbox']}")
    print(f"  launch of the 1M-element case    {figures['launch_1m_s'] * 1e3:6.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
