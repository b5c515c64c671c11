"""The sampling loop that runs inside a worker, over any backend that can time one launch.

A backend provides a `Timer` (restore outputs, flush caches, one timed launch, keep a snapshot);
this loop decides the warm-up, the interleaved order and when to stop (app.engine.worker.timing), so
every backend follows the same method and the loop is tested without a GPU.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from app.engine.worker.backends.base import BufferArg, LaunchRequest
from app.engine.worker.timing import SamplingOutcome, TimingPlan, TimingRecord, stop_reason

# How often to read the SM clock while sampling, when reading it is cheap (NVML).
CLOCK_PERIOD_MS = 100.0


class Timer(Protocol):
    """What a backend does for the sampling loop; variants are numbered from 0."""

    def launch(self, variant: int) -> None:
        """One untimed launch, run to completion (warm-up)."""

    def prepare_sample(self, variant: int) -> None:
        """Before a timed launch: restore outputs, flush caches in cold mode."""

    def timed_launch(self, variant: int) -> float:
        """One launch timed on the device, in milliseconds."""

    def snapshot(self, variant: int) -> None:
        """Keep a copy of the variant's outputs as the launch just timed left them."""

    def clock_mhz(self, during: bool) -> float | None:
        """The SM clock now; while sampling (`during`) only if reading it is cheap."""


def warm_up(timer: Timer, variant: int, plan: TimingPlan,
            clock: Callable[[], float] = time.perf_counter) -> int:
    """Untimed launches until `warmup_ms` has passed (at least one); returns how many."""
    started = clock()
    launches = 0
    while launches < plan.max_warmup:
        timer.launch(variant)
        launches += 1
        if (clock() - started) * 1000.0 >= plan.warmup_ms:
            break
    return launches


class _ClockWatch:
    """The lowest SM clock seen while sampling, read at most every CLOCK_PERIOD_MS."""

    def __init__(self, timer: Timer, now: float) -> None:
        """Start with the clock at the start of sampling."""
        self.timer = timer
        self.start = timer.clock_mhz(during=False)
        self.lowest = self.start
        self.last = now

    def tick(self, now: float) -> None:
        """Read the clock again if it is time to."""
        if (now - self.last) * 1000.0 < CLOCK_PERIOD_MS:
            return
        self.last = now
        value = self.timer.clock_mhz(during=True)
        if value is not None:
            self.lowest = value if self.lowest is None else min(self.lowest, value)


def _one_round(timer: Timer, samples: list[list[float]], order: list[int]) -> None:
    """One sample of each variant, in order (ABAB... over the rounds)."""
    for variant in range(len(samples)):
        timer.prepare_sample(variant)
        samples[variant].append(float(timer.timed_launch(variant)))
        order.append(variant)
        if len(samples[variant]) == 1:
            timer.snapshot(variant)


def run_sampling(timer: Timer, variants: int, plan: TimingPlan,
                 clock: Callable[[], float] = time.perf_counter) -> SamplingOutcome:
    """Warm up each variant, then sample them interleaved until the plan says stop."""
    if variants < 1:
        raise ValueError("nothing to time")
    warmups = [warm_up(timer, v, plan, clock) for v in range(variants)]
    samples: list[list[float]] = [[] for _ in range(variants)]
    order: list[int] = []
    started = clock()
    watch = _ClockWatch(timer, started)
    collecting = gc.isenabled()
    gc.disable()  # a collection in the middle of a sample would only add noise
    try:
        reason = None
        while reason is None:
            _one_round(timer, samples, order)
            now = clock()
            watch.tick(now)
            reason = stop_reason(plan, samples, (now - started) * 1000.0)
    finally:
        if collecting:
            gc.enable()
    sampling_ms = (clock() - started) * 1000.0
    end = timer.clock_mhz(during=False)
    lowest = min((v for v in (watch.lowest, end) if v is not None), default=None)
    return SamplingOutcome(samples, order, reason, warmups, watch.start, end, lowest,
                           sampling_ms)


class HostTimer:
    """A Timer over a host function that runs one launch on the request's images, timed with
    the host clock: for backends that test the machinery (selftest), never for real numbers.

    Like the GPU timer, it restores every buffer image before each sample, so that every timed
    launch starts from the same inputs and the last one can be checked against the reference."""

    def __init__(self, run: Callable[[LaunchRequest], object],
                 requests: list[LaunchRequest]) -> None:
        """Keep pristine copies of every buffer image."""
        self.run = run
        self.requests = requests
        self.pristine = [[a.image.copy() if isinstance(a, BufferArg) else None for a in r.args]
                         for r in requests]
        self.first: list[list[np.ndarray[Any, Any] | None]] = [[None] * len(r.args)
                                                               for r in requests]

    def launch(self, variant: int) -> None:
        """Run the launch."""
        self.run(self.requests[variant])

    def prepare_sample(self, variant: int) -> None:
        """Put every buffer image back as it was sent."""
        for arg, saved in zip(self.requests[variant].args, self.pristine[variant], strict=True):
            if isinstance(arg, BufferArg) and saved is not None:
                np.copyto(arg.image, saved)

    def timed_launch(self, variant: int) -> float:
        """Milliseconds of one launch by the host clock."""
        started = time.perf_counter()
        self.run(self.requests[variant])
        return (time.perf_counter() - started) * 1000.0

    def snapshot(self, variant: int) -> None:
        """Copy every buffer image."""
        self.first[variant] = [a.image.copy() if isinstance(a, BufferArg) else None
                               for a in self.requests[variant].args]

    def clock_mhz(self, during: bool) -> float | None:
        """No device clock."""
        return None


def time_on_host(run: Callable[[LaunchRequest], object], requests: list[LaunchRequest],
                 plan: TimingPlan) -> TimingRecord:
    """run_sampling with a HostTimer; the requests' images end as the last launch left them."""
    timer = HostTimer(run, requests)
    outcome = run_sampling(timer, len(requests), plan)
    return TimingRecord(outcome, timer.first, {"timer": "host clock (not a device time)"})
