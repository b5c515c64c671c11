"""The worker protocol: versioned JSON lines over the worker's stdin and stdout.

Requests: {"v": 1, "id": N, "op": "hello" | "load" | "run" | "bench" | "shutdown", ...}
"bench" carries "variants" (each shaped like a run request, whose buffer items may name a
"first" file for the images after the first timed launch), a "plan" (app.engine.worker.timing) and
an optional "helpers_cubin_path"; its reply holds every sample (app.engine.worker.backends.sampler).
Replies:  {"v": 1, "id": N, "ok": true, ...} or {"v": 1, "id": N, "ok": false, "error": KIND,
           "message": TEXT, "fatal": BOOL}
Buffer contents never travel in the JSON: they are files in a private session folder, named
in the request and rewritten in place by the worker after the launch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from app.engine.worker.timing import PlanError, SamplingOutcome, TimingPlan

VERSION = 1


class FaultKind(StrEnum):
    """Errors a worker can report. DEVICE and INTERNAL are fatal: the worker exits after
    replying, because a CUDA context that saw a fault is poisoned (seen on an H200: every later
    call fails)."""

    BAD_REQUEST = "bad_request"
    LOAD = "load"
    DEVICE = "device"
    UNSUPPORTED = "unsupported"
    INTERNAL = "internal"

    @property
    def fatal(self) -> bool:
        """Whether the worker must exit after reporting it."""
        return self in (FaultKind.DEVICE, FaultKind.INTERNAL)


# The kinds as literals, so that `BackendError("devise", ...)` is a type error.
FaultKindName = Literal["bad_request", "load", "device", "unsupported", "internal"]


class ProtocolError(ValueError):
    """A line that is not a valid message of this protocol version."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line."""
    return (json.dumps({"v": VERSION, **message}, separators=(",", ":")) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """One JSON line as a message; refuses other versions and non-objects."""
    try:
        message = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ProtocolError(f"not a JSON line: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    if message.get("v") != VERSION:
        raise ProtocolError(f"protocol version {message.get('v')!r}, expected {VERSION}")
    return message


def failure(request_id: int, kind: str, message: str, fatal: bool) -> dict[str, Any]:
    """A failure reply."""
    return {"id": request_id, "ok": False, "error": kind, "message": message, "fatal": fatal}


class Op(StrEnum):
    """What a request asks the worker to do."""

    HELLO = "hello"
    LOAD = "load"
    RUN = "run"
    BENCH = "bench"
    SHUTDOWN = "shutdown"


def _dims(value: Any) -> tuple[int, ...]:
    """A grid or block from JSON: one to three positive ints."""
    items = tuple(int(v) for v in value)
    if not 1 <= len(items) <= 3:
        raise ProtocolError(f"a grid or block has one to three sizes, not {len(items)}")
    return items


@dataclass(frozen=True)
class BufferItem:
    """A buffer argument: the file holding its whole image (guards included), where the data
    starts, and (bench) a file for the image after the first timed launch."""

    path: str
    offset: int
    dtype: str
    # False: allocate without copying the image in (compute-sanitizer initcheck sees reads of
    # outputs nothing wrote).
    upload: bool = True
    first: str | None = None
    # Where the data meets inaccessible memory, on backends that can place it so (CPU):
    # "" keeps the guard zones on both sides; "end" puts the data's end (rounded up to 16 bytes,
    # which keeps the start aligned for vector loads), "exact" its very end, and "start" its
    # start right against it, so that any access past that edge faults, even one that writes
    # back what it read (which guard zones cannot see).
    edge: str = ""

    def to_message(self) -> dict[str, Any]:
        """JSON for a request's `args`."""
        data: dict[str, Any] = {"buffer": self.path, "offset": self.offset, "dtype": self.dtype,
                                "upload": self.upload}
        if self.first:
            data["first"] = self.first
        if self.edge:
            data["edge"] = self.edge
        return data


EDGES = ("", "end", "exact", "start")


@dataclass(frozen=True)
class ScalarItem:
    """A by-value argument."""

    value: int | float
    dtype: str

    def to_message(self) -> dict[str, Any]:
        """JSON for a request's `args`."""
        return {"scalar": self.value, "dtype": self.dtype}


def item_from_message(data: dict[str, Any]) -> BufferItem | ScalarItem:
    """One argument of a request."""
    if "buffer" in data:
        edge = str(data.get("edge") or "")
        if edge not in EDGES:
            raise ValueError(f"unknown buffer edge {edge!r}")
        return BufferItem(str(data["buffer"]), int(data["offset"]), str(data["dtype"]),
                          bool(data.get("upload", True)), data.get("first"), edge)
    return ScalarItem(data["scalar"], str(data["dtype"]))


@dataclass(frozen=True)
class KernelRef:
    """Where the worker finds a kernel: the cubin (GPU) or the source (CPU emulation), and the
    module name it files the loaded kernel under."""

    symbol: str
    entry: str
    module: str = ""
    cubin_path: str | None = None
    source_path: str | None = None
    source_dir: str | None = None
    options: tuple[str, ...] = ()

    def to_message(self) -> dict[str, Any]:
        """The kernel's fields of a load, run or bench request (empty ones left out)."""
        data: dict[str, Any] = {"symbol": self.symbol, "entry": self.entry}
        if self.module:
            data["module"] = self.module
        for name in ("cubin_path", "source_path", "source_dir"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.options:
            data["options"] = list(self.options)
        return data

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> KernelRef:
        """The kernel named by a request."""
        return cls(str(data["symbol"]), str(data["entry"]), str(data.get("module", "")),
                   data.get("cubin_path"), data.get("source_path"), data.get("source_dir"),
                   tuple(str(o) for o in data.get("options", ())))


@dataclass(frozen=True)
class Launch:
    """One launch of a loaded kernel: its shape and its arguments, in parameter order."""

    kernel: KernelRef
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int
    args: tuple[BufferItem | ScalarItem, ...]
    # The threads of each block in descending order, on backends that choose it (the CPU
    # emulation runs them one at a time between barriers): a race between threads that the
    # usual ascending order hides shows in the other one.
    descending: bool = False

    def to_message(self) -> dict[str, Any]:
        """The fields of a run request, or of one variant of a bench request."""
        data = {**self.kernel.to_message(), "grid": list(self.grid), "block": list(self.block),
                "shared_bytes": self.shared_bytes,
                "args": [item.to_message() for item in self.args]}
        if self.descending:
            data["descending"] = True
        return data

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> Launch:
        """A launch from a run request or a bench variant."""
        return cls(KernelRef.from_message(data), _dims(data.get("grid", [1])),
                   _dims(data.get("block", [1])), int(data.get("shared_bytes", 0)),
                   tuple(item_from_message(dict(i)) for i in data.get("args", [])),
                   bool(data.get("descending", False)))


@dataclass(frozen=True)
class HelloRequest:
    """Who are you: the backend, its device, the worker's pid."""

    op: Op = field(default=Op.HELLO, init=False)

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"op": str(self.op)}


@dataclass(frozen=True)
class ShutdownRequest:
    """Stop serving and exit."""

    op: Op = field(default=Op.SHUTDOWN, init=False)

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"op": str(self.op)}


@dataclass(frozen=True)
class LoadRequest:
    """Load (compile, for the CPU backend) a kernel before its first run."""

    kernel: KernelRef
    op: Op = field(default=Op.LOAD, init=False)

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"op": str(self.op), **self.kernel.to_message()}


