"""Timing on a CUDA device with pycuda, inside the worker (the Timer of backends.sampler).

A variant is a sequence of launches (one, for a spec of one launch) on buffers it shares: each
distinct buffer image is uploaded once per variant, and every launch naming it gets the same
device pointer. Per sample, all on the default stream:
  1. every buffer image of the variant is restored from a pristine device copy (so every sample
     does the same work and the last one can be checked against the reference);
  2. cold mode: L2 is flushed by writing a buffer of at least twice the L2 size, then (with the
     helper kernels) reading a second such buffer, which leaves L2 clean;
  3. with the helper kernels, a spin kernel keeps the GPU busy while the host queues the start
     event and the launches, so the host's launch overhead is never timed;
  4. start event, the variant's launches in order, end event; wait for the end event; one event
     pair per sample, so a sample is the whole sequence.
Per-launch timing (asked for) records one more event between consecutive launches of the same
sample, and each launch's time is the interval between the events around it: the sequence's
time is still its outer pair's, now with the event records between launches inside it (a
microsecond or so each; bench --per-launch and a run without it tell how much on a device).
Hot mode skips step 2. Before every sample, in both modes, lines a kernel marked persisting
in L2 (an access policy window) are reset to normal, so no kernel keeps its data in L2 across
the flush. Nothing but the launches (and, per launch, events) lies between the two events.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pycuda.driver as cuda

from app.engine.worker.backends.base import (
    BackendError,
    BufferArg,
    LaunchRequest,
    LaunchSequence,
    ScalarArg,
)
from app.engine.worker.backends.sampler import distinct_images, run_sampling
from app.engine.worker.clocks import ClockReader
from app.engine.worker.timing import TimingPlan, TimingRecord

MIB = 1 << 20
# The spin covers the host's enqueue time with a wide margin, within these bounds.
SPIN_FLOOR_NS = 20_000
SPIN_CEILING_NS = 1_000_000
SPIN_MARGIN = 3.0
READ_BLOCK = 256
READ_BLOCKS_PER_SM = 4


def persisting_l2_reset() -> Callable[[], int] | None:
    """The driver's cuCtxResetPersistingL2Cache (CUDA 11 and later), or None where the driver
    library or the entry point is missing."""
    try:
        entry = ctypes.CDLL("libcuda.so.1").cuCtxResetPersistingL2Cache
    except (OSError, AttributeError):
        return None
    entry.restype = ctypes.c_int
    entry.argtypes = []
    return entry


@dataclass
class _Image:
    """One buffer argument on the device: the launch's copy and a pristine copy."""

    arg: BufferArg
    work: Any
    pristine: Any

    @property
    def nbytes(self) -> int:
        """Bytes of the whole image, guard zones included."""
        return int(self.arg.image.nbytes)


@dataclass
class _Launch:
    """One launch ready to queue: its request, function and parameters."""

    request: LaunchRequest
    function: Any
    params: list[Any]


@dataclass
class _Variant:
    """A sequence of launches ready to queue, and the device images they share."""

    launches: list[_Launch] = field(default_factory=list)
    images: dict[int, _Image] = field(default_factory=dict)  # by id() of the host image


def _attribute(device: Any, name: str) -> int | None:
    """A device attribute by name, None when this pycuda or driver lacks it."""
    try:
        return int(device.get_attribute(getattr(cuda.device_attribute, name)))
    except (AttributeError, cuda.Error):
        return None


def _pci_bus_id(device: Any) -> str:
    """The device's PCI bus id, as NVML and nvidia-smi accept it."""
    try:
        return str(device.pci_bus_id())
    except (AttributeError, cuda.Error):
        domain = _attribute(device, "PCI_DOMAIN_ID") or 0
        bus, slot = _attribute(device, "PCI_BUS_ID"), _attribute(device, "PCI_DEVICE_ID")
        return f"{domain:08X}:{bus:02X}:{slot:02X}.0" if bus is not None and slot is not None \
            else ""


