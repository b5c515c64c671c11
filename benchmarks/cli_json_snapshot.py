"""The CLI's JSON for every template (verify on the CPU backend, bench, compile), to check that a
refactoring changed no output: snapshot one checkout, snapshot another, compare.

    python benchmarks/cli_json_snapshot.py snapshot OUT_DIR [--root CHECKOUT]
    python benchmarks/cli_json_snapshot.py compare BEFORE_DIR AFTER_DIR

Verify runs only the spec's seeds (--random-seeds 0), so both runs see the same inputs.
Timings, process ids, the checkout's own path and ptxas's compile time differ from run to run
and are left out of the comparison; everything else must be equal, exit codes included.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

VOLATILE = {"seconds", "pid"}


def _commands(root: Path) -> list[tuple[str, list[str]]]:
    """(name, CLI arguments) for every template."""
    runs = []
    for spec in sorted((root / "resources" / "kernels").glob("*/*.toml")):
        name = spec.stem
        runs.append((f"verify-{name}", ["verify", "--json", "--backend", "cpu",
                                                 "--random-seeds", "0", str(spec)]))
        runs.append((f"bench-{name}", ["bench", "--json", str(spec)]))
        source = spec.with_suffix(".cu")
        if source.exists():
            runs.append((f"compile-{name}", ["compile", "--json", str(source)]))
    return runs


def snapshot(root: Path, out: Path) -> None:
    """Run every command from `root` and keep its JSON and exit code."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(root)}
    for name, args in _commands(root):
        result = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True,
                                text=True, cwd=root, env=env, check=False)
        (out / f"{name}.json").write_text(result.stdout)
        (out / f"{name}.exit").write_text(f"{result.returncode}\n")
        (out / "root").write_text(str(root))


def _scrub(value: object) -> object:
    """JSON without the fields that change from run to run."""
    if isinstance(value, dict):
        return {k: "<varies>" if k in VOLATILE else _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _load(folder: Path, name: str) -> object:
    """One output, with the checkout path and ptxas's timing taken out."""
    text = (folder / name).read_text().replace((folder / "root").read_text(), "<root>")
    return _scrub(json.loads(re.sub(r"Compile time = [0-9.]+ ms", "Compile time = <t>", text)))


def compare(before: Path, after: Path) -> int:
    """Print each output that differs; 0 when none does."""
    names = sorted(p.name for p in before.glob("*.json"))
    differ = [n for n in names if _load(before, n) != _load(after, n)
              or (before / n).with_suffix(".exit").read_text()
              != (after / n).with_suffix(".exit").read_text()]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ)}/{len(names)} outputs equal (exit codes included)")
    return 1 if differ else 0


def main() -> int:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    shot = sub.add_parser("snapshot")
    shot.add_argument("out", type=Path)
    shot.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    both = sub.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "snapshot":
        snapshot(args.root.resolve(), args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
