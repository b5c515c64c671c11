"""How far Kernel Studio's timing can be trusted, on this machine's GPU (issue 5). Prints:

(1) saxpy at 32M elements: the engine's cold median against Nsight Compute's
    gpu__time_duration.sum for the same cubin and launch (ncu --clock-control none, caches
    flushed before each launch as in cold mode); goal: within 5%;
(2) a float4 copy kernel timed by the engine against a device-to-device copy in the same run
    (torch's copy_, and cuMemcpyDtoD through pycuda), both cold; goal: at least 85%;
(3) the run-to-run spread of saxpy timed five times.

    python benchmarks/timing_accuracy.py [--elements 33554432] [--repeat 5] [--json]

Exit 0 when every figure that could be measured meets its goal, 1 when one misses, 3 when
nothing can be timed here (no GPU or no pycuda). About a minute on an H200.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.base import system  # noqa: E402
from app.base.paths import RESOURCES  # noqa: E402
from app.engine.bench.peaks import COPY_ELEMENTS, COPY_SPEC  # noqa: E402
from app.engine.bench.reports import BenchReport, format_ms  # noqa: E402
from app.engine.bench.runner import BenchOptions, bench_file  # noqa: E402
from app.engine.verify.runs import Engine  # noqa: E402
from app.engine.worker import backends  # noqa: E402
from app.spec.cases import resolve  # noqa: E402
from app.spec.model import load_spec  # noqa: E402

SAXPY = RESOURCES / "kernels" / "saxpy" / "saxpy.toml"
HELPERS = Path(__file__).resolve().parent / "timing_helpers.py"
NCU_GOAL = 0.05
COPY_GOAL = 0.85
NCU_LAUNCHES = 5
UNITS_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0,
            "ms": 1.0, "second": 1000.0, "s": 1000.0}


def find_ncu() -> str | None:
    """Nsight Compute's command line: PATH, the CUDA toolkit, or /opt/nvidia/nsight-compute."""
    found = system.find_tool("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")) + sorted(
        glob.glob("/usr/local/cuda*/bin/ncu"))
    return candidates[-1] if candidates else None


def engine_median(engine: Engine, spec: Path, case: dict[str, int],
                  budget_ms: float) -> tuple[BenchReport, float]:
    """Time a spec at a case, cold, with the engine; the report and its median (ms)."""
    options = BenchOptions(backend="pycuda", case=case, verify_first=False, peaks=False,
                           budget_ms=budget_ms)
    report = bench_file(spec, options, engine=engine)
    if report.status != "timed":
        raise RuntimeError(f"{spec.name} was not timed: {report.status}: {report.message}")
    median = report.points[0].variants[0].median_ms
    assert median is not None
    return report, median


def parse_ncu_csv(text: str, metric: str = "gpu__time_duration.sum") -> list[float]:
    """Every value of `metric` in ncu's --csv output, in milliseconds."""
    rows = [line for line in text.splitlines() if line.startswith('"')]
    values = []
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        if row.get("Metric Name") != metric:
            continue
        unit = (row.get("Metric Unit") or "").strip()
        number = float((row.get("Metric Value") or "nan").replace(",", ""))
        values.append(number * UNITS_MS.get(unit, float("nan")))
    return values


