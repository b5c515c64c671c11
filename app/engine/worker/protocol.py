"""The worker protocol: versioned JSON lines over the worker's stdin and stdout.

Requests: {"v": 1, "id": N, "op": "hello" | "load" | "run" | "bench" | "shutdown", ...}
"bench" carries "variants" (each shaped like a run request, whose buffer items may name a
"first" file for the images after the first timed sample, and which may list further launches
under "then": a sequence timed as one sample), a "plan" (app.engine.worker.timing), an optional
"helpers_cubin_path" and an optional "per_launch"; its reply holds every sample
(app.engine.worker.backends.sampler), and each launch's part of it when per_launch was asked.
Replies:  {"v": 1, "id": N, "ok": true, ...} or {"v": 1, "id": N, "ok": false, "error": KIND,
           "message": TEXT, "fatal": BOOL}
Buffer contents never travel in the JSON: they are files in a private session folder, named
in the request and rewritten in place by the worker after the launch.

Every request and reply is a typed record (a msgspec Struct) that app.base.codec turns into the
JSON object of a line and back; `v`, `id` and `ok` are the line's envelope, added by `encode`,
`reply` and `failure`. Unknown keys are ignored, as they always were.
"""

from __future__ import annotations

import dataclasses
import json
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from app.base import codec
from app.base.codec import always
from app.engine.worker.timing import SamplingOutcome, StopReason, TimingPlan

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


def reply(record: msgspec.Struct) -> dict[str, Any]:
    """A success reply: `ok` and the record's fields."""
    return {"ok": True, **codec.to_object(record)}


def failure(request_id: int, kind: str, message: str, fatal: bool) -> dict[str, Any]:
    """A failure reply."""
    return {"id": request_id, "ok": False, **codec.to_object(Failure(kind, message, fatal))}


class Op(StrEnum):
    """What a request asks the worker to do."""

    HELLO = "hello"
    LOAD = "load"
    RUN = "run"
    BENCH = "bench"
    SHUTDOWN = "shutdown"


class Edge(StrEnum):
    """Where a buffer's data meets inaccessible memory, on backends that can place it so (CPU):
    GUARDS keeps the guard zones on both sides; END puts the data's end (rounded up to 16 bytes,
    which keeps the start aligned for vector loads), EXACT its very end, and START its start
    right against it, so that any access past that edge faults, even one that writes back what
    it read (which guard zones cannot see)."""

    GUARDS = ""
    END = "end"
    EXACT = "exact"
    START = "start"


EDGES = tuple(Edge)
# A grid or a block: one to three sizes.
Dims = Annotated[tuple[int, ...], msgspec.Meta(min_length=1, max_length=3)]


class Argument:
    """A launch argument: a BufferItem (it holds "buffer") or a ScalarItem ("scalar")."""

    __slots__ = ()


class BufferItem(msgspec.Struct, Argument, frozen=True, omit_defaults=True):
    """A buffer argument: the file holding its whole image (guards included), where the data
    starts, and (bench) a file for the image after the first timed launch."""

    path: str = msgspec.field(name="buffer")
    offset: int
    dtype: str
    # False: allocate without copying the image in (compute-sanitizer initcheck sees reads of
    # outputs nothing wrote).
    upload: bool = always(True)
    first: str | None = None
    edge: Edge = Edge.GUARDS


class ScalarItem(msgspec.Struct, Argument, frozen=True):
    """A by-value argument."""

    value: int | float = msgspec.field(name="scalar")
    dtype: str


codec.keyed_union(Argument, {"buffer": BufferItem, "scalar": ScalarItem})


class KernelRef(msgspec.Struct, frozen=True, omit_defaults=True):
    """Where the worker finds a kernel: the cubin (GPU) or the source (CPU emulation), and the
    module name it files the loaded kernel under. Empty fields stay off the wire."""

    symbol: str
    entry: str
    module: str = ""
    cubin_path: str | None = None
    source_path: str | None = None
    source_dir: str | None = None
    options: tuple[str, ...] = ()

    @property
    def kernel(self) -> KernelRef:
        """The kernel's fields alone (of a load or run request, which carry them inline)."""
        return KernelRef(**{name: getattr(self, name) for name in KernelRef.__struct_fields__})