@dataclass(frozen=True)
class RunRequest:
    """One launch; the worker rewrites every buffer file with the image the launch left."""

    launch: Launch
    op: Op = field(default=Op.RUN, init=False)

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"op": str(self.op), **self.launch.to_message()}


@dataclass(frozen=True)
class BenchRequest:
    """Time the variants interleaved under a plan; the worker writes back first and last images."""

    variants: tuple[Launch, ...]
    plan: TimingPlan
    helpers_cubin_path: str | None = None
    op: Op = field(default=Op.BENCH, init=False)

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"op": str(self.op), "variants": [v.to_message() for v in self.variants],
                "plan": self.plan.to_message(), "helpers_cubin_path": self.helpers_cubin_path}


Request = HelloRequest | ShutdownRequest | LoadRequest | RunRequest | BenchRequest


def request_from_message(data: dict[str, Any]) -> Request:
    """The typed request of a decoded line (raises ProtocolError naming what is wrong)."""
    op = data.get("op")
    try:
        if op == Op.HELLO:
            return HelloRequest()
        if op == Op.SHUTDOWN:
            return ShutdownRequest()
        if op == Op.LOAD:
            return LoadRequest(KernelRef.from_message(data))
        if op == Op.RUN:
            return RunRequest(Launch.from_message(data))
        if op == Op.BENCH:
            return BenchRequest(tuple(Launch.from_message(dict(v)) for v in data["variants"]),
                                TimingPlan.from_message(dict(data.get("plan", {}))),
                                data.get("helpers_cubin_path"))
    except (KeyError, TypeError, ValueError, PlanError) as error:
        raise ProtocolError(f"malformed {op} request: {error}") from None
    raise ProtocolError(f"unknown op {op!r}")


@dataclass(frozen=True)
class HelloReply:
    """The worker's backend, its device (a dict of facts: kind, name, arch, ...) and pid."""

    backend: str
    device: dict[str, Any]
    pid: int

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"ok": True, "backend": self.backend, "device": self.device, "pid": self.pid}

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> HelloReply:
        """The reply to hello."""
        return cls(str(data.get("backend", "")), dict(data.get("device", {})),
                   int(data.get("pid", 0)))


@dataclass(frozen=True)
class RunReply:
    """A launch finished: its host-measured seconds."""

    seconds: float

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"ok": True, "seconds": self.seconds}

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> RunReply:
        """The reply to run."""
        return cls(float(data["seconds"]))


@dataclass(frozen=True)
class BenchReply:
    """Every sample of every variant, and what the backend knows of its device."""

    outcome: SamplingOutcome
    facts: dict[str, Any]

    def to_message(self) -> dict[str, Any]:
        """JSON for the pipe."""
        return {"ok": True, **self.outcome.to_reply(), "facts": self.facts}


@dataclass(frozen=True)
class Failure:
    """A request the worker could not answer; fatal ones end the worker."""

    kind: FaultKind
    message: str
    fatal: bool

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> Failure:
        """A failure reply (an unknown kind is the worker's internal error)."""
        kind = str(data.get("error"))
        known = kind in FaultKind.__members__.values()
        return cls(FaultKind(kind) if known else FaultKind.INTERNAL,
                   str(data.get("message", "")), bool(data.get("fatal", not known)))
