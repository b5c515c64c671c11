"""Typed messages across process boundaries: what one side builds, the other parses back to the
same value (worker protocol, GUI job pipe, verdicts and timing reports as JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from selftest_spec import BENCH, write_selftest_spec

from app.base import codec
from app.engine.bench.reports import BenchReport
from app.engine.bench.runner import BenchOptions, bench_file
from app.engine.verify.results import Status, Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.worker import protocol
from app.engine.worker.timing import TimingMode, TimingPlan
from app.jobs import messages


@pytest.fixture(scope="module")
def engine():
    """One engine (warm worker) for the module."""
    with Engine() as shared:
        yield shared


def _through_json(data: dict[str, object]) -> dict[str, object]:
    """What the other side of a pipe reads."""
    return json.loads(json.dumps(data))  # type: ignore[no-any-return]


@pytest.mark.parametrize("reference", ["return {'c': a}", "return {'c': a + 1.0}"])
def test_a_verdict_survives_the_job_pipe(tmp_path: Path, engine: Engine, reference: str) -> None:
    spec = write_selftest_spec(tmp_path, "copy", reference=reference)
    verdict = verify_file(spec, VerifyOptions(backend="selftest"), engine)
    back = Verdict.from_json(_through_json(verdict.to_json()))
    assert back == verdict
    assert back.describe() == verdict.describe()
    assert isinstance(back.status, Status) and back.runs and back.runs[0].findings == \
        verdict.runs[0].findings


def test_a_bench_report_survives_the_job_pipe(tmp_path: Path, engine: Engine) -> None:
    spec = write_selftest_spec(tmp_path, "copy", seeds=1, bench=BENCH)
    options = BenchOptions(backend="selftest", budget_ms=40.0, warmup_ms=1.0)
    report = bench_file(spec, options, engine=engine)
    assert report.status == Status.TIMED, report.describe()
    back = BenchReport.from_json(_through_json(report.to_json()))
    assert back.describe() == report.describe()
    assert back.samples_chart() == report.samples_chart()
    assert back.points[0].variants[0].stats == report.points[0].variants[0].stats


def test_worker_requests_round_trip() -> None:
    kernel = protocol.KernelRef("k", "k", "m1", cubin_path="/x.cubin", options=("-O3",))
    launch = protocol.Launch.of(kernel, (4,), (256,), 0,
                                (protocol.BufferItem("/b", 64, "float32", first="/f"),
                                 protocol.ScalarItem(7, "int32")))
    plan = TimingPlan(mode=TimingMode.HOT, budget_ms=5.0)
    for request in (protocol.HelloRequest(), protocol.LoadRequest.of(kernel),
                    protocol.RunRequest.of(launch), protocol.BenchRequest((launch, launch), plan),
                    protocol.ShutdownRequest()):
        line = protocol.encode(codec.to_object(request))
        assert protocol.request_from_message(protocol.decode(line)) == request


def test_malformed_worker_requests_name_the_problem() -> None:
    with pytest.raises(protocol.ProtocolError, match="unknown op 'fly'"):
        protocol.request_from_message({"op": "fly"})
    with pytest.raises(protocol.ProtocolError, match="malformed run request"):
        protocol.request_from_message({"op": "run", "entry": "k"})
    with pytest.raises(protocol.ProtocolError, match=r"run request: grid: .*length <= 3"):
        protocol.request_from_message({"op": "run", "symbol": "k", "entry": "k",
                                       "grid": [1, 1, 1, 1]})


def test_a_plan_from_json_is_typed() -> None:
    plan = TimingPlan.from_message(_through_json(TimingPlan(mode=TimingMode.HOT).to_message()))
    assert plan.mode is TimingMode.HOT


def test_job_requests_and_events_round_trip() -> None:
    requests = [messages.CompileRequest("__global__ void k(){}", "k.cu", "/tmp", options=("-O3",)),
                messages.VerifyRequest("/s.toml", sanitize="memcheck"),
                messages.BenchRequest("/s.toml", options=BenchOptions(budget_ms=50.0)
                                      .to_message())]
    for number, request in enumerate(requests):
        job_id, back = messages.decode_request(json.loads(messages.encode_request(request,
                                                                                  number)))
        assert (job_id, back) == (number, request)
    event = messages.JobEvent(messages.EventKind.PROGRESS, 3, text="compiling", fraction=0.5)
    assert messages.JobEvent.from_line(event.to_line()) == event


def test_bad_job_messages_are_refused_by_name() -> None:
    with pytest.raises(messages.MessageError, match="unknown job 'paint'"):
        messages.decode_request({"id": 1, "kind": "paint"})
    with pytest.raises(messages.MessageError, match="colour: not a field"):
        messages.decode_request({"id": 1, "kind": "verify", "spec_path": "/s", "colour": 1})
    with pytest.raises(messages.MessageError, match="job event: not JSON"):
        messages.JobEvent.from_line(b"{oops")


def test_bench_options_cross_the_pipe_unchanged() -> None:
    options = BenchOptions(mode=TimingMode.HOT, budget_ms=120.0, sweep=("n", [1, 2]), vs="b.toml")
    back = BenchOptions.from_message(_through_json(options.to_message()))
    assert (back.mode, back.budget_ms, back.sweep, str(back.vs)) == ("hot", 120.0, ("n", [1, 2]),
                                                                    "b.toml")
    with pytest.raises(ValueError, match="unknown bench options"):
        BenchOptions.from_message({"colour": "red"})
