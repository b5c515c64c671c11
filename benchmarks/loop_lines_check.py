"""Every loop line the prompt gives (reductions, scans, matrix products, with the math around
them) for the examples of teach data, copied alone into a kernel and verified against the
example's own reference on the CPU backend. An adapter is taught to copy these lines: a wrong
one would teach it a wrong kernel, so each must compute what the reference computes.

    python benchmarks/loop_lines_check.py DATA.jsonl[.gz] ... [--limit N] [--json OUT.json]
                                          [--write OUT.jsonl.gz]
    python benchmarks/loop_lines_check.py TASKS_DIR ...     (imported problems: `kernel-studio
                                                             import kernelbench ... --out DIR`)

A folder is read as task folders, each with its spec, reference and problem file: a line is
verified against the problem's own forward.

Exit 0 when every line verifies, 1 otherwise (the failing example, its line and the verdict),
2 for data that cannot be read or holds no loop line.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.assist.prompting import per_element  # noqa: E402
from app.assist.prompting.candidates import answer_prefix  # noqa: E402
from app.assist.tasks.suite import TaskError, load_task  # noqa: E402
from app.engine.verify.runs import Engine, VerifyOptions  # noqa: E402
from app.engine.verify.verifier import verify_file  # noqa: E402
from app.isolation import offline  # noqa: E402

_LOOP = re.compile(r"^- per element[^:]*: (.*for \(int .*)$")


_KEYS = ("description", "spec", "kernel", "reference", "entry")


class BadData(Exception):
    """A data file that cannot be read as teach data."""


def examples(paths: list[Path]) -> Iterator[dict[str, Any]]:
    """The examples of teach data files (plain or gzip JSON lines) and of task folders;
    BadData names the file and line that is not one."""
    for path in paths:
        if path.is_dir():
            yield from task_examples(path)
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as lines:
                for number, line in enumerate(lines, 1):
                    if not line.strip():
                        continue
                    try:
                        example = json.loads(line)
                    except ValueError as error:
                        raise BadData(f"{path}:{number}: not JSON ({error})") from None
                    if not isinstance(example, dict) or any(k not in example for k in _KEYS):
                        raise BadData(f"{path}:{number}: not an example of teach data (each "
                                      f"line needs {', '.join(_KEYS)})")
                    yield example
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise BadData(f"{path}: cannot be read as teach data: {error}") from None


def task_examples(folder: Path) -> Iterator[dict[str, Any]]:
    """Each task folder under `folder` as an example: its description, its kernel's
    signature, and the folder itself (its reference may read files beside it)."""
    specs = sorted(folder.glob("*/*.toml"))
    if not specs:
        raise BadData(f"{folder}: no task folder (a folder with a spec) in it")
    for spec_path in specs:
        try:
            task = load_task(spec_path)
            spec = task.spec()
        except (TaskError, OSError, ValueError) as error:
            raise BadData(f"{spec_path}: cannot be read as a task: {error}") from None
        yield {"description": task.description, "entry": spec.entry, "family": "task",
               "kernel": answer_prefix(spec).removeprefix("```cuda\n"), "folder": spec_path}


def loop_line(example: dict[str, Any]) -> str | None:
    """The example's loop line as C (the prompt's text after its label), or None."""
    for hint in per_element.hints(example["description"]):
        found = _LOOP.match(hint)
        if found:
            return found.group(1)
    return None


def kernel_of(example: dict[str, Any], line: str, total: str) -> str:
    """The example's own kernel signature (and includes) with the line as the whole body."""
    kernel = example["kernel"]
    head = kernel[:kernel.index("{", kernel.index("__global__"))]
    return (f"{head}{{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < {total}) {{\n        {line}\n    }}\n}}\n")


