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
# One launch as the panel edits it: entry, args (names, '' for every argument), grid, block and
# shared_bytes, each as the text typed.
LaunchRow = dict[str, str]
LAUNCH_KEYS = ("entry", "args", "grid", "block", "shared_bytes")
# The field a case problem starts with: `[launch].grid`, `arg (x).shape`, `launch[1] (k).grid`.
_FIELD = re.compile(r"^(\[\w+\]\.\w+|arg \(\w+\)\.\w+|launch\[\d+\](?: \([^)]*\))?\.\w+)")
# A problem about one launch's field: `[launch].grid[0]` (version 1), `launch[1] (k).block`.
_LAUNCH_FIELD = re.compile(r"^(?:\[launch\]|launch\[(\d+)\](?: \([^)]*\))?)\.(\w+)")


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
        # A scratch buffer is poisoned, never initialised: an init typed for the argument
        # before its kind became scratch stays in the row (nothing typed is lost) but is not
        # written.
        if detail and row["kind"] != "scratch":
            table["init"] = detail
    return table


def _optional_float(text: str) -> float | str | None:
    """A tolerance: empty means the dtype's default."""
    if not text.strip():
        return None
    value = _number(text)
    return float(value) if isinstance(value, int) else value


def launch_row(data: Mapping[str, Any], default_entry: str = "") -> LaunchRow:
    """A [launch] or [[launch]] table as the panel's row (args '' when the table names none,
    meaning every argument)."""
    args = data.get("args")
    return {"entry": str(data.get("entry", default_entry)),
            "args": join_list(args) if isinstance(args, list) else "",
            "grid": join_list(data.get("grid") or []), "block": join_list(data.get("block") or []),
            "shared_bytes": str(data.get("shared_bytes", "0"))}


def launch_rows(data: Mapping[str, Any]) -> list[LaunchRow]:
    """Every launch of TOML data as rows: a version 1 spec's one [launch] (its entry from
    [kernel]), else each [[launch]] table (entry defaulting to [kernel].entry)."""
    kernel = data.get("kernel")
    entry = str(kernel.get("entry", "")) if isinstance(kernel, dict) else ""
    launch = data.get("launch")
    if isinstance(launch, list):
        rows = [launch_row(t, entry) for t in launch if isinstance(t, dict)]
        return rows or [launch_row({}, entry)]
    return [launch_row(launch if isinstance(launch, dict) else {}, entry)]


def has_launch_tables(data: Mapping[str, Any]) -> bool:
    """Whether TOML data lists its launches as [[launch]] tables (spec version 2)."""
    return isinstance(data.get("launch"), list)


def needs_launch_tables(launches: list[LaunchRow], tables: bool) -> bool:
    """Whether the form must write [[launch]] tables: the file had them, there are several
    launches, or the one launch takes only some arguments; otherwise a version 1 spec stays
    version 1."""
    return tables or len(launches) != 1 or bool(launches[0].get("args", "").strip())


def launch_table(row: LaunchRow) -> dict[str, Any]:
    """A panel launch row as a [[launch]] table (no args key: every argument; no entry key
    when none is typed)."""
    table: dict[str, Any] = {}
    if row.get("entry", "").strip():  # none typed: the parser says it is missing
        table["entry"] = row["entry"].strip()
    if row.get("args", "").strip():
        table["args"] = split_list(row["args"])
    table.update(grid=split_list(row.get("grid", "")), block=split_list(row.get("block", "")),
                 shared_bytes=row.get("shared_bytes", "").strip() or "0")
    return table


def launch_field(field: str) -> tuple[int, str] | None:
    """(launch index, key) of a problem about one launch's field ('[launch].grid[0]' -> (0,
    'grid'), 'launch[1] (finish_sum).block' -> (1, 'block'); '[kernel].entry' is the first
    launch's entry), or None."""
    if field.startswith("[kernel].entry"):
        return 0, "entry"
    match = _LAUNCH_FIELD.match(field)
    if match is None or match.group(2) not in LAUNCH_KEYS:
        return None
    return int(match.group(1) or 0), match.group(2)


def shown_problem(problem: Problem, launches: int) -> str:
    """A problem as the Spec pane lists it: a launch named as its box and the Results pane name
    it, `launch 2 of 2 (finish_sum).grid[0]` for the parser's `launch[1] (finish_sum).grid[0]`."""
    text = str(problem)
    match = re.match(r"^launch\[(\d+)\]", text)
    if match is None:
        return text
    return f"launch {int(match.group(1)) + 1} of {launches}{text[match.end():]}"


def build_data(fields: Mapping[str, str], args: Iterable[ArgRow],
               launches: list[LaunchRow] | None = None, tables: bool = False) -> dict[str, Any]:
    """The TOML data that the panel's fields describe. `launches` are the launch rows (else
    one launch from the fields entry, grid, block and shared_bytes); they are written as one
    [launch] with [kernel].entry unless needs_launch_tables()."""
    if launches is None:
        launches = [{key: fields.get(key, "") for key in LAUNCH_KEYS if key != "args"}]
    several = needs_launch_tables(launches, tables)
    verify: dict[str, Any] = {"cases": cases_from_text(fields.get("cases", "")),
                              "seeds": int(fields.get("seeds") or 3)}
    for key in ("rtol", "atol"):
        value = _optional_float(fields.get(key, ""))
        if value is not None:
            verify[key] = value
    kernel: dict[str, Any] = {"source": fields.get("source", "").strip()}
    if not several:  # each [[launch]] names its own entry
        kernel["entry"] = launches[0].get("entry", "").strip()
    kernel["options"] = fields.get("options", "").split()
    launch: Any = [launch_table(row) for row in launches]
    if not several:
        launch = {key: value for key, value in launch[0].items() if key != "entry"}
    data: dict[str, Any] = {
        "kernel": kernel,
        "arg": [arg_table(row) for row in args],
        "launch": launch,
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
    """The panel's text fields for TOML data (missing tables give empty fields); entry, grid,
    block and shared_bytes are the first launch's (launch_rows() has every launch)."""
    kernel = data.get("kernel") or {}
    launch = launch_rows(data)[0]
    verify = data.get("verify") or {}
    bench = data.get("bench") or {}
    return {
        "source": str(kernel.get("source", "")), "entry": launch["entry"],
        "options": " ".join(str(o) for o in kernel.get("options") or []),
        "grid": launch["grid"], "block": launch["block"], "shared_bytes": launch["shared_bytes"],
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
