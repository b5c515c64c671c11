"""The backend contract, inside the worker process: one device, load a module, run a launch.

A backend receives each buffer as a whole host image (guard zone, data, guard zone) and the
offset of the data inside it; it copies the image to the device, passes `base + offset` to the
kernel, runs the launch to completion and copies the whole image back in place. All checks
happen in the parent, on the images it gets back, so every backend gets the same verdicts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.engine.worker.protocol import FaultKind, FaultKindName
from app.engine.worker.timing import TimingPlan, TimingRecord


class BackendError(Exception):
    """A failure in the backend. `kind` is a protocol error kind; `device` errors are fatal."""

    def __init__(self, kind: FaultKind | FaultKindName, message: str) -> None:
        """Keep the kind beside the message."""
        super().__init__(message)
        self.kind = FaultKind(kind)


@dataclass
class BufferArg:
    """A buffer parameter: the whole image (guards included) and where the data starts."""

    image: np.ndarray[Any, np.dtype[np.uint8]]
    offset: int
    dtype: str
    # False: allocate but do not copy the image in, so the device memory stays uninitialized
    # (under compute-sanitizer initcheck a kernel that reads an output before writing it shows).
    upload: bool = True
    # protocol.BufferItem.edge: "" (guard zones), "end" or "start" (backends that can honour
    # it; the others keep the guard zones).
    edge: str = ""


@dataclass(frozen=True)
class ScalarArg:
    """A by-value parameter."""

    value: int | float
    dtype: str


@dataclass
class LaunchRequest:
    """Everything a backend needs to run one launch of one kernel."""

    symbol: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    args: list[BufferArg | ScalarArg]
    cubin: bytes | None = None
    source: str | None = None
    source_dir: str | None = None
    source_path: str | None = None
    options: list[str] = field(default_factory=list)
    # Names the loaded module: two specs may share an entry name (or one kernel be edited and
    # rebuilt), so backends key what they loaded by this, never by the symbol alone.
    module: str = ""
    # protocol.Launch.descending (backends that cannot choose the order ignore it).
    descending: bool = False

    @property
    def kernel_key(self) -> str:
        """What a backend files a loaded kernel under."""
        return f"{self.module}:{self.symbol}"


# One variant of a timing request: its launches in order, timed together as one sample. Launches
# that share a buffer hold the same BufferArg image (the worker server makes them so), which is
# how a timer knows to give them one device allocation.
LaunchSequence = list[LaunchRequest]


class Backend(ABC):
    """One device (or its emulation) inside a worker process."""

    name = "abstract"

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The device: at least name, kind ("gpu" or "emulation") and arch."""

    def prepare(self, request: LaunchRequest) -> None:
        """Load or build the kernel ahead of the launches (a request without args).

        Slow work belongs here (the CPU backend compiles with the host compiler), so that the
        parent can give it a longer time limit than a launch. Nothing to do by default."""
        return None

    @abstractmethod
    def run(self, request: LaunchRequest) -> float:
        """Run one launch to completion, images updated in place; return its seconds."""

    def time(self, variants: list[LaunchSequence], plan: TimingPlan,
             helpers: bytes | None = None, per_launch: bool = False) -> TimingRecord:
        """Time one or more variants, each a sequence of launches, interleaved
        (backends.sampler), leaving the images as each variant's last timed sample left them.
        `helpers` is a cubin of the timing helper kernels (resources/bench/helpers.cu), when the
        parent could build one; `per_launch` also times each launch inside the sample.

        Refused by default: only a backend whose clock means something for a GPU may time."""
        raise BackendError("unsupported", f"the {self.name} backend cannot time kernels: timing "
                           "needs an NVIDIA GPU (an emulator's times say nothing about one)")

    def close(self) -> None:
        """Release the device (the process is about to exit); nothing to do by default."""
        return None
