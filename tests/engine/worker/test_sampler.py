"""The worker's sampling loop with a scripted timer and clock: warm-up, ABAB order, the first
snapshot, the stop reasons, the clock watch, and the host timer's restores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.engine.worker import server as worker
from app.engine.worker.backends.base import (
    Backend,
    BackendError,
    BufferArg,
    LaunchRequest,
    ScalarArg,
)
from app.engine.worker.backends.sampler import HostTimer, run_sampling, time_on_host, warm_up
from app.engine.worker.timing import TimingPlan


class FakeClock:
    """A clock that moves only when told (milliseconds per launch)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ScriptedTimer:
    """Launch times from a script; every call logged; clock readings from a list."""

    def __init__(self, clock: FakeClock, times: list[list[float]],
                 clocks: list[float | None] | None = None, cheap: bool = True) -> None:
        self.clock = clock
        self.times = times
        self.clocks = list(clocks or [])
        self.cheap = cheap
        self.log: list[tuple[str, int]] = []
        self.count = [0] * len(times)

    def launch(self, variant: int) -> None:
        self.log.append(("launch", variant))
        self.clock.now += 0.001

    def prepare_sample(self, variant: int) -> None:
        self.log.append(("prepare", variant))

    def timed_launch(self, variant: int) -> float:
        script = self.times[variant]
        value = script[self.count[variant] % len(script)]
        self.count[variant] += 1
        self.clock.now += value / 1000.0 + 0.0001
        self.log.append(("timed", variant))
        return value

    def snapshot(self, variant: int) -> None:
        self.log.append(("snapshot", variant))

    def clock_mhz(self, during: bool) -> float | None:
        if during and not self.cheap:
            return None
        return self.clocks.pop(0) if self.clocks else None


def test_warm_up_runs_for_its_time_and_at_least_once() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(clock, [[1.0]])
    assert warm_up(timer, 0, TimingPlan(warmup_ms=0.0), clock) == 1
    assert warm_up(timer, 0, TimingPlan(warmup_ms=10.0), clock) == 10
    assert warm_up(timer, 0, TimingPlan(warmup_ms=1e6, max_warmup=7), clock) == 7


def test_two_variants_interleave_and_snapshot_their_first_sample() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(clock, [[1.0], [2.0]])
    outcome = run_sampling(timer, 2, TimingPlan(min_samples=10, warmup_ms=0.0), clock)
    assert outcome.stop_reason == "noise"
    assert outcome.order == [0, 1] * 10
    assert outcome.samples_ms == [[1.0] * 10, [2.0] * 10]
    assert outcome.warmup_launches == [1, 1]
    sampled = [entry for entry in timer.log if entry[0] != "launch"]
    assert sampled[:6] == [("prepare", 0), ("timed", 0), ("snapshot", 0),
                           ("prepare", 1), ("timed", 1), ("snapshot", 1)]
    assert [e for e in timer.log if e[0] == "snapshot"] == [("snapshot", 0), ("snapshot", 1)]


def test_noisy_kernel_stops_on_budget_with_every_sample_kept() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(clock, [[1.0, 3.0, 2.0, 5.0]])
    outcome = run_sampling(timer, 1, TimingPlan(budget_ms=50.0, warmup_ms=0.0), clock)
    assert outcome.stop_reason == "budget"
    assert len(outcome.samples_ms[0]) == len(outcome.order)
    assert 15 <= len(outcome.samples_ms[0]) <= 25  # about 2.75 ms a sample in 50 ms
    assert outcome.sampling_ms >= 50.0


def test_the_cap_stops_a_noisy_kernel() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(clock, [[1.0, 2.0]])
    plan = TimingPlan(budget_ms=1e6, min_samples=10, max_samples=30, warmup_ms=0.0)
    outcome = run_sampling(timer, 1, plan, clock)
    assert outcome.stop_reason == "cap"
    assert len(outcome.samples_ms[0]) == 30


