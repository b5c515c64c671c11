"""Every message between the GUI and its job process (`python -m app.jobs.server`), typed.

A request is one JSON line on the child's stdin, {"id": N, "kind": KIND, ...fields}; the child
answers with event lines on its stdout, each carrying the request's id: progress (text and an
optional fraction), then one result (the JSON of a compile result, a Verdict or a BenchReport)
or one error (message and hint). "ready" says the child's imports are done. Both sides build
and parse these lines only here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from app.base import settings


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


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The fields of a dataclass found in `data` (unknown keys are refused)."""
    names = {f.name for f in fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise MessageError(f"unknown fields for {cls.__name__}: {', '.join(sorted(unknown))}")
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class CompileRequest:
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


@dataclass(frozen=True)
class VerifyRequest:
    """Verify a spec file with the given backend, time limit and sanitizer."""

    kind: ClassVar[JobKind] = JobKind.VERIFY
    spec_path: str
    backend: str = "auto"
    sanitize: str | None = None
    timeout: float = settings.TIME_LIMIT_S
    arch: str | None = None


@dataclass(frozen=True)
class BenchRequest:
    """Time a spec file; `options` is BenchOptions.to_message() (the fields the GUI sets)."""

    kind: ClassVar[JobKind] = JobKind.BENCH
    spec_path: str
    backend: str = "auto"
    options: dict[str, Any] = field(default_factory=dict)


JobRequest = CompileRequest | VerifyRequest | BenchRequest
_REQUESTS: dict[str, type[CompileRequest] | type[VerifyRequest] | type[BenchRequest]] = {
    JobKind.COMPILE: CompileRequest, JobKind.VERIFY: VerifyRequest, JobKind.BENCH: BenchRequest}


def encode_request(request: JobRequest, job_id: int) -> str:
    """A request as one JSON line."""
    body = asdict(request)
    if isinstance(request, CompileRequest):
        body["options"] = list(request.options)
    return json.dumps({"id": job_id, "kind": str(request.kind), **body}) + "\n"


def decode_request(data: dict[str, Any]) -> tuple[int | None, JobRequest]:
    """The id and the typed request of a parsed request line (raises MessageError)."""
    body = dict(data)
    job_id, kind = body.pop("id", None), body.pop("kind", None)
    cls = _REQUESTS.get(str(kind))
    if cls is None:
        raise MessageError(f"unknown job {kind!r}")
    if cls is CompileRequest and "options" in body:
        body["options"] = tuple(body["options"] or ())
    try:
        return job_id, cls(**_known(cls, body))
    except TypeError as error:
        raise MessageError(f"malformed {kind} request: {error}") from None


@dataclass(frozen=True)
class JobEvent:
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
        body: dict[str, Any] = {"event": str(self.event), "id": self.id}
        body.update(_EVENT_FIELDS[self.event](self))
        return json.dumps(body) + "\n"

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> JobEvent:
        """An event from a parsed line (raises MessageError)."""
        try:
            kind = EventKind(str(data.get("event")))
        except ValueError:
            raise MessageError(f"unknown event {data.get('event')!r}") from None
        fraction = data.get("fraction")
        result = data.get("data")
        return cls(kind, data.get("id"), str(data.get("text", "")),
                   float(fraction) if isinstance(fraction, int | float) else None,
                   result if isinstance(result, dict) else None,
                   str(data.get("message", "")), str(data.get("hint", "")), data.get("pid"))

    @classmethod
    def from_line(cls, line: bytes | str) -> JobEvent:
        """An event from a raw line (raises MessageError for anything else)."""
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise MessageError(f"not a JSON line: {error}") from None
        if not isinstance(data, dict):
            raise MessageError("an event must be a JSON object")
        return cls.from_message(data)


_EVENT_FIELDS = {
    EventKind.READY: lambda e: {"pid": e.pid},
    EventKind.PROGRESS: lambda e: {"text": e.text, "fraction": e.fraction},
    EventKind.RESULT: lambda e: {"data": e.data},
    EventKind.ERROR: lambda e: {"message": e.message, "hint": e.hint},
}
