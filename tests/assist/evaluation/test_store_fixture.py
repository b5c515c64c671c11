"""The evaluation store written by earlier code still reads (issue 24's codec work): two runs,
a line of another format and a damaged line skipped and counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.assist.evaluation import store
from app.assist.evaluation.grade import EvalResult
from app.assist.evaluation.metrics import Lift, TaskOutcome
from app.base import codec

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


def test_every_stored_run_is_written_back_byte_for_byte() -> None:
    lines = STORED.read_text(encoding="utf-8").splitlines()
    runs = [store.read_line(line) for line in lines]
    assert [run is not None for run in runs] == [True, False, False, True]
    for line, run in zip(lines, runs, strict=True):
        if run is not None:
            body = {k: v for k, v in run.items() if k not in ("format", "version")}
            assert store.store_line(body) == line


def _result() -> EvalResult:
    """A result of two tasks in one arm, with a lift and times that need rounding."""
    outcomes = [TaskOutcome("add", 1, "float32", 2, 1, 3, 1, (2,), 100, 50, 1.23456, 0.5),
                TaskOutcome("relu", 2, "float16", 2, 0, generate_s=2.0)]
    return EvalResult("r1", "2026-01-01T00:00:00", {"k": 2, "arms": [{"name": "base"}]},
                      {"base": outcomes}, [Lift("base", "skills", 2, 0.5, 0.1, 0.9)],
                      seconds=12.345, notes=["n"])


def test_a_result_is_stored_in_the_order_and_numbers_it_always_had() -> None:
    data = _result().as_dict()
    assert list(data) == ["id", "started", "seconds", "settings", "model", "stopped", "run_dir",
                          "broken", "notes", "summaries", "lifts", "outcomes"]
    assert data["seconds"] == 12.35 and data["summaries"]["base"]["tasks"] == 2
    first = data["outcomes"]["base"][0]
    assert first["generate_s"] == 1.235 and first["rounds_to_pass"] == [2]
    assert list(first)[:3] == ["task", "level", "dtype"] and list(first)[-1] == "no_code"
    assert data["lifts"][0] == {"control": "base", "treatment": "skills", "tasks": 2,
                                "mean": 0.5, "low": 0.1, "high": 0.9, "confidence": 0.95}
    again = [codec.to_object(TaskOutcome.from_dict(o)) for o in data["outcomes"]["base"]]
    assert json.dumps(again) == json.dumps(data["outcomes"]["base"])


def test_a_malformed_outcome_names_its_field() -> None:
    stored = _result().as_dict()["outcomes"]["base"][0]
    with pytest.raises(codec.CodecError, match=r"task outcome: rounds_to_pass\[0\]: expected a "
                                               r"whole number, got 'two'"):
        TaskOutcome.from_dict({**stored, "rounds_to_pass": ["two"]})