def test_clock_readings_start_lowest_end() -> None:
    clock = FakeClock()
    # 100 ms samples: the clock is watched after each one.
    timer = ScriptedTimer(clock, [[100.0, 110.0]], clocks=[1980.0, 1900.0, 1700.0, 1950.0,
                                                           1980.0, 1980.0])
    plan = TimingPlan(budget_ms=350.0, min_samples=3, rse_target=0.001, warmup_ms=0.0)
    outcome = run_sampling(timer, 1, plan, clock)
    assert outcome.clock_start_mhz == 1980.0
    assert outcome.clock_min_mhz == 1700.0
    assert outcome.clock_end_mhz is not None


def test_expensive_clocks_are_read_only_at_start_and_end() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(clock, [[100.0, 110.0]], clocks=[1980.0, 1500.0], cheap=False)
    plan = TimingPlan(budget_ms=350.0, min_samples=3, rse_target=0.001, warmup_ms=0.0)
    outcome = run_sampling(timer, 1, plan, clock)
    assert (outcome.clock_start_mhz, outcome.clock_end_mhz) == (1980.0, 1500.0)
    assert outcome.clock_min_mhz == 1500.0


def _add_one(request: LaunchRequest) -> None:
    """y += 1 on the request's only buffer (float32 data after a 16-byte guard)."""
    arg = request.args[0]
    assert isinstance(arg, BufferArg)
    arg.image[16:].view(np.float32)[:] += 1


def test_host_timer_restores_every_buffer_before_each_sample() -> None:
    image = np.zeros(16 + 4 * 8, dtype=np.uint8)
    request = LaunchRequest("add", "add", (1, 1, 1), (1, 1, 1), 0,
                            [BufferArg(image, 16, "float32"), ScalarArg(8, "int32")])
    record = time_on_host(_add_one, [[request]], TimingPlan(budget_ms=5.0, warmup_ms=1.0))
    assert (image[16:].view(np.float32) == 1).all()  # one launch's worth, not hundreds
    first = record.first_images[0]
    assert first[1] is None
    assert first[0] is not None and (first[0][16:].view(np.float32) == 1).all()
    assert record.outcome.warmup_launches[0] >= 1


def test_host_timer_snapshot_is_a_copy() -> None:
    image = np.zeros(16 + 4, dtype=np.uint8)
    request = LaunchRequest("add", "add", (1, 1, 1), (1, 1, 1), 0,
                            [BufferArg(image, 16, "float32")])
    timer = HostTimer(_add_one, [[request]])
    timer.prepare_sample(0)
    timer.timed_launch(0)
    timer.snapshot(0)
    timer.timed_launch(0)
    snapshot = timer.first[0][0]
    assert snapshot is not None and snapshot[16:].view(np.float32)[0] == 1
    assert image[16:].view(np.float32)[0] == 2


class PlainBackend(Backend):
    """A backend that runs launches but says nothing about timing (like the CPU emulator)."""

    name = "plain"

    def describe(self) -> dict[str, object]:
        return {"name": "plain", "kind": "emulation", "arch": "none"}

    def run(self, request: LaunchRequest) -> float:
        return 0.0


def test_backends_refuse_timing_by_default(tmp_path: Path) -> None:
    backend = PlainBackend()
    with pytest.raises(BackendError) as caught:
        backend.time([], TimingPlan())
    assert caught.value.kind == "unsupported"
    assert "timing needs an NVIDIA GPU" in str(caught.value)
    buffer = tmp_path / "a.bin"
    np.zeros(8, dtype=np.uint8).tofile(buffer)
    message = {"op": "bench", "plan": {"budget_ms": 10.0},
               "variants": [{"symbol": "k", "entry": "k", "grid": [1], "block": [1],
                             "args": [{"buffer": str(buffer), "offset": 0, "dtype": "uint8"}]}]}
    with pytest.raises(BackendError) as caught:
        worker.handle(backend, message)
    assert caught.value.kind == "unsupported"  # not fatal: the worker stays up
    with pytest.raises(BackendError, match="malformed bench request"):
        worker.handle(backend, {"op": "bench", "variants": [], "plan": {"colour": 1}})
