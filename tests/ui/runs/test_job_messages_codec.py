"""The GUI's job pipe through the typed codec: request and event lines written by the code
before it (tests/fixtures/codec/jobs.jsonl) decode into the same records and encode back to the
same text; a malformed line names its field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.engine.verify.results import Status, Verdict
from app.jobs import messages

LINES = (Path(__file__).parents[2] / "fixtures" / "codec" / "jobs.jsonl").read_text(
    encoding="utf-8").splitlines(keepends=True)
REQUESTS = [line for line in LINES if line.startswith('{"id"')]
EVENTS = [line for line in LINES if line.startswith('{"event"')]


@pytest.mark.parametrize("line", REQUESTS)
def test_old_request_lines_decode_and_encode_back(line: str) -> None:
    job_id, request = messages.decode_request(json.loads(line))
    assert request.kind == json.loads(line)["kind"]
    assert job_id is not None and messages.encode_request(request, job_id) == line


def test_old_requests_are_the_records_they_were_made_from() -> None:
    _, compile_request = messages.decode_request(json.loads(REQUESTS[0]))
    assert compile_request == messages.CompileRequest(
        "__global__ void k() {}", "k.cu", "/k", "sm_90", ("-O3", "-lineinfo"), 256, 1024)
    _, bench = messages.decode_request(json.loads(REQUESTS[4]))
    assert bench == messages.BenchRequest("/k/spec.toml", "pycuda", {"budget_ms": 500.0})


@pytest.mark.parametrize("line", EVENTS)
def test_old_event_lines_decode_and_encode_back(line: str) -> None:
    assert messages.JobEvent.from_line(line).to_line() == line


def test_an_old_result_event_still_gives_its_verdict() -> None:
    event = messages.JobEvent.from_line(EVENTS[3])
    assert event.event is messages.EventKind.RESULT and event.data is not None
    verdict = Verdict.from_json(event.data)
    assert verdict.status is Status.MISMATCH and verdict.runs[1].findings[0].count == 3


def test_malformed_job_lines_name_the_field() -> None:
    with pytest.raises(messages.MessageError,
                       match=r"malformed verify request: timeout: expected a number, got 'soon'"):
        messages.decode_request({"id": 1, "kind": "verify", "spec_path": "/s",
                                 "timeout": "soon"})
    with pytest.raises(messages.MessageError,
                       match=r"job event: fraction: expected a number or null, got 'half'"):
        messages.JobEvent.from_line('{"event": "progress", "id": 1, "fraction": "half"}')
