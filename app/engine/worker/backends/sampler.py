"""The sampling loop that runs inside a worker, over any backend that can time one launch.

A backend provides a `Timer` (restore outputs, flush caches, one timed sample, keep a snapshot);
this loop decides the warm-up, the interleaved order and when to stop (app.engine.worker.timing), so
every backend follows the same method and the loop is tested without a GPU.

A variant is a sequence of launches (one, for a spec of one launch): a warm-up and a sample
each run the whole sequence, and a sample's time is the sequence's. Asked for per-launch times,
the timer also splits each sample into its launches' parts (`launch_split`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from app.engine.worker.backends.base import BufferArg, LaunchRequest, LaunchSequence
from app.engine.worker.timing import SamplingOutcome, TimingPlan, TimingRecord, stop_reason

# How often to read the SM clock while sampling, when reading it is cheap (NVML).
CLOCK_PERIOD_MS = 100.0


class Timer(Protocol):
    """What a backend does for the sampling loop; variants are numbered from 0."""

    def launch(self, variant: int) -> None:
        """One untimed run of the variant's launches, to completion (warm-up)."""

    def prepare_sample(self, variant: int) -> None:
        """Before a timed sample: restore the images, flush caches in cold mode."""

    def timed_launch(self, variant: int) -> float:
        """One sample: the variant's launches timed together on the device, in milliseconds."""

    def launch_split(self, variant: int) -> list[float]:
        """Each launch's part (ms) of the sample just taken (per-launch timing only)."""

    def snapshot(self, variant: int) -> None:
        """Keep a copy of the variant's images as the sample just timed left them."""

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


def _one_round(timer: Timer, samples: list[list[float]], order: list[int],
               parts: list[list[list[float]]] | None) -> None:
    """One sample of each variant, in order (ABAB... over the rounds); with `parts`, each
    launch's part of it too (parts[variant][launch])."""
    for variant in range(len(samples)):
        timer.prepare_sample(variant)
        samples[variant].append(float(timer.timed_launch(variant)))
        if parts is not None:
            _add_split(parts[variant], timer.launch_split(variant))
        order.append(variant)
        if len(samples[variant]) == 1:
            timer.snapshot(variant)


def _add_split(launches: list[list[float]], split: list[float]) -> None:
    """Append one sample's per-launch parts to each launch's list."""
    while len(launches) < len(split):
        launches.append([])
    for samples, value in zip(launches, split, strict=False):
        samples.append(float(value))


def run_sampling(timer: Timer, variants: int, plan: TimingPlan,
                 clock: Callable[[], float] = time.perf_counter,
                 per_launch: bool = False) -> SamplingOutcome:
    """Warm up each variant, then sample them interleaved until the plan says stop; with
    `per_launch`, keep each launch's part of every sample as well."""
    if variants < 1:
        raise ValueError("nothing to time")
    warmups = [warm_up(timer, v, plan, clock) for v in range(variants)]
    samples: list[list[float]] = [[] for _ in range(variants)]
    parts: list[list[list[float]]] | None = [[] for _ in range(variants)] if per_launch \
        else None
    order: list[int] = []
    started = clock()
    watch = _ClockWatch(timer, started)
    collecting = gc.isenabled()
    gc.disable()  # a collection in the middle of a sample would only add noise
    try:
        reason = None
        while reason is None:
            _one_round(timer, samples, order, parts)
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
                           sampling_ms, parts or [])


def distinct_images(sequence: LaunchSequence) -> list[BufferArg]:
    """The buffers of a variant's launches, each once (launches that share a buffer hold the
    same image), in the order they first appear."""
    seen: dict[int, BufferArg] = {}
    for request in sequence:
        for arg in request.args:
            if isinstance(arg, BufferArg):
                seen.setdefault(id(arg.image), arg)
    return list(seen.values())


def argument_images(sequence: LaunchSequence) -> list[np.ndarray[Any, Any] | None]:
    """A copy of every argument's image, launch by launch (None for scalars): a TimingRecord's
    first images. A buffer several launches share is copied once and listed for each."""
    copies: dict[int, np.ndarray[Any, Any]] = {}
    found: list[np.ndarray[Any, Any] | None] = []
    for request in sequence:
        for arg in request.args:
            if isinstance(arg, BufferArg):
                if id(arg.image) not in copies:
                    copies[id(arg.image)] = arg.image.copy()
                found.append(copies[id(arg.image)])
            else:
                found.append(None)
    return found


class HostTimer:
    """A Timer over a host function that runs one launch on the request's images, timed with
    the host clock: for backends that test the machinery (selftest), never for real numbers.

    Like the GPU timer, it restores every buffer image before each sample, so that every timed
    sample starts from the same inputs and the last one can be checked against the reference."""

    def __init__(self, run: Callable[[LaunchRequest], object],
                 variants: list[LaunchSequence]) -> None:
        """Keep pristine copies of every buffer image."""
        self.run = run
        self.variants = variants
        self.pristine = [[(arg, arg.image.copy()) for arg in distinct_images(v)]
                         for v in variants]
        self.first: list[list[np.ndarray[Any, Any] | None]] = [
            [None] * sum(len(r.args) for r in v) for v in variants]
        self.split: list[float] = []

    def launch(self, variant: int) -> None:
        """Run the variant's launches."""
        for request in self.variants[variant]:
            self.run(request)

    def prepare_sample(self, variant: int) -> None:
        """Put every buffer image back as it was sent."""
        for arg, saved in self.pristine[variant]:
            np.copyto(arg.image, saved)

    def timed_launch(self, variant: int) -> float:
        """Milliseconds of the variant's launches by the host clock (each one's kept too)."""
        marks = [time.perf_counter()]
        for request in self.variants[variant]:
            self.run(request)
            marks.append(time.perf_counter())
        self.split = [(b - a) * 1000.0 for a, b in zip(marks, marks[1:], strict=False)]
        return (marks[-1] - marks[0]) * 1000.0

    def launch_split(self, variant: int) -> list[float]:
        """Each launch's milliseconds in the sample just taken."""
        return list(self.split)

    def snapshot(self, variant: int) -> None:
        """Copy every buffer image."""
        self.first[variant] = argument_images(self.variants[variant])

    def clock_mhz(self, during: bool) -> float | None:
        """No device clock."""
        return None


def time_on_host(run: Callable[[LaunchRequest], object], variants: list[LaunchSequence],
                 plan: TimingPlan, per_launch: bool = False) -> TimingRecord:
    """run_sampling with a HostTimer; the images end as each variant's last sample left them."""
    timer = HostTimer(run, variants)
    outcome = run_sampling(timer, len(variants), plan, per_launch=per_launch)
    return TimingRecord(outcome, timer.first, {"timer": "host clock (not a device time)"})