class Launch(KernelRef, frozen=True, omit_defaults=True, kw_only=True):
    """One launch of a loaded kernel: its shape and its arguments, in parameter order. On the
    wire the kernel's fields come first, in the same object (a run request, a bench variant)."""

    grid: Dims = always((1,))
    block: Dims = always((1,))
    shared_bytes: int = always(0)
    args: tuple[Argument, ...] = always(())
    # The threads of each block in descending order, on backends that choose it (the CPU
    # emulation runs them one at a time between barriers): a race between threads that the
    # usual ascending order hides shows in the other one.
    descending: bool = False

    @classmethod
    def of(cls, kernel: KernelRef, grid: tuple[int, ...], block: tuple[int, ...],
           shared_bytes: int, args: tuple[Argument, ...], descending: bool = False) -> Launch:
        """A launch of `kernel`."""
        return cls(**msgspec.structs.asdict(kernel.kernel), grid=tuple(grid), block=tuple(block),
                   shared_bytes=shared_bytes, args=tuple(args), descending=descending)

    @property
    def launch(self) -> Launch:
        """The launch's fields alone (of a run request, which carries them inline)."""
        return Launch(**{name: getattr(self, name) for name in Launch.__struct_fields__})


class HelloRequest(msgspec.Struct, frozen=True, tag_field="op", tag=str(Op.HELLO)):
    """Who are you: the backend, its device, the worker's pid."""

    op: ClassVar[Op] = Op.HELLO


class ShutdownRequest(msgspec.Struct, frozen=True, tag_field="op", tag=str(Op.SHUTDOWN)):
    """Stop serving and exit."""

    op: ClassVar[Op] = Op.SHUTDOWN


class LoadRequest(KernelRef, frozen=True, tag_field="op", tag=str(Op.LOAD)):
    """Load (compile, for the CPU backend) a kernel before its first run."""

    op: ClassVar[Op] = Op.LOAD

    @classmethod
    def of(cls, kernel: KernelRef) -> LoadRequest:
        """The load request of `kernel`."""
        return cls(**msgspec.structs.asdict(kernel.kernel))


class RunRequest(Launch, frozen=True, tag_field="op", tag=str(Op.RUN)):
    """One launch; the worker rewrites every buffer file with the image the launch left."""

    op: ClassVar[Op] = Op.RUN

    @classmethod
    def of(cls, launch: Launch) -> RunRequest:  # type: ignore[override]
        """The run request of `launch`."""
        return cls(**msgspec.structs.asdict(launch.launch))


class BenchVariant(Launch, frozen=True, omit_defaults=True, kw_only=True):
    """One variant of a bench request: its first launch, inline as a v1 variant has it, then
    `then`, the launches that follow it in the same timed sample (a spec of several launches).
    The launches share device buffers by item path: every item naming one file is one buffer,
    uploaded once and passed to each launch that names it. An empty `then` stays off the wire,
    so a one-launch variant is the line it always was."""

    then: tuple[Launch, ...] = ()

    @classmethod
    def of_launches(cls, launches: tuple[Launch, ...]) -> BenchVariant:
        """The variant that runs `launches` in order (at least one)."""
        first, *rest = launches
        return cls(**msgspec.structs.asdict(first.launch), then=tuple(rest))

    @property
    def launches(self) -> tuple[Launch, ...]:
        """Every launch of the variant, in order."""
        return (self.launch, *self.then)


