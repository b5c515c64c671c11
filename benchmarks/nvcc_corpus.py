"""Does the default path (NVRTC) build what nvcc builds? Compiles every kernel of the
nvcc-compatibility corpus (tests/fixtures/nvcc_corpus/, options and named exceptions in its
corpus.toml) with both compilers, cache off, and prints one line per kernel.

Goal (issue 12): every corpus kernel builds with both, except the named exceptions.

    python benchmarks/nvcc_corpus.py [--arch sm_90] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.compile import CompileResult, compile_file  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "nvcc_corpus"


def corpus() -> tuple[list[Path], dict[str, list[str]], dict[str, str]]:
    """The kernels, the options per kernel and the named exceptions (kernel -> reason)."""
    table = tomllib.loads((CORPUS / "corpus.toml").read_text(encoding="utf-8"))
    return sorted(CORPUS.glob("*.cu")), table.get("options", {}), table.get("nvrtc_exceptions", {})


def build(path: Path, backend: str, options: list[str], arch: str) -> CompileResult:
    """One compile of one corpus kernel, never from the cache."""
    return compile_file(path, arch=arch, options=options, backend=backend, use_cache=False)


def row(path: Path, options: list[str], exceptions: dict[str, str], arch: str) -> dict[str, Any]:
    """The outcome of both compilers for one kernel."""
    nvcc, nvrtc = (build(path, b, options, arch) for b in ("nvcc", "nvrtc"))
    return {"kernel": path.stem, "nvcc_ok": nvcc.ok, "nvrtc_ok": nvrtc.ok,
            "nvcc_s": round(nvcc.seconds, 3), "nvrtc_s": round(nvrtc.seconds, 3),
            "exception": exceptions.get(path.stem, ""),
            "nvrtc_error": "" if nvrtc.ok else nvrtc.message,
            "nvcc_error": "" if nvcc.ok else nvcc.message}


def as_expected(item: dict[str, Any]) -> bool:
    """nvcc builds it, and NVRTC does too unless the kernel is a named exception."""
    return bool(item["nvcc_ok"]) and bool(item["nvrtc_ok"]) != bool(item["exception"])


def print_table(rows: list[dict[str, Any]]) -> None:
    """One line per kernel, then the figure and the exceptions."""
    print(f"{'kernel':<34}{'nvcc':>6}{'nvrtc':>7}{'nvcc s':>8}{'nvrtc s':>9}  note")
    for item in rows:
        note = item["exception"] and f"exception: {item['exception']}"
        if not as_expected(item):
            note = "UNEXPECTED: " + (item["nvrtc_error"] or item["nvcc_error"] or "NVRTC built it")
        print(f"{item['kernel']:<34}{_yes(item['nvcc_ok']):>6}{_yes(item['nvrtc_ok']):>7}"
              f"{item['nvcc_s']:>8.2f}{item['nvrtc_s']:>9.2f}  {note}")
    both = sum(1 for r in rows if r["nvcc_ok"] and r["nvrtc_ok"])
    nvcc = sum(1 for r in rows if r["nvcc_ok"])
    print(f"\n{both} of {nvcc} kernels that nvcc builds also build on the default path (NVRTC); "
          f"{len(rows)} kernels in the corpus, "
          f"{sum(1 for r in rows if r['exception'])} named exceptions")


def _yes(flag: bool) -> str:
    """A table cell for a boolean."""
    return "ok" if flag else "FAIL"


def main() -> int:
    """Build the corpus both ways; exit 1 when any kernel is not as expected."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kernels, options, exceptions = corpus()
    rows = [row(path, options.get(path.stem, []), exceptions, args.arch) for path in kernels]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows)
    return 0 if all(as_expected(r) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
