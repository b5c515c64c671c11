"""A backend for testing the worker machinery itself on any machine: its "kernels" are named
behaviours, run inside a real worker process so that hangs, crashes and exits are real."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np

from app.engine.worker.backends.base import (
    Backend,
    BackendError,
    BufferArg,
    LaunchRequest,
    LaunchSequence,
)
from app.engine.worker.backends.sampler import time_on_host
from app.engine.worker.timing import TimingPlan, TimingRecord

# lazy_copy does its work on this many launches per worker, then returns without writing:
# a warm-up launch and the first timed launch pass, the last timed launch must be caught.
LAZY_LAUNCHES = 3


class SelftestBackend(Backend):
    """Entries: copy (first buffer into the second), overrun and mutate_input (copy, then
    write past the output or into the input), chatty_copy (copy after printing to stdout),
    flood_copy (64 MiB to stderr first), lazy_copy (copy on the first LAZY_LAUNCHES launches
    only), memo_copy (copy once, then replay that answer whatever the inputs), hang, segfault,
    exit, device_error. It times with the host clock, so that timing is tested without a GPU."""

    name = "selftest"

    def __init__(self, device: int = 0) -> None:
        """Nothing to set up."""
        self.device = device
        self.lazy_launches = 0
        self.memo: np.ndarray[Any, np.dtype[np.uint8]] | None = None

    def describe(self) -> dict[str, Any]:
        """A pretend device."""
        return {"name": "selftest", "kind": "emulation", "arch": "none", "pid": os.getpid()}

    def run(self, request: LaunchRequest) -> float:
        """Do what the entry's name says."""
        start = time.perf_counter()
        behaviour = request.entry
        if behaviour == "hang":
            while True:
                time.sleep(0.05)
        elif behaviour == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif behaviour == "exit":
            os._exit(7)
        elif behaviour == "device_error":
            raise BackendError("device", "an illegal memory access was encountered (selftest)")
        elif behaviour == "copy":
            self._copy(request)
        elif behaviour == "memo_copy":
            self._memo_copy(request)
        elif behaviour == "lazy_copy":
            self.lazy_launches += 1
            if self.lazy_launches <= LAZY_LAUNCHES:
                self._copy(request)
        elif behaviour == "overrun":
            self._copy(request)
            target = [a for a in request.args if isinstance(a, BufferArg)][1]
            target.image[target.image.size - target.offset] ^= 0x01  # one byte past the end
        elif behaviour == "mutate_input":
            self._copy(request)
            source = [a for a in request.args if isinstance(a, BufferArg)][0]
            source.image[source.offset] ^= 0x40
        elif behaviour == "flood_copy":  # a printf in a long loop: 64 MiB of output
            line = b"x" * 1023 + b"\n"
            for _ in range(64 * 1024):
                os.write(2, line)
            self._copy(request)
        elif behaviour == "chatty_copy":
            # Like a kernel's printf: output on fd 1 must not corrupt the protocol.
            os.write(1, b"printf from the kernel\n{not json\n")
            print("and from Python", flush=True)
            self._copy(request)
        else:
            raise BackendError("load", f"selftest has no kernel {behaviour!r}")
        return time.perf_counter() - start

    def time(self, variants: list[LaunchSequence], plan: TimingPlan,
             helpers: bytes | None = None, per_launch: bool = False) -> TimingRecord:
        """Time behaviours with the host clock (tests of the timing machinery only)."""
        return time_on_host(self.run, variants, plan, per_launch)

    def _memo_copy(self, request: LaunchRequest) -> None:
        """Copy on the first launch and remember the output; replay it ever after."""
        target = [a for a in request.args if isinstance(a, BufferArg)][1]
        if self.memo is None:
            self._copy(request)
            self.memo = target.image[target.offset:target.image.size - target.offset].copy()
        else:
            target.image[target.offset:target.offset + self.memo.size] = self.memo

    @staticmethod
    def _copy(request: LaunchRequest) -> None:
        """Copy the data of the first buffer over the data of the second."""
        buffers = [a for a in request.args if isinstance(a, BufferArg)]
        source, target = buffers[0], buffers[1]
        size = min(source.image.size - 2 * source.offset, target.image.size - 2 * target.offset)
        target.image[target.offset:target.offset + size] = \
            source.image[source.offset:source.offset + size]