def check(example: dict[str, Any], line: str, folder: Path, engine: Engine) -> dict[str, Any]:
    """Write the example's spec, reference and the line's kernel; verify; its row."""
    if "folder" in example:  # a task folder: copied whole
        shutil.copytree(example["folder"].parent, folder)
        spec_path = folder / example["folder"].name
        data = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    else:
        folder.mkdir(parents=True)
        spec_path = folder / f"{example['entry']}.toml"
        spec_path.write_text(example["spec"], encoding="utf-8")
        data = tomllib.loads(example["spec"])
        (folder / data["reference"]["python"]).write_text(example["reference"],
                                                           encoding="utf-8")
    out = next(a for a in data["arg"] if a["kind"] == "out")
    total = " * ".join(str(s) for s in out["shape"]) or "1"
    kernel = kernel_of(example, line, total)
    (folder / data["kernel"]["source"]).write_text(kernel, encoding="utf-8")
    started = time.perf_counter()
    verdict = verify_file(spec_path, VerifyOptions(backend="cpu"), engine)
    return {"entry": example["entry"], "family": example.get("family"), "line": line,
            "kernel": kernel,
            "passed": verdict.passed, "verdict": str(verdict.status),
            "message": "" if verdict.passed else verdict.describe()[:400],
            "seconds": round(time.perf_counter() - started, 2)}


def check_all(paths: list[Path], limit: int, rows: list[dict[str, Any]]) -> None:
    """Verify each example's loop line, appending a row each (and printing it)."""
    with Engine() as engine, tempfile.TemporaryDirectory() as scratch:
        for number, example in enumerate(examples(paths)):
            line = loop_line(example)
            if line is None:
                continue
            row = check(example, line, Path(scratch) / str(number), engine)
            rows.append({**row, "number": number})
            print(f"{'ok ' if row['passed'] else 'BAD'} {row['family']:<12} "
                  f"{row['entry']:<34} {row['seconds']:>6.2f} s  {row['message'][:90]}",
                  flush=True)
            if limit and len(rows) >= limit:
                return


def write_taught_lines(paths: list[Path], rows: list[dict[str, Any]], target: Path) -> int:
    """Every example of the data files into `target` (gzip JSON lines), those whose loop line
    verified with that line's kernel as their answer: an adapter taught on answers in another
    style writes that style rather than copy the line. How many answers were replaced."""
    verified = {row["number"]: row["kernel"] for row in rows if row["passed"]}
    # Written beside the target, then moved into place: a full disk leaves no half file.
    partial = target.with_name(f".{target.name}.partial")
    try:
        with gzip.open(partial, "wt", encoding="utf-8") as out:
            for number, example in enumerate(examples(paths)):
                if number in verified:
                    example = {**example, "kernel": verified[number]}
                out.write(json.dumps(example) + "\n")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return len(verified)


def main() -> int:
    """Check the loop lines of the data files; print one line each and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="stop after this many lines")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--write", type=Path, metavar="OUT.jsonl.gz",
                        help="write the data again, each verified line's kernel as its answer")
    args = parser.parse_args()
    if args.write and (args.limit or any(p.is_dir() for p in args.data)):
        parser.error("--write takes whole teach data files (no --limit, no task folders)")
    if args.write and args.write.resolve() in {p.resolve() for p in args.data}:
        parser.error("--write names one of the data files it reads: write to a new file")
    offline.enforce()
    rows: list[dict[str, Any]] = []
    try:
        check_all(args.data, args.limit, rows)
    except BadData as error:
        print(f"error: {error}; make teach data with kernel-studio teach data, or task "
              "folders with kernel-studio import kernelbench", file=sys.stderr)
        return 2
    if not rows:
        print("error: no example in the data has a loop line: nothing was checked",
              file=sys.stderr)
        return 2
    bad = [r for r in rows if not r["passed"]]
    families = Counter(r["family"] for r in rows)
    print(f"{len(rows) - len(bad)} of {len(rows)} loop lines verify ({dict(families)})")
    for row in bad:
        print(f"  {row['entry']}: {row['line']}\n    {row['message']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if args.write:
        try:
            replaced = write_taught_lines(args.data, rows, args.write)
        except OSError as error:
            print(f"error: {args.write} could not be written ({error}); the data files are "
                  "unchanged: free space or choose another folder", file=sys.stderr)
            return 2
        print(f"{args.write}: every example, {replaced} answers now the verified line's kernel")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