def flush_size(l2_bytes: int | None) -> int:
    """Bytes of the L2 flush buffer: twice the L2 (64 MiB when unknown), whole MiB."""
    twice = 2 * l2_bytes if l2_bytes else 64 * MIB
    return -(-twice // MIB) * MIB


class PycudaTimer:
    """Timer over a PycudaBackend's context; stage() first, close() always."""

    def __init__(self, backend: Any, plan: TimingPlan) -> None:
        """Nothing on the device yet."""
        self.backend = backend
        self.plan = plan
        self.allocations: list[Any] = []
        self.variants: list[_Variant] = []
        self.first: list[list[np.ndarray[Any, Any] | None]] = []
        self.per_launch = False
        self.marks: list[Any] = []
        self.spin: Any = None
        self.read_flush: Any = None
        self.helpers_note = "no helper kernels were sent"
        self.enqueue_ns: list[float] = []
        self.spin_ns: int | None = None
        self.flushes = 0
        self.flush_buffer: Any = None
        self.read_buffer: Any = None
        self.sink: Any = None
        self.start: Any = None
        self.end: Any = None
        self.sm_count = _attribute(backend.device, "MULTIPROCESSOR_COUNT") or 1
        self.l2_bytes = _attribute(backend.device, "L2_CACHE_SIZE")
        self.flush_bytes = flush_size(self.l2_bytes) if plan.mode == "cold" else 0
        # Only devices with persisting L2 (compute 8.0 and later) accept the reset.
        self.reset_l2 = persisting_l2_reset() \
            if _attribute(backend.device, "MAX_PERSISTING_L2_CACHE_SIZE") else None
        self.l2_resets = 0
        self.clock = ClockReader(str(backend.describe().get("uuid", "")),
                                 _pci_bus_id(backend.device))

    def _alloc(self, nbytes: int) -> Any:
        """A device allocation freed by close()."""
        allocation = cuda.mem_alloc(max(1, nbytes))
        self.allocations.append(allocation)
        return allocation

    def stage(self, variants: list[LaunchSequence], helpers: bytes | None,
              per_launch: bool = False) -> None:
        """Load the kernels and helpers, upload every distinct image twice, set up the flush
        buffers and the events (one between consecutive launches, for per-launch times)."""
        self.variants = [self._variant(sequence) for sequence in variants]
        self.first = [[None] * sum(len(r.args) for r in sequence) for sequence in variants]
        self.per_launch = per_launch
        self._load_helpers(helpers)
        if self.flush_bytes:
            self.flush_buffer = self._alloc(self.flush_bytes)
            if self.read_flush is not None:
                self.read_buffer = self._alloc(self.flush_bytes)
                cuda.memset_d8(self.read_buffer, 0, self.flush_bytes)
                self.sink = self._alloc(16)
        self.start, self.end = cuda.Event(), cuda.Event()
        longest = max((len(v.launches) for v in self.variants), default=1)
        self.marks = [cuda.Event() for _ in range(longest - 1)] if per_launch else []
        self.backend.context.synchronize()

    def _variant(self, sequence: LaunchSequence) -> _Variant:
        """The launches' functions and parameters, and their device images: one allocation
        (and one pristine copy) per distinct host image, whichever launches name it."""
        variant = _Variant()
        for arg in distinct_images(sequence):
            image = _Image(arg, self._alloc(arg.image.nbytes), self._alloc(arg.image.nbytes))
            if image.nbytes:
                cuda.memcpy_htod(image.work, arg.image)
                cuda.memcpy_dtod(image.pristine, image.work, image.nbytes)
            variant.images[id(arg.image)] = image
        for request in sequence:
            params = [self._param(variant, item) for item in request.args]
            variant.launches.append(_Launch(request, self.backend._function(request), params))
        return variant

    def _param(self, variant: _Variant, item: BufferArg | ScalarArg) -> Any:
        """A launch parameter: a scalar's bytes, or the data's address in the variant's copy of
        its buffer (the same for every launch naming that buffer)."""
        if isinstance(item, ScalarArg):
            return self.backend._scalar(item)
        return np.uintp(int(variant.images[id(item.image)].work) + item.offset)

    def _load_helpers(self, cubin: bytes | None) -> None:
        """The spin and read-flush kernels; timing goes on without them if they fail."""
        if not cubin:
            return
        try:
            module = cuda.module_from_buffer(cubin)
            self.spin = module.get_function("ks_spin")
            self.read_flush = module.get_function("ks_read_flush")
            self.helpers_note = "loaded"
        except cuda.Error as error:
            self.spin = self.read_flush = None
            self.helpers_note = f"could not load the helper kernels: {error}"

    def _launch(self, variant: int, marked: bool = False) -> None:
        """Queue the variant's launches in order; `marked`: an event between each two."""
        launches = self.variants[variant].launches
        for index, chosen in enumerate(launches):
            if marked and index:
                self.marks[index - 1].record()
            request = chosen.request
            chosen.function(*chosen.params, block=request.block, grid=request.grid,
                            shared=request.shared_bytes)

    def launch(self, variant: int) -> None:
        """One untimed launch (warm-up), noting how long the host takes to queue it."""
        started = time.perf_counter_ns()
        self._launch(variant)
        self.enqueue_ns.append(float(time.perf_counter_ns() - started))
        self.backend.context.synchronize()

    def _spin_time(self) -> int:
        """How long the spin kernel runs: a margin over the host's usual enqueue time."""
        if self.spin_ns is None:
            typical = self.enqueue_ns[1:] or self.enqueue_ns or [0.0]
            wanted = SPIN_MARGIN * float(np.percentile(typical, 90)) + SPIN_FLOOR_NS
            self.spin_ns = int(min(max(wanted, SPIN_FLOOR_NS), SPIN_CEILING_NS))
        return self.spin_ns

    def prepare_sample(self, variant: int) -> None:
        """Restore the images, flush L2 (cold mode), start the spin."""
        for image in self.variants[variant].images.values():
            if image.nbytes:
                cuda.memcpy_dtod(image.work, image.pristine, image.nbytes)
        if self.reset_l2 is not None and self.reset_l2() == 0:
            self.l2_resets += 1
        if self.flush_bytes:
            self._flush()
        if self.spin is not None:
            self.spin(np.uint64(self._spin_time()), block=(1, 1, 1), grid=(1, 1, 1))

    def _flush(self) -> None:
        """Write the flush buffer (a new byte each time), then read the clean buffer."""
        cuda.memset_d8(self.flush_buffer, self.flushes & 0xFF, self.flush_bytes)
        self.flushes += 1
        if self.read_flush is not None:
            self.read_flush(np.uintp(int(self.read_buffer)), np.uint64(self.flush_bytes // 16),
                            np.uintp(int(self.sink)), block=(READ_BLOCK, 1, 1),
                            grid=(self.sm_count * READ_BLOCKS_PER_SM, 1, 1))

    def timed_launch(self, variant: int) -> float:
        """The variant's launches between two events; milliseconds."""
        self.start.record()
        self._launch(variant, marked=self.per_launch)
        self.end.record()
        self.end.synchronize()
        return float(self.end.time_since(self.start))

    def launch_split(self, variant: int) -> list[float]:
        """Each launch's milliseconds in the sample just taken: between the events around it."""
        count = len(self.variants[variant].launches)
        events = [self.start, *self.marks[:count - 1], self.end]
        return [float(b.time_since(a)) for a, b in zip(events, events[1:], strict=False)]

    def snapshot(self, variant: int) -> None:
        """Copy the variant's images back to the host as the sample left them, listed for each
        argument of each launch (a shared buffer is copied once)."""
        chosen = self.variants[variant]
        copies: dict[int, np.ndarray[Any, Any]] = {}
        for key, image in chosen.images.items():
            copies[key] = np.empty_like(image.arg.image)
            if image.nbytes:
                cuda.memcpy_dtoh(copies[key], image.work)
        self.first[variant] = [copies[id(arg.image)] if isinstance(arg, BufferArg) else None
                               for launch in chosen.launches for arg in launch.request.args]

    def clock_mhz(self, during: bool) -> float | None:
        """The SM clock; while sampling only through NVML (nvidia-smi is too slow)."""
        if during and not self.clock.cheap:
            return None
        return self.clock.sm_mhz()

    def download(self) -> None:
        """Copy every image back over the request's host image (the last launch's state)."""
        for variant in self.variants:
            for image in variant.images.values():
                if image.nbytes:
                    cuda.memcpy_dtoh(image.arg.image, image.work)

    def facts(self) -> dict[str, Any]:
        """How the timing was done, and the device facts the parent's roofline needs."""
        device = self.backend.device
        flush = "none (hot)" if not self.flush_bytes else (
            "write then read" if self.read_flush is not None else "write")
        return {
            "timer": self._timer_words(), "mode": self.plan.mode,
            "l2_bytes": self.l2_bytes, "flush": flush, "flush_bytes": self.flush_bytes,
            "helpers": self.helpers_note,
            "persisting_l2_resets": self.l2_resets if self.reset_l2 is not None else None,
            "spin_us": self.spin_ns / 1000.0 if self.spin is not None and self.spin_ns else None,
            "sm_count": self.sm_count,
            "clock_khz": _attribute(device, "CLOCK_RATE"),
            "memory_clock_khz": _attribute(device, "MEMORY_CLOCK_RATE"),
            "bus_width_bits": _attribute(device, "GLOBAL_MEMORY_BUS_WIDTH"),
            "cuda_driver_version": cuda.get_driver_version(),
            "pycuda_cuda_version": ".".join(str(v) for v in cuda.get_version()),
            "pci_bus_id": _pci_bus_id(device), "held_down_by": self.clock.held_down_by(),
            **self.clock.facts(),
        }

    def _timer_words(self) -> str:
        """How a sample was timed, in words (a sequence's and per launch, when they apply)."""
        if self.per_launch:
            return ("CUDA events, one pair per sample around its launches, and one event "
                    "between consecutive launches for each launch's time")
        if any(len(v.launches) > 1 for v in self.variants):
            return "CUDA events, one pair per sample around all of its launches"
        return "CUDA events, one pair per sample"

    def close(self) -> None:
        """Free every allocation and release NVML."""
        for allocation in self.allocations:
            try:
                allocation.free()
            except cuda.Error:
                pass
        self.allocations.clear()
        self.clock.close()


def time_launches(backend: Any, variants: list[LaunchSequence], plan: TimingPlan,
                  helpers: bytes | None, per_launch: bool = False) -> TimingRecord:
    """Time the variants interleaved; their host images end as the last samples left them."""
    timer = PycudaTimer(backend, plan)
    try:
        timer.stage(variants, helpers, per_launch)
        outcome = run_sampling(timer, len(variants), plan, per_launch=per_launch)
        timer.download()
        return TimingRecord(outcome, timer.first, timer.facts())
    except cuda.Error as error:
        raise BackendError("device", f"CUDA error while timing: {error}") from None
    finally:
        timer.close()
