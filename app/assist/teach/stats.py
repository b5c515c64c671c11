"""What a training set covers (`kernel-studio teach stats`): how many examples of each register,
shape, dtype, launch and family, from a train.jsonl that `teach data` wrote, or from the
generator's candidates before any is verified (to see the mix a run will try).

Lines of the shaped families carry their traits; for the others they are read off the spec:
the output's rank, the inputs' dtype, a capped grid (`min(` in it), a scalar argument with a
fixed value. Their register is the project's own.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.assist.teach.candidate import Candidate
from app.spec.limits import loads_bounded

AXES = ("register", "shape", "dtype", "launch", "scalar", "family")
# Launch words: a grid of one dim, of two (a block row per outer index), or capped (a loop).
LAUNCHES = {"flat": "1-D grid", "rows": "2-D grid", "capped": "capped grid"}


def _spec_traits(spec_text: str) -> dict[str, Any]:
    """Traits read off a spec's text (for lines that do not carry them)."""
    try:
        spec = loads_bounded(spec_text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {"shape": "?", "dtype": "?", "launch": "?", "scalar": False}
    args = [a for a in spec.get("arg", []) if isinstance(a, dict)]
    outs = [a for a in args if a.get("kind") in ("out", "inout")]
    ins = [a for a in args if a.get("kind") == "in"] or outs
    grid = " ".join(str(g) for g in spec.get("launch", {}).get("grid", []))
    fixed = [a for a in args if a.get("kind") == "scalar" and
             str(a.get("value", "")).lstrip("-").replace(".", "", 1).isdigit()]
    rank = len(outs[0].get("shape", [])) if outs else 0
    return {"shape": f"{rank}d", "dtype": str(ins[0].get("dtype", "?")) if ins else "?",
            "launch": "capped" if "min(" in grid else ("rows" if len(
                spec.get("launch", {}).get("grid", [])) > 1 else "flat"),
            "scalar": bool(fixed)}


def traits_of(line: dict[str, Any]) -> dict[str, str]:
    """One example's register, shape, dtype, launch, scalar and family, as words."""
    carried = line.get("traits")
    found = dict(carried) if isinstance(carried, dict) else {
        "register": "project", **_spec_traits(str(line.get("spec", "")))}
    if found.get("capped"):
        found["launch"] = "capped"
    found["launch"] = LAUNCHES.get(str(found.get("launch")), str(found.get("launch")))
    return {"register": str(found.get("register", "project")),
            "shape": str(found.get("shape", "?")), "dtype": str(found.get("dtype", "?")),
            "launch": str(found.get("launch", "flat")),
            "scalar": "with a scalar" if found.get("scalar") else "no scalar",
            "family": str(line.get("family", "?"))}


def count(lines: Iterable[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per axis, how many examples have each value; and register x shape."""
    tables: dict[str, Counter[str]] = {axis: Counter() for axis in (*AXES, "register x shape")}
    for line in lines:
        traits = traits_of(line)
        for axis in AXES:
            tables[axis][traits[axis]] += 1
        tables["register x shape"][f"{traits['register']} {traits['shape']}"] += 1
    return tables


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The examples of a train.jsonl (OSError or ValueError when it cannot be read)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def candidate_lines(candidates: Iterable[Candidate]) -> list[dict[str, Any]]:
    """Candidates as the lines count() reads (nothing verified)."""
    return [{"family": c.family, "spec": c.spec_text(), "traits": c.extra.get("traits")}
            for c in candidates]


def render(tables: dict[str, Counter[str]]) -> str:
    """The tables as text: one block per axis, largest first, with shares."""
    blocks = []
    for axis, counts in tables.items():
        total = sum(counts.values()) or 1
        rows = [f"  {value:<24} {number:>6}  {100 * number / total:5.1f}%"
                for value, number in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        blocks.append(f"{axis}:\n" + "\n".join(rows))
    return "\n".join(blocks)
