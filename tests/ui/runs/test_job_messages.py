"""The GUI's side of the job protocol (app.jobs.messages): the run controller sends typed
requests, and what comes back reaches the panes as engine objects. A small child process stands
in for the job server, so each test decides exactly what the child answers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.engine.verify.results import Finding, RunResult, Status, Verdict
from app.jobs.messages import VerifyRequest, decode_request
from ui.runs.controller import RunController
from ui.runs.results_pane import ResultsPane

# Says ready, records the request line, prints a stray line (as a library might), answers with
# argv[2] as the result's data, then waits for the end of its input like the real server.
CHILD = """
import json, sys
from app.jobs.messages import EventKind, JobEvent, decode_request
print(JobEvent(EventKind.READY, pid=0).to_line(), end="", flush=True)
line = sys.stdin.readline()
open(sys.argv[1], "w").write(line)
job_id, _ = decode_request(json.loads(line))
print("a stray line that is not an event", flush=True)
print(JobEvent(EventKind.RESULT, id=job_id, data=json.loads(sys.argv[2])).to_line(), end="",
      flush=True)
sys.stdin.read()
"""


def mismatch() -> Verdict:
    """A verdict with one failing run and one finding."""
    finding = Finding(Status.MISMATCH, "c", "2 elements differ", count=2, total=4,
                      first_indices=[[1]], expected=[1.0], actual=[2.5], max_abs_error=1.5,
                      max_rel_error=1.5)
    runs = [RunResult({"n": 4}, 0, Status.PASSED, seconds=0.01),
            RunResult({"n": 4}, 1, Status.MISMATCH, "c differs", [finding], 0.02)]
    return Verdict(Status.MISMATCH, "1 of 2 runs failed", backend="selftest", runs=runs)


@pytest.fixture
def controller(qtbot: Any) -> Any:
    """A run controller whose job process is the scripted child; shut down afterwards."""
    runner = RunController()
    yield runner
    runner.shutdown()


def answer_with(runner: RunController, tmp_path: Path, data: dict[str, Any]) -> Path:
    """Make the child answer `data`; returns where it records the request it received."""
    record = tmp_path / "request.json"
    runner.job.command = [sys.executable, "-c", CHILD, str(record), json.dumps(data)]
    return record


def test_a_verify_request_is_typed_and_the_verdict_arrives_as_an_object(
        qtbot: Any, controller: RunController, tmp_path: Path) -> None:
    record = answer_with(controller, tmp_path, mismatch().to_json())
    controller.backend, controller.timeout = "cpu", 7.5
    with qtbot.waitSignal(controller.verified, timeout=30000) as blocker:
        assert controller.verify(tmp_path / "k.toml", "memcheck")
    _, request = decode_request(json.loads(record.read_text()))
    assert request == VerifyRequest(str(tmp_path / "k.toml"), "cpu", "memcheck", 7.5)
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict) and verdict.status == Status.MISMATCH
    assert verdict.runs[1].findings[0].actual == [2.5]


def test_the_results_pane_shows_a_verdict_object(qtbot: Any) -> None:
    pane = ResultsPane()
    qtbot.addWidget(pane)
    pane.show_verdict(mismatch())
    assert pane.status() == "MISMATCH"
    assert [pane.runs.item(r, 2).text() for r in range(2)] == ["passed", "mismatch"]
    details = pane.details.toPlainText()  # the first failing run
    assert details.splitlines()[0] == "case {n=4}, seed 1: mismatch"
    assert "(outputs differ from the reference)" in details
    assert "2 of 4 elements are wrong" in details and "at (1,): expected 1.0, got 2.5" in details
    pane.runs.setCurrentCell(0, 0)
    assert pane.details.toPlainText().startswith("case {n=4}, seed 0: passed")


def test_a_result_the_gui_cannot_read_fails_the_job_saying_why(
        qtbot: Any, controller: RunController, tmp_path: Path) -> None:
    answer_with(controller, tmp_path, {"status": "splendid", "message": "?"})
    busy: list[Any] = []
    controller.busy.connect(busy.append)
    with qtbot.waitSignal(controller.failed, timeout=30000) as blocker:
        assert controller.verify(tmp_path / "k.toml")
    kind, message, hint = blocker.args
    assert kind == "verify" and message.startswith("the verify result cannot be read")
    assert "verdict: status: invalid enum value 'splendid'" in message and "restart" in hint
    assert busy[-1] is None and not controller.running
