"""How much of KernelBench `kernel-studio import kernelbench` maps: every problem of levels 1-3
of a KernelBench checkout imported (into a temporary folder, or --out), the share that maps per
level, and the main reasons for the rest.

    python benchmarks/kernelbench_import.py [KERNELBENCH_FOLDER] [--levels 1 2 3] [--show 8]
        [--out DIR] [--check]

The folder is a checkout of https://github.com/ScalingIntelligence/KernelBench (its
KernelBench/level1 ... folders, or the folder holding them); without one, ./KernelBench,
../KernelBench and $KERNELBENCH are looked for. Problems run only inside the sandbox: on
torch's meta device (no computation) to learn their shapes, and for real at one small case to
learn how their weights are drawn.

--check then runs every imported task's reference as verify runs it (in the sandbox, at each
verify case, on the inputs verify draws for seed 0) and reports per level how many give finite
outputs, the slowest call, and the largest verify case (elements of all its buffers): what an
evaluation on the CPU backend will have to carry.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import import_problems
from app.assist.tasks.suite import load_task
from app.engine.verify.buffers import generate_inputs
from app.engine.verify.reference import ReferenceError, expected_outputs, load_reference
from app.spec.cases import resolve

GET = ("no KernelBench checkout found: git clone https://github.com/ScalingIntelligence/"
       "KernelBench and pass its folder (or set KERNELBENCH)")


def level_folder(root: Path, level: int) -> Path | None:
    """root/level<N> or root/KernelBench/level<N>, if there."""
    for folder in (root / f"level{level}", root / "KernelBench" / f"level{level}"):
        if folder.is_dir():
            return folder
    return None


def find_root(given: str | None) -> Path:
    """The checkout to measure: the one given, or the first one found."""
    places = [given] if given else ["KernelBench", "../KernelBench", os.environ.get("KERNELBENCH")]
    for place in places:
        if place and level_folder(Path(place), 1):
            return Path(place)
    sys.exit(f"{given}: no level1 folder in it; " + GET if given else GET)


def reason(refused: Refused) -> str:
    """A refusal's kind: its message without the names and numbers of one problem."""
    text = str(refused)
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "...", text)
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return text[:110]


@dataclass
class Checked:
    """One task's references run: whether every output was finite, the slowest call, the
    largest case's elements, or the error."""

    finite: bool = False
    seconds: float = 0.0
    elements: int = 0
    error: str = ""


def check(spec_path: Path) -> Checked:
    """Run the task's reference at every verify case (seed 0), as verify does."""
    spec = load_task(spec_path).spec()
    found = Checked(finite=True)
    try:
        reference = load_reference(spec.reference_path, spec.base_dir)
    except ReferenceError as error:
        return Checked(error=str(error)[:200])
    with reference:
        for index, case in enumerate(spec.cases):
            resolved = resolve(spec, case)
            found.elements = max(found.elements, sum(math.prod(s) for s in
                                                     resolved.shapes.values()))
            inputs = generate_inputs(spec, resolved, 0, index)
            started = time.perf_counter()
            try:
                outputs = expected_outputs(reference, spec, resolved, inputs)
            except ReferenceError as error:
                return Checked(error=" ".join(str(error).split())[:200])
            found.seconds = max(found.seconds, time.perf_counter() - started)
            found.finite &= all(bool(np.isfinite(o.astype(np.float64)).all())
                                for o in outputs.values())
    return found


def check_level(level: int, specs: list[Path]) -> None:
    """--check for one level's imported tasks, printed."""
    results = {spec.parent.name: check(spec) for spec in specs}
    for name, result in results.items():
        if result.error or not result.finite:
            print(f"  check {name}: {result.error or 'non-finite outputs'}", flush=True)
    good = [r for r in results.values() if not r.error]
    slowest = max(results, key=lambda n: results[n].seconds, default="-")
    largest = max(results, key=lambda n: results[n].elements, default="-")
    print(f"level {level} check: {sum(r.finite for r in good)}/{len(results)} references run "
          f"with finite outputs; slowest call {results[slowest].seconds if good else 0:.2f} s "
          f"({slowest}); median case {_median([r.elements for r in good]):,} elements, largest "
          f"{results[largest].elements if good else 0:,} ({largest})", flush=True)


def _median(values: list[int]) -> int:
    """The median, 0 of nothing."""
    return int(np.median(values)) if values else 0


def main() -> None:
    """Import every problem per level; print the table and the reasons."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--show", type=int, default=8, help="reasons listed")
    parser.add_argument("--out", type=Path, help="keep the tasks here (default: a temporary "
                                                 "folder, removed afterwards)")
    parser.add_argument("--check", action="store_true",
                        help="also run each imported task's reference at its verify cases")
    args = parser.parse_args()
    root = find_root(args.folder)
    with tempfile.TemporaryDirectory(prefix="kernelbench-import-bench-") as temporary:
        measure(root, args, args.out or Path(temporary))


def measure(root: Path, args: argparse.Namespace, out: Path) -> None:
    """Import (and --check) every level asked for into `out`; print the results."""
    rows, reasons = [], collections.Counter[str]()
    for level in args.levels:
        folder = level_folder(root, level)
        files = sorted(folder.glob("*.py")) if folder else []
        started = time.perf_counter()
        found = import_problems(files, out / f"level{level}", force=True)
        seconds = time.perf_counter() - started
        refused = [(f, r) for f, r in zip(files, found, strict=True) if isinstance(r, Refused)]
        rows.append((level, len(files) - len(refused), len(files), seconds))
        reasons.update(reason(r) for _f, r in refused)
        print(f"level {level}: {len(files) - len(refused)}/{len(files)} in {seconds:.0f} s",
              flush=True)
        for file, why in refused:
            print(f"  refused {file.name}: {why}", flush=True)
        if args.check:
            check_level(level, [r for r in found if isinstance(r, Path)])
    print("\n| level | imported | share |\n| --- | --- | --- |")
    for level, imported, total, _seconds in rows:
        print(f"| {level} | {imported}/{total} | {100 * imported / max(total, 1):.0f}% |")
    imported, total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| all | {imported}/{total} | {100 * imported / max(total, 1):.0f}% |")
    print("\nmain reasons:")
    for text, count in reasons.most_common(args.show):
        print(f"  {count:3d}  {text}")


if __name__ == "__main__":
    main()