def ncu_median(report: BenchReport, n: int, folder: Path) -> tuple[float | None, str]:
    """gpu__time_duration.sum of saxpy's cubin launched as the engine launches it."""
    ncu = find_ncu()
    if ncu is None:
        return None, ("ncu (Nsight Compute) was not found on PATH, in /usr/local/cuda*/bin or "
                      "/opt/nvidia/nsight-compute/*: install it or put it on PATH")
    from app.compile import compile_file

    spec = load_spec(SAXPY)
    compiled = compile_file(spec.source_path, arch=report.device.get("arch"))
    if not compiled.ok or compiled.cubin is None:
        return None, f"saxpy did not compile: {compiled.message}"
    cubin = folder / "saxpy.cubin"
    cubin.write_bytes(compiled.cubin)
    resolved = resolve(spec, {"n": n})
    command = [ncu, "--clock-control", "none", "--cache-control", "all", "--metrics",
               "gpu__time_duration.sum", "--csv", "--kernel-name", spec.entry,
               "--launch-count", str(NCU_LAUNCHES), sys.executable, str(HELPERS), "launch",
               "--cubin", str(cubin), "--symbol", spec.entry, "--n", str(n),
               "--grid", str(resolved.grid[0]), "--block", str(resolved.block[0]),
               "--count", str(NCU_LAUNCHES)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return None, "ncu did not finish within 120 s"
    values = parse_ncu_csv(done.stdout)
    if done.returncode != 0 or not values:
        tail = (done.stdout + done.stderr).strip()[-800:]
        return None, (f"ncu failed (exit {done.returncode}); if it mentions ERR_NVGPUCTRPERM, "
                      f"profiling needs root or NVreg_RestrictProfilingToAdminUsers=0:\n{tail}")
    return statistics.median(values), f"median of {len(values)} launches"


def reference_copy(kind: str, n: int) -> tuple[float | None, str]:
    """GB/s of a device-to-device copy by torch or cuMemcpyDtoD, in a child process."""
    try:
        done = subprocess.run([sys.executable, str(HELPERS), kind, "--n", str(n)],
                              capture_output=True, text=True, timeout=180, check=False)
    except subprocess.TimeoutExpired:
        return None, f"{kind} did not finish within 180 s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"{kind} could not run here: {last}"
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return float(data["gbps"]), str(data["what"])


def accuracy_against_ncu(engine: Engine, n: int, budget: float, folder: Path) -> dict[str, Any]:
    """Figure (1)."""
    report, ours = engine_median(engine, SAXPY, {"n": n}, budget)
    theirs, note = ncu_median(report, n, folder)
    result: dict[str, Any] = {"engine_ms": ours, "ncu_ms": theirs, "note": note,
                              "device": report.device, "environment": report.environment}
    if theirs:
        result["difference"] = ours / theirs - 1.0
        result["pass"] = abs(result["difference"]) <= NCU_GOAL
    return result


def copy_ratio(engine: Engine, budget: float) -> dict[str, Any]:
    """Figure (2)."""
    report, median = engine_median(engine, COPY_SPEC, {"n": COPY_ELEMENTS}, budget)
    ours = report.points[0].variants[0].gbps
    result: dict[str, Any] = {"engine_gbps": ours, "engine_ms": median, "references": {}}
    for kind in ("torch-copy", "memcpy-copy"):
        gbps, note = reference_copy(kind, COPY_ELEMENTS)
        result["references"][kind] = {"gbps": gbps, "note": note}
    best = [r["gbps"] for r in result["references"].values() if r["gbps"]]
    if ours and best:
        torch_gbps = result["references"]["torch-copy"]["gbps"]
        result["ratio"] = ours / (torch_gbps or max(best))
        result["pass"] = result["ratio"] >= COPY_GOAL
    return result


def spread(engine: Engine, n: int, budget: float, repeat: int) -> dict[str, Any]:
    """Figure (3)."""
    medians = [engine_median(engine, SAXPY, {"n": n}, budget)[1] for _ in range(repeat)]
    mean = statistics.mean(medians)
    return {"medians_ms": medians, "spread": (max(medians) - min(medians)) / mean,
            "cv": statistics.stdev(medians) / mean if len(medians) > 1 else 0.0}


def describe(results: dict[str, Any], n: int) -> list[str]:
    """The figures in words."""
    first, second, third = results["ncu"], results["copy"], results["spread"]
    env = first["environment"]
    lines = [f"timing accuracy on {env.get('gpu_name')} ({env.get('gpu_uuid')}), driver "
             f"{env.get('driver_version')}, CUDA {env.get('cuda_driver')}, SM clock "
             f"{env.get('sm_clock_start_mhz')} -> {env.get('sm_clock_end_mhz')} MHz"]
    line = f"(1) saxpy n={n}, cold: engine median {format_ms(first['engine_ms'])}; "
    if first["ncu_ms"]:
        verdict = "PASS" if first["pass"] else "FAIL"
        line += (f"ncu gpu__time_duration.sum {format_ms(first['ncu_ms'])} ({first['note']}); "
                 f"difference {first['difference']:+.2%} -> {verdict} (goal within 5%)")
    else:
        line += f"ncu: not measured: {first['note']}"
    lines.append(line)
    line = f"(2) float4 copy, 2 x {COPY_ELEMENTS * 4 // 2**20} MiB, cold: engine " \
           f"{second['engine_gbps']:.0f} GB/s"
    for kind, ref in second["references"].items():
        line += f"; {kind}: " + (f"{ref['gbps']:.0f} GB/s ({ref['note']})" if ref["gbps"]
                                 else f"not measured ({ref['note']})")
    if "ratio" in second:
        line += f"; ratio {second['ratio']:.1%} -> {'PASS' if second['pass'] else 'FAIL'} " \
                "(goal >= 85%)"
    lines.append(line)
    medians = ", ".join(format_ms(m) for m in third["medians_ms"])
    lines.append(f"(3) run to run, saxpy x{len(third['medians_ms'])}: medians {medians}; "
                 f"spread (max-min)/mean {third['spread']:.2%}, CV {third['cv']:.2%}")
    return lines


def main() -> int:
    """Measure the three figures and print them."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elements", type=int, default=32 * 2**20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget-ms", type=float, default=1000.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reason = backends.usable("pycuda")
    if reason:
        print(f"timing_accuracy: cannot time kernels here: {reason}", file=sys.stderr)
        return 3
    started = time.perf_counter()
    with Engine() as engine, tempfile.TemporaryDirectory(prefix="ks-accuracy-") as folder:
        results = {"ncu": accuracy_against_ncu(engine, args.elements, args.budget_ms,
                                               Path(folder)),
                   "copy": copy_ratio(engine, args.budget_ms),
                   "spread": spread(engine, args.elements, args.budget_ms, args.repeat)}
    results["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        print("\n".join(describe(results, args.elements)))
        print(f"took {results['seconds']:.0f} s")
    verdicts = [results[k].get("pass") for k in ("ncu", "copy")]
    return 1 if False in verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
