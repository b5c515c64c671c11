"""Staging one run ahead (app.engine.verify.ahead): results in order, each step run once, the
next step started before the current result is handed back, errors raised at their own turn,
and a stuck step abandoned at close."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from app.engine.verify.ahead import Ahead


def recording(calls: list[int], started: dict[int, threading.Event]) -> list[Callable[[], int]]:
    """Three steps that note their start and return their number squared."""
    def step(number: int) -> int:
        started[number].set()
        calls.append(number)
        return number * number
    return [lambda n=n: step(n) for n in range(3)]  # type: ignore[misc]


def test_results_come_in_order_and_the_next_step_starts_early() -> None:
    calls: list[int] = []
    started = {n: threading.Event() for n in range(3)}
    ahead = Ahead(recording(calls, started), lambda _k: True)
    assert ahead.take(0) == 0
    assert started[1].wait(5)  # running while the caller works on step 0's result
    assert not started[2].is_set()  # one step in flight, never more
    assert [ahead.take(1), ahead.take(2)] == [1, 4]
    ahead.close(lambda: None)
    assert calls == [0, 1, 2]


def test_a_step_not_allowed_to_overlap_runs_in_its_turn() -> None:
    calls: list[int] = []
    started = {n: threading.Event() for n in range(3)}
    ahead = Ahead(recording(calls, started), lambda k: k != 1)
    assert ahead.take(0) == 0
    time.sleep(0.2)
    assert not started[1].is_set()
    assert ahead.take(1) == 1 and ahead.take(2) == 4
    ahead.close(lambda: None)


def test_an_error_is_raised_when_its_step_is_taken() -> None:
    def fails() -> int:
        raise ValueError("step 1 failed")
    ahead = Ahead([lambda: 0, fails, lambda: 2], lambda _k: True)
    assert ahead.take(0) == 0  # step 1 already failed meanwhile: not step 0's business
    with pytest.raises(ValueError, match="step 1 failed"):
        ahead.take(1)
    ahead.close(lambda: None)


def test_a_step_still_running_at_close_is_abandoned_after_the_grace() -> None:
    release = threading.Event()
    abandoned: list[bool] = []

    def stuck() -> int:
        release.wait(30)
        return 1

    def abandon() -> None:
        abandoned.append(True)
        release.set()

    ahead = Ahead([lambda: 0, stuck], lambda _k: True)
    assert ahead.take(0) == 0
    started = time.monotonic()
    ahead.close(abandon, grace=0.2)
    assert abandoned == [True] and time.monotonic() - started < 10


def test_a_step_that_ends_within_the_grace_is_not_abandoned() -> None:
    ahead = Ahead([lambda: 0, lambda: (time.sleep(0.1), 1)[1]], lambda _k: True)
    assert ahead.take(0) == 0
    ahead.close(lambda: pytest.fail("abandoned a step that was about to end"), grace=5)
