"""The parity corpus (tests/cpu_backend/parity/) on the CPU emulation and on a GPU.

    python3 benchmarks/parity.py [--backend cpu|pycuda|both] [--out DIR] [--only NAME ...]

Every kernel is verified with the spec's own seeds and no fresh random seed (random_seeds=0),
so both backends see the same inputs. Writes parity.json and parity.md (kernel, what it
tests, the expected GPU outcome, the CPU verdict, the GPU verdict, agree?) into --out and
prints the table. Exit status 1 when the CPU says "passed" where the GPU (measured, or the
expectation when no GPU ran) does not, when a GPU verdict differs from the expectation, or
when a CPU verdict is neither the expected one nor an "unverified" refusal.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.verify.runs import Engine, VerifyOptions  # noqa: E402
from app.engine.verify.verifier import verify_file  # noqa: E402
from app.engine.worker import backends  # noqa: E402

CORPUS = ROOT / "tests" / "cpu_backend" / "parity"
NOT_RUN = "not yet run on a GPU"


def load_corpus(only: list[str] | None = None) -> list[dict[str, Any]]:
    """The index's kernels (those named in `only`, when given)."""
    kernels = tomllib.loads((CORPUS / "corpus.toml").read_text())["kernel"]
    return [k for k in kernels if not only or k["name"] in only]


def run_one(engine: Engine, kernel: dict[str, Any], backend: str) -> dict[str, Any]:
    """One kernel's verdict on one backend: status and the message's first line."""
    options = VerifyOptions(backend=backend, random_seeds=0, trusted=True, timeout=10.0)
    verdict = verify_file(CORPUS / kernel["spec"], options, engine)
    return {"status": str(verdict.status), "message": verdict.message.splitlines()[0][:300]
            if verdict.message else "", "seconds": round(verdict.seconds, 3)}


def judge(kernel: dict[str, Any], cpu: dict[str, Any] | None,
          gpu: dict[str, Any] | None) -> list[str]:
    """What is wrong with this kernel's verdicts (nothing: they agree)."""
    problems = []
    expected = kernel["gpu"]
    truth = gpu["status"] if gpu else expected
    if gpu and gpu["status"] != expected:
        problems.append(f"GPU says {gpu['status']}, expected {expected}")
    if cpu:
        if cpu["status"] == "passed" and truth != "passed":
            problems.append(f"CPU passes what the GPU fails ({truth})")
        elif cpu["status"] not in (truth, "unverified"):
            problems.append(f"CPU says {cpu['status']}, GPU {truth}")
        refuses = kernel.get("cpu_refuses")
        if cpu["status"] == "unverified" and refuses and refuses not in cpu["message"]:
            problems.append(f"CPU refusal does not name {refuses!r}")
    return problems


def agreement(kernel: dict[str, Any], cpu: dict[str, Any] | None,
              gpu: dict[str, Any] | None, problems: list[str]) -> str:
    """The table's 'agree?' cell."""
    if problems:
        return "NO: " + "; ".join(problems)
    if cpu and cpu["status"] == "unverified" and (gpu or {"status": kernel["gpu"]})["status"] \
            != "unverified":
        return "refused on the CPU"
    return "yes"


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of every kernel."""
    lines = ["| kernel | what it tests | expected GPU | CPU | GPU | agree? |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        cpu = row["cpu"]["status"] if row["cpu"] else "not run"
        gpu = row["gpu"]["status"] if row["gpu"] else NOT_RUN
        cells = [row["name"], row["tests"], row["expected"], cpu, gpu, row["agree"]]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def chosen_backends(which: str | None) -> list[str]:
    """The backends to run: both where a GPU is, else the CPU."""
    if which == "both":
        return ["cpu", "pycuda"]
    if which:
        return [which]
    gpu, _ = backends.choose("pycuda")
    return ["cpu", "pycuda"] if gpu else ["cpu"]


def main(argv: list[str] | None = None) -> int:
    """Run the corpus, write the reports, return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["cpu", "pycuda", "both"])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--only", nargs="*", help="kernel names to run (default: all)")
    args = parser.parse_args(argv)
    kernels = load_corpus(args.only)
    which = chosen_backends(args.backend)
    results: dict[str, dict[str, dict[str, Any]]] = {b: {} for b in which}
    started = time.perf_counter()
    with Engine() as engine:
        for backend in which:  # one backend at a time: its worker stays warm
            for number, kernel in enumerate(kernels, 1):
                result = run_one(engine, kernel, backend)
                results[backend][kernel["name"]] = result
                print(f"[{backend} {number}/{len(kernels)}] {kernel['name']}: "
                      f"{result['status']} ({result['seconds']:.1f} s)", flush=True)
    rows, failures = [], 0
    for kernel in kernels:
        cpu = results.get("cpu", {}).get(kernel["name"])
        gpu = results.get("pycuda", {}).get(kernel["name"])
        problems = judge(kernel, cpu, gpu)
        failures += bool(problems)
        rows.append({"name": kernel["name"], "tests": kernel["tests"],
                     "expected": kernel["gpu"], "cpu": cpu, "gpu": gpu,
                     "agree": agreement(kernel, cpu, gpu, problems), "problems": problems})
    args.out.mkdir(parents=True, exist_ok=True)
    seconds = time.perf_counter() - started
    (args.out / "parity.json").write_text(json.dumps(
        {"backends": which, "seconds": round(seconds, 1), "failures": failures,
         "kernels": rows}, indent=1))
    text = table(rows)
    (args.out / "parity.md").write_text(text + "\n")
    print(text)
    print(f"{len(kernels)} kernels on {', '.join(which)} in {seconds:.0f} s: "
          f"{failures} disagreement(s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
