"""The worker protocol through the typed codec: lines written by the code before it (the
fixture tests/fixtures/codec/worker.jsonl) decode into the same records and encode back to the
same bytes, and a malformed line names its field."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.base import codec
from app.engine.worker import protocol
from app.engine.worker.timing import TimingMode

LINES = (Path(__file__).parents[2] / "fixtures" / "codec" / "worker.jsonl").read_bytes() \
    .splitlines(keepends=True)


def _envelope(message: dict[str, object]) -> dict[str, object]:
    """The line's envelope keys (v, id, ok), which the records do not hold."""
    return {k: message[k] for k in ("id", "ok") if k in message}


@pytest.mark.parametrize("line", [line for line in LINES if b'"op"' in line])
def test_old_requests_decode_and_encode_back_to_the_same_line(line: bytes) -> None:
    message = protocol.decode(line)
    request = protocol.request_from_message(message)
    assert request.op == message["op"]
    assert protocol.encode({**_envelope(message), **codec.to_object(request)}) == line


def test_old_requests_decode_into_the_records_they_were_made_from() -> None:
    run = protocol.request_from_message(protocol.decode(LINES[4]))
    assert isinstance(run, protocol.RunRequest)
    assert run.kernel == protocol.KernelRef("_Z3addPfS_", "add", "m1", cubin_path="/s/k.cubin",
                                            options=("-O3",))
    second = run.args[1]
    assert isinstance(second, protocol.BufferItem)
    assert (second.upload, second.first, second.edge) == (False, "/s/b.first", protocol.Edge.END)
    assert run.args[2] == protocol.ScalarItem(1024, "int32")
    bench = protocol.request_from_message(protocol.decode(LINES[6]))
    assert isinstance(bench, protocol.BenchRequest)
    assert bench.plan.mode is TimingMode.HOT and bench.variants[1].descending
    # A v1 variant is one launch: the same launch, with no launches after it.
    assert bench.variants[0].launch == run.launch and bench.variants[0].then == ()
    assert bench.variants[0].launches == (run.launch,) and not bench.per_launch


@pytest.mark.parametrize(("number", "kind"), [(8, protocol.HelloReply), (9, protocol.RunReply),
                                              (10, protocol.BenchReply)])
def test_old_replies_decode_and_encode_back(number: int, kind: type) -> None:
    message = protocol.decode(LINES[number])
    reply = codec.from_data(kind, message, "reply")
    assert protocol.encode({"id": message["id"], **protocol.reply(reply)}) == LINES[number]


def test_old_failures_keep_their_kind_and_fatality() -> None:
    device = codec.from_data(protocol.Failure, protocol.decode(LINES[11]), "failure")
    assert (device.kind, device.message, device.ends_worker) == \
        (protocol.FaultKind.DEVICE, "illegal address", True)
    assert protocol.encode(protocol.failure(7, device.kind, device.message, True)) == LINES[11]
    unknown = codec.from_data(protocol.Failure, {"ok": False, "error": "gremlins"}, "failure")
    assert unknown.kind is protocol.FaultKind.INTERNAL and unknown.ends_worker


def test_a_malformed_run_request_names_the_field() -> None:
    message = protocol.decode(LINES[4])
    message["args"][3]["scalar"] = "half"  # type: ignore[index]
    with pytest.raises(protocol.ProtocolError,
                       match=r"malformed run request: args\[3\]\.scalar: expected a number, "
                             r"got 'half'"):
        protocol.request_from_message(message)
    with pytest.raises(protocol.ProtocolError, match=r"args\[0\]\.edge: invalid enum value"):
        protocol.request_from_message({**message, "args": [{"buffer": "/b", "offset": 0,
                                                            "dtype": "f", "edge": "side"}]})
    with pytest.raises(codec.CodecError, match="run reply: seconds: missing"):
        codec.from_data(protocol.RunReply, {"ok": True}, "run reply")
