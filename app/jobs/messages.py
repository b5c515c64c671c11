"""Every message between the GUI and its job process (`python -m app.jobs.server`), typed.

A request is one JSON line on the child's stdin, {"id": N, "kind": KIND, ...fields}; the child
answers with event lines on its stdout, each carrying the request's id: progress (text and an
optional fraction), then one result (the JSON of a compile result, a Verdict or a BenchReport)
or one error (message and hint). "ready" says the child's imports are done. Both sides build
and parse these lines only here, as typed records through app.base.codec: a request refuses
keys it does not have, an event ignores them.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, ClassVar

import msgspec

from app.base import codec, settings


class JobKind(StrEnum):
    """What a request asks for."""

    COMPILE = "compile"
    VERIFY = "verify"
    BENCH = "bench"


class EventKind(StrEnum):
    """What an event line reports."""

    READY = "ready"
    PROGRESS = "progress"
    RESULT = "result"
    ERROR = "error"


class MessageError(ValueError):
    """A line that is not a valid job message; the text says which field."""


class CompileRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind",
                     tag=str(JobKind.COMPILE)):
    """Compile the editor's text (a snapshot, never the live buffer); SASS and occupancy per
    kernel, occupancy for `block_size` when the spec names one."""

    kind: ClassVar[JobKind] = JobKind.COMPILE
    source: str
    filename: str
    folder: str
    arch: str | None = None
    options: tuple[str, ...] = ()
    block_size: int | None = None
    dynamic_shared: int = 0
    entries: tuple[str, ...] = ()  # the spec's entries: template ones are instantiated


class VerifyRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind",
                    tag=str(JobKind.VERIFY)):
    """Verify a spec file with the given backend, time limit and sanitizer."""

    kind: ClassVar[JobKind] = JobKind.VERIFY
    spec_path: str
    backend: str = "auto"
    sanitize: str | None = None
    timeout: float = settings.TIME_LIMIT_S
    arch: str | None = None


class BenchRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind",
                   tag=str(JobKind.BENCH)):
    """Time a spec file; `options` is BenchOptions.to_message() (the fields the GUI sets)."""

    kind: ClassVar[JobKind] = JobKind.BENCH
    spec_path: str
    backend: str = "auto"
    options: dict[str, Any] = {}


JobRequest = CompileRequest | VerifyRequest | BenchRequest


# Fields added after the request lines were first kept (tests/fixtures/codec/jobs.jsonl): written
# only when not empty, so a request that does not use one keeps the shape it always had.
LATER_FIELDS = ("entries",)


def encode_request(request: JobRequest, job_id: int) -> str:
    """A request as one JSON line (every field written, defaults too, but LATER_FIELDS')."""
    data = codec.to_object(request)
    for name in LATER_FIELDS:
        if name in data and not data[name]:
            del data[name]
    return json.dumps({"id": job_id, **data}) + "\n"


def decode_request(data: dict[str, Any]) -> tuple[int | None, JobRequest]:
    """The id and the typed request of a parsed request line (raises MessageError)."""
    body = dict(data)
    job_id, kind = body.pop("id", None), body.get("kind")
    if kind not in JobKind.__members__.values():
        raise MessageError(f"unknown job {kind!r}")
    try:
        request: JobRequest = codec.from_data(JobRequest, body,  # type: ignore[arg-type]
                                              f"{kind} request")
    except codec.CodecError as error:
        raise MessageError(f"malformed {error}") from None
    return job_id, request


# The fields each kind of event line carries, after "event" and "id".
_EVENT_FIELDS = {EventKind.READY: ("pid",), EventKind.PROGRESS: ("text", "fraction"),
                 EventKind.RESULT: ("data",), EventKind.ERROR: ("message", "hint")}


class JobEvent(msgspec.Struct, frozen=True):
    """One event line from the job process."""

    event: EventKind
    id: int | None = None
    text: str = ""
    fraction: float | None = None
    data: dict[str, Any] | None = None
    message: str = ""
    hint: str = ""
    pid: int | None = None

    def to_line(self) -> str:
        """The event as one JSON line (only the fields its kind uses)."""
        every = codec.to_object(self)
        names = ("event", "id", *_EVENT_FIELDS[self.event])
        return json.dumps({name: every[name] for name in names}) + "\n"

    @classmethod
    def from_line(cls, line: bytes | str) -> JobEvent:
        """An event from a raw line (raises MessageError for anything else)."""
        try:
            return codec.loads(cls, line, "job event")
        except codec.CodecError as error:
            raise MessageError(str(error)) from None
