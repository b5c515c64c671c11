"""Conversions between the spec panel's text fields and spec TOML data (no Qt, easy to test).

The form edits the raw TOML data (not a validated Spec) so that a broken spec can still be
loaded, shown and fixed; app.spec.model validates what the form produces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.spec.cases import CaseError, resolve
from app.spec.model import Problem, Spec, SpecError, parse_spec_data

ArgRow = dict[str, str]
_FIELD = re.compile(r"^(\[\w+\]\.\w+|arg \(\w+\)\.\w+)")


def split_list(text: str) -> list[str]:
    """'cdiv(n, 256), 4' -> ['cdiv(n, 256)', '4']: commas inside parentheses do not split."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        items.append(current.strip())
    return [item for item in items if item]


def join_list(values: Iterable[Any]) -> str:
    """['cdiv(n, 256)', '4'] -> 'cdiv(n, 256), 4'."""
    return ", ".join(str(v) for v in values)


def _number(text: str) -> int | float | str:
    """A number typed in a case: 1_000 and 1e3 work; anything else stays text for the
    validator to name."""
    cleaned = text.strip().replace("_", "")
    try:
        return int(cleaned)
    except ValueError:
        try:
            return float(cleaned)
        except ValueError:
            return text.strip()


def parse_case(text: str) -> dict[str, Any]:
    """'n = 1000, m = 3' -> {'n': 1000, 'm': 3}; a part without '=' becomes a '?' key."""
    case: dict[str, Any] = {}
    for part in split_list(text):
        name, sep, value = part.partition("=")
        case[name.strip() if sep else f"?{part}"] = _number(value) if sep else part
    return case


def case_text(case: Mapping[str, Any]) -> str:
    """{'n': 1000} -> 'n = 1000'."""
    return ", ".join(f"{k} = {v}" for k, v in case.items())


def cases_from_text(text: str) -> list[dict[str, Any]]:
    """One case per non-empty line."""
    return [parse_case(line) for line in text.splitlines() if line.strip()]


def cases_to_text(cases: Iterable[Mapping[str, Any]]) -> str:
    """One case per line."""
    return "\n".join(case_text(case) for case in cases)


def arg_row(data: Mapping[str, Any]) -> ArgRow:
    """An [[arg]] table as the panel's row: name, kind, dtype, shape, init/value."""
    kind = str(data.get("kind", "in"))
    detail = data.get("value") if kind == "scalar" else data.get("init")
    return {"name": str(data.get("name", "")), "kind": kind,
            "dtype": str(data.get("dtype", "float32")),
            "shape": join_list(data.get("shape") or []), "detail": str(detail or "")}


def arg_table(row: ArgRow) -> dict[str, Any]:
    """A panel row back into an [[arg]] table."""
    table: dict[str, Any] = {"name": row["name"].strip(), "kind": row["kind"],
                             "dtype": row["dtype"]}
    detail = row.get("detail", "").strip()
    if row["kind"] == "scalar":
        table["value"] = detail
    else:
        table["shape"] = split_list(row.get("shape", ""))
        if detail:
            table["init"] = detail
    return table


def _optional_float(text: str) -> float | str | None:
    """A tolerance: empty means the dtype's default."""
    if not text.strip():
        return None
    value = _number(text)
    return float(value) if isinstance(value, int) else value


def build_data(fields: Mapping[str, str], args: Iterable[ArgRow]) -> dict[str, Any]:
    """The TOML data that the panel's fields describe."""
    verify: dict[str, Any] = {"cases": cases_from_text(fields.get("cases", "")),
                              "seeds": int(fields.get("seeds") or 3)}
    for key in ("rtol", "atol"):
        value = _optional_float(fields.get(key, ""))
        if value is not None:
            verify[key] = value
    data: dict[str, Any] = {
        "kernel": {"source": fields.get("source", "").strip(),
                   "entry": fields.get("entry", "").strip(),
                   "options": fields.get("options", "").split()},
        "arg": [arg_table(row) for row in args],
        "launch": {"grid": split_list(fields.get("grid", "")),
                   "block": split_list(fields.get("block", "")),
                   "shared_bytes": fields.get("shared_bytes", "").strip() or "0"},
        "reference": {"python": fields.get("reference", "").strip()},
        "verify": verify,
    }
    bench = _bench(fields)
    if bench:
        data["bench"] = bench
    return data


def _bench(fields: Mapping[str, str]) -> dict[str, Any]:
    """The [bench] table, empty when no bench field is filled in."""
    bench: dict[str, Any] = {}
    if fields.get("bench_case", "").strip():
        bench["case"] = parse_case(fields["bench_case"])
    for key in ("bytes", "flops"):
        if fields.get(f"bench_{key}", "").strip():
            bench[key] = fields[f"bench_{key}"].strip()
    return bench


def fields_from_data(data: Mapping[str, Any]) -> dict[str, str]:
    """The panel's text fields for TOML data (missing tables give empty fields)."""
    kernel = data.get("kernel") or {}
    launch = data.get("launch") or {}
    verify = data.get("verify") or {}
    bench = data.get("bench") or {}
    return {
        "source": str(kernel.get("source", "")), "entry": str(kernel.get("entry", "")),
        "options": " ".join(str(o) for o in kernel.get("options") or []),
        "grid": join_list(launch.get("grid") or []), "block": join_list(launch.get("block") or []),
        "shared_bytes": str(launch.get("shared_bytes", "0")),
        "reference": str((data.get("reference") or {}).get("python", "")),
        "cases": cases_to_text(verify.get("cases") or []), "seeds": str(verify.get("seeds", 3)),
        "rtol": _text(verify.get("rtol")), "atol": _text(verify.get("atol")),
        "bench_case": case_text(bench.get("case") or {}),
        "bench_bytes": str(bench.get("bytes", "")), "bench_flops": str(bench.get("flops", "")),
    }


def _text(value: Any) -> str:
    """'' for None, else str()."""
    return "" if value is None else str(value)


def case_problems(spec: Spec) -> list[Problem]:
    """Launch problems that only show for a case (a block of 0, a grid past CUDA's limits)."""
    problems = []
    cases = [("[verify].cases", case) for case in spec.cases]
    if spec.bench_case:
        cases.append(("[bench].case", spec.bench_case))
    for where, case in cases:
        try:
            resolve(spec, case)
        except (CaseError, ValueError) as error:
            text = str(error)
            match = _FIELD.match(text)
            label = ", ".join(f"{k}={v}" for k, v in case.items())
            problems.append(Problem(match.group(1) if match else where,
                                    f"for the case {{{label}}}: {text}"))
    return problems


def validate(data: Mapping[str, Any], base_dir: Path, path: Path | None) -> Spec | list[Problem]:
    """The validated Spec, or every problem (each naming its field), cases resolved too."""
    try:
        spec = parse_spec_data(data, base_dir, path)
    except SpecError as error:
        return list(error.problems)
    return case_problems(spec) or spec
