"""Every task of resources/tasks: its spec through the real spec-check (it must be strong, with
no warning) and its reference kernel (tests/assist/task_kernels/) through the real verifier on
the CPU backend (it must pass). tests/assist/test_tasks.py checks a sample; this checks all.

    python benchmarks/verify_tasks.py [--backend cpu|pycuda|auto] [--json OUT.json] [NAME ...]

Exit 0 when every task is fine, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.assist.tasks.suite import load_suite  # noqa: E402
from app.engine.verify.runs import Engine, VerifyOptions  # noqa: E402
from app.engine.verify.speccheck import Strength, check_spec_file  # noqa: E402
from app.engine.verify.verifier import verify_file  # noqa: E402
from app.isolation import offline  # noqa: E402

FIXTURES = ROOT / "tests" / "assist" / "task_kernels"


def check(name: str, spec_path: Path, backend: str, engine: Engine,
          scratch: Path) -> dict[str, Any]:
    """spec-check and verify one task; its row."""
    started = time.perf_counter()
    checked = check_spec_file(spec_path)
    folder = scratch / name
    shutil.copytree(spec_path.parent, folder)
    shutil.copyfile(FIXTURES / f"{name}.cu", folder / f"{name}.cu")
    verdict = verify_file(folder / spec_path.name, VerifyOptions(backend=backend), engine)
    ok = (checked.status == Strength.STRONG and not checked.warnings and verdict.passed)
    return {"task": name, "ok": ok, "spec_check": str(checked.status),
            "warnings": [w.message for w in checked.warnings], "verdict": str(verdict.status),
            "message": verdict.message if not verdict.passed else checked.message,
            "seconds": round(time.perf_counter() - started, 2)}


def main() -> int:
    """Check the tasks named (default all); print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--backend", default="cpu", choices=["cpu", "pycuda", "auto"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    offline.enforce()
    suite = load_suite()
    tasks = suite.named(args.names) if args.names else list(suite.tasks)
    rows = []
    with Engine() as engine, tempfile.TemporaryDirectory() as scratch:
        for task in tasks:
            row = check(task.name, task.spec_path, args.backend, engine, Path(scratch))
            rows.append(row)
            print(f"{'ok ' if row['ok'] else 'BAD'} {task.name:<26} {row['spec_check']:<8} "
                  f"{row['verdict']:<10} {row['seconds']:>6.2f} s  {row['message'][:70]}",
                  flush=True)
    bad = [r["task"] for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)} of {len(rows)} tasks fine" + (f"; not: {bad}" if bad else ""))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
