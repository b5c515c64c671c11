"""The evaluation store written by earlier code still reads (issue 24's codec work): two runs,
a line of another format and a damaged line skipped and counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.assist.evaluation import store

STORED = Path(__file__).parents[2] / "fixtures" / "codec" / "eval_results.jsonl"


def test_an_old_store_reads_its_runs_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    shutil.copy(STORED, path)
    results, skipped = store.load_results(path)
    assert skipped == 2
    assert [r["arms"] for r in results] == [["base"], ["base", "skills"]]
    assert results[0]["version"] == store.VERSION


def test_an_appended_run_is_written_as_the_old_lines_were(tmp_path: Path) -> None:
    first = STORED.read_text(encoding="utf-8").splitlines()[0]
    data = json.loads(first)
    body = {k: v for k, v in data.items() if k not in ("format", "version")}
    path = store.append_result(body, tmp_path / "results.jsonl")
    assert path.read_text(encoding="utf-8") == first + "\n"