class BenchRequest(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="op",
                   tag=str(Op.BENCH)):
    """Time the variants interleaved under a plan; the worker writes back first and last images.
    The plan and helpers_cubin_path are always written (the path too when it is null);
    `per_launch` (also time each launch of a sequence, with an event between launches) only
    when set, so a request that does not ask for it is the line it always was."""

    variants: tuple[BenchVariant, ...]
    plan: TimingPlan = always(TimingPlan())
    helpers_cubin_path: str | None = always(None)
    per_launch: bool = False
    op: ClassVar[Op] = Op.BENCH

    def __post_init__(self) -> None:
        """A plain Launch given as a variant (as v1 callers build them) is that one launch."""
        variants = tuple(v if isinstance(v, BenchVariant) else BenchVariant.of_launches((v,))
                         for v in self.variants)
        msgspec.structs.force_setattr(self, "variants", variants)


Request = HelloRequest | ShutdownRequest | LoadRequest | RunRequest | BenchRequest


def request_from_message(data: dict[str, Any]) -> Request:
    """The typed request of a decoded line (raises ProtocolError naming what is wrong)."""
    op = data.get("op")
    if op not in Op.__members__.values():
        raise ProtocolError(f"unknown op {op!r}")
    plan = data.get("plan")
    if op == Op.BENCH and isinstance(plan, dict):
        # The plan is a dataclass, whose unknown keys msgspec ignores; a plan always refused
        # them (a misspelt budget would silently time under the default one).
        unknown = set(plan) - {f.name for f in dataclasses.fields(TimingPlan)}
        if unknown:
            raise ProtocolError(f"malformed bench request: plan: unknown fields "
                                f"{', '.join(sorted(unknown))}")
    try:
        return codec.from_data(Request, data, f"{op} request")  # type: ignore[arg-type]
    except codec.CodecError as error:
        raise ProtocolError(f"malformed {error}") from None


class HelloReply(msgspec.Struct, frozen=True):
    """The worker's backend, its device (a dict of facts: kind, name, arch, ...) and pid."""

    backend: str = ""
    device: dict[str, Any] = {}
    pid: int = 0


class RunReply(msgspec.Struct, frozen=True):
    """A launch finished: its host-measured seconds."""

    seconds: float


class Clocks(msgspec.Struct, frozen=True):
    """The SM clock at the start and end of sampling, and its lowest (None where unknown)."""

    start_mhz: float | None = None
    end_mhz: float | None = None
    min_mhz: float | None = None


class BenchReply(msgspec.Struct, frozen=True, omit_defaults=True):
    """Every sample of every variant (app.engine.worker.timing.SamplingOutcome), and what the
    backend knows of its device. `launch_ms` (only when the request asked for per-launch
    times): for each variant, for each of its launches, that launch's part of every sample."""

    samples_ms: list[list[float]]
    order: list[int]
    stop_reason: StopReason
    warmup_launches: list[int]
    clocks: Clocks
    sampling_ms: float
    facts: dict[str, Any]
    launch_ms: list[list[list[float]]] = []

    @classmethod
    def of(cls, outcome: SamplingOutcome, facts: dict[str, Any]) -> BenchReply:
        """The reply carrying `outcome`."""
        return cls(outcome.samples_ms, outcome.order, outcome.stop_reason,
                   outcome.warmup_launches,
                   Clocks(outcome.clock_start_mhz, outcome.clock_end_mhz, outcome.clock_min_mhz),
                   outcome.sampling_ms, facts, outcome.launch_ms)


class Failure(msgspec.Struct, frozen=True):
    """A request the worker could not answer; fatal ones end the worker. `error` is the
    FaultKind's value as the wire has it (`kind` reads it; an unknown one is the worker's
    internal error, and fatal unless the reply says otherwise)."""

    error: str = ""
    message: str = ""
    fatal: bool | None = None

    @property
    def kind(self) -> FaultKind:
        """The fault kind (INTERNAL for one this version does not know)."""
        known = self.error in FaultKind.__members__.values()
        return FaultKind(self.error) if known else FaultKind.INTERNAL

    @property
    def ends_worker(self) -> bool:
        """Whether the worker exits after it (as the reply says, else by its kind)."""
        if self.fatal is not None:
            return self.fatal
        return self.kind.fatal or self.error not in FaultKind.__members__.values()
