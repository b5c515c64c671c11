"""How much of KernelBench `kernel-studio import kernelbench` maps: every problem of levels 1-3
of a KernelBench checkout imported (into a temporary folder), the share that maps per level, and
the main reasons for the rest.

    python benchmarks/kernelbench_import.py [KERNELBENCH_FOLDER] [--levels 1 2 3] [--show 5]

The folder is a checkout of https://github.com/ScalingIntelligence/KernelBench (its
KernelBench/level1 ... folders, or the folder holding them); without one, ./KernelBench,
../KernelBench and $KERNELBENCH are looked for. Problems run only inside the sandbox, on
torch's meta device (no computation): a few minutes for the 250 problems on two cores.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import import_problems

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
    text = re.sub(r"\d+", "N", text)
    return text[:110]


def main() -> None:
    """Import every problem per level; print the table and the reasons."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--show", type=int, default=5, help="reasons listed per level")
    args = parser.parse_args()
    root = find_root(args.folder)
    rows, reasons = [], collections.Counter[str]()
    with tempfile.TemporaryDirectory(prefix="kernelbench-import-bench-") as out:
        for level in args.levels:
            folder = level_folder(root, level)
            files = sorted(folder.glob("*.py")) if folder else []
            started = time.perf_counter()
            found = import_problems(files, Path(out) / f"level{level}", force=True)
            seconds = time.perf_counter() - started
            refused = [(f, r) for f, r in zip(files, found, strict=True)
                       if isinstance(r, Refused)]
            rows.append((level, len(files) - len(refused), len(files), seconds))
            kinds = collections.Counter(reason(r) for _f, r in refused)
            reasons.update(kinds)
            print(f"level {level}: {len(files) - len(refused)}/{len(files)} in {seconds:.0f} s",
                  flush=True)
            for file, why in refused:
                print(f"  refused {file.name}: {why}", flush=True)
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
