"""The statistics of timing on synthetic samples (seeded, so every run sees the same numbers):
summaries, the noise-based stopping rule, the bootstrap interval of a ratio of medians, and
the interleaving order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.engine.bench.stats import bootstrap_ratio, summarize
from app.engine.worker.timing import (
    PlanError,
    TimingPlan,
    interleave_order,
    relative_standard_error,
    stop_reason,
)


def samples(median_ms: float, spread: float, count: int, seed: int) -> list[float]:
    """Kernel-like samples: a floor near the median, a few slow outliers (GPU timings are
    skewed to the right)."""
    rng = np.random.default_rng(seed)
    body = median_ms * (1 + spread * rng.standard_normal(count))
    outliers = rng.random(count) < 0.03
    body[outliers] *= 1.5
    return [float(v) for v in body]


def test_summary_of_known_values() -> None:
    stats = summarize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    assert stats.count == 10
    assert stats.median == 5.5
    assert stats.mean == 5.5
    assert stats.min == 1.0 and stats.max == 10.0
    assert stats.p10 == pytest.approx(1.9)
    assert stats.p90 == pytest.approx(9.1)
    assert stats.iqr == pytest.approx(7.75 - 3.25)
    assert stats.stdev == pytest.approx(np.std(np.arange(1, 11), ddof=1))
    assert stats.rse == pytest.approx(stats.stdev / math.sqrt(10) / 5.5)


def test_relative_standard_error_needs_two_samples() -> None:
    assert relative_standard_error([1.0]) is None
    assert summarize([2.0]).rse is None
    assert relative_standard_error([1.0, 1.0, 1.0]) == 0.0
    with pytest.raises(ValueError):
        summarize([])


def test_quiet_samples_stop_on_noise_after_the_minimum() -> None:
    plan = TimingPlan(min_samples=10, rse_target=0.005)
    steady = [1.0] * 9
    assert stop_reason(plan, [steady], 1.0) is None  # under the minimum, even with no noise
    assert stop_reason(plan, [steady + [1.0]], 1.0) == "noise"


def test_noisy_samples_go_on_until_the_budget() -> None:
    plan = TimingPlan(budget_ms=2000.0, min_samples=10, rse_target=0.005)
    noisy = samples(1.0, 0.2, 40, seed=1)
    assert relative_standard_error(noisy) > 0.005  # type: ignore[operator]
    assert stop_reason(plan, [noisy], 1999.0) is None
    assert stop_reason(plan, [noisy], 2000.0) == "budget"


def test_the_budget_is_per_variant() -> None:
    plan = TimingPlan(budget_ms=1000.0)
    noisy = samples(1.0, 0.2, 40, seed=2)
    assert stop_reason(plan, [noisy, noisy], 1500.0) is None
    assert stop_reason(plan, [noisy, noisy], 2000.0) == "budget"


def test_every_variant_must_be_quiet() -> None:
    plan = TimingPlan(min_samples=10)
    assert stop_reason(plan, [[1.0] * 20, samples(1.0, 0.3, 20, seed=3)], 5.0) is None


def test_the_cap_ends_sampling() -> None:
    plan = TimingPlan(min_samples=10, max_samples=50)
    assert stop_reason(plan, [samples(1.0, 0.3, 50, seed=4)], 1.0) == "cap"


def test_the_budget_waits_for_the_minimum_but_the_hard_limit_does_not() -> None:
    plan = TimingPlan(budget_ms=100.0, min_samples=10, limit_ms=5000.0)
    slow = [400.0, 410.0, 405.0]
    assert stop_reason(plan, [slow], 1200.0) is None
    assert stop_reason(plan, [slow], 5000.0) == "limit"
    assert TimingPlan(budget_ms=2000.0).hard_limit_ms(1) == 20_000.0
    assert TimingPlan(budget_ms=3000.0).hard_limit_ms(2) == 60_000.0


def test_the_stopping_rule_on_a_growing_sample_stream() -> None:
    """Feed samples one at a time, as the worker does: a steady kernel stops on noise soon
    after the minimum, long before the budget."""
    plan = TimingPlan(min_samples=10, rse_target=0.005)
    stream = samples(0.1, 0.01, 1000, seed=5)
    taken: list[float] = []
    reason = None
    while reason is None:
        taken.append(stream[len(taken)])
        reason = stop_reason(plan, [taken], elapsed_ms=len(taken) * 0.3)
    assert reason == "noise"
    assert 10 <= len(taken) < 100


@pytest.mark.parametrize("changes", [{"mode": "warm"}, {"budget_ms": 0}, {"min_samples": 0},
                                     {"min_samples": 20, "max_samples": 10},
                                     {"rse_target": 0.0}, {"max_warmup": 0}])
def test_bad_plans_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(PlanError):
        TimingPlan(**changes)  # type: ignore[arg-type]


def test_plan_round_trips_through_the_protocol() -> None:
    plan = TimingPlan(mode="hot", budget_ms=500.0, min_samples=12)
    assert TimingPlan.from_message(plan.to_message()) == plan
    with pytest.raises(PlanError, match="unknown plan fields: colour"):
        TimingPlan.from_message({"colour": "red"})


def test_interleaving_order_is_abab() -> None:
    assert interleave_order(3, 2) == [0, 1, 0, 1, 0, 1]
    assert interleave_order(2, 3) == [0, 1, 2, 0, 1, 2]
    assert interleave_order(4, 1) == [0, 0, 0, 0]


def test_bootstrap_finds_a_real_difference() -> None:
    fast = samples(0.80, 0.01, 200, seed=10)
    slow = samples(1.00, 0.01, 200, seed=11)
    interval = bootstrap_ratio(fast, slow)
    assert interval.ratio == pytest.approx(0.80, rel=0.01)
    assert interval.low < interval.ratio < interval.high
    assert interval.high < 1.0
    assert not interval.no_difference
    assert interval.level == 0.95


def test_bootstrap_sees_no_difference_between_equal_kernels() -> None:
    a = samples(1.0, 0.02, 100, seed=20)
    b = samples(1.0, 0.02, 100, seed=21)
    interval = bootstrap_ratio(a, b)
    assert interval.no_difference
    assert interval.low < 1.0 < interval.high


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    a = samples(1.0, 0.05, 60, seed=30)
    b = samples(1.1, 0.05, 60, seed=31)
    assert bootstrap_ratio(a, b, seed=7) == bootstrap_ratio(a, b, seed=7)
    assert bootstrap_ratio(a, b, seed=7).low != bootstrap_ratio(a, b, seed=8).low


def test_bootstrap_interval_covers_the_true_ratio_about_95_percent_of_the_time() -> None:
    """The interval's promise, checked: over many independent experiments whose true ratio of
    medians is 0.9, about 95% of the intervals contain it."""
    rng = np.random.default_rng(40)
    covered = 0
    trials = 120
    for trial in range(trials):
        a = 0.9 * np.exp(0.05 * rng.standard_normal(60))
        b = 1.0 * np.exp(0.05 * rng.standard_normal(60))
        interval = bootstrap_ratio(list(a), list(b), resamples=400, seed=trial)
        covered += interval.low <= 0.9 <= interval.high
    assert 0.85 <= covered / trials <= 1.0


def test_bootstrap_refuses_empty_samples() -> None:
    with pytest.raises(ValueError):
        bootstrap_ratio([], [1.0])


def test_bootstrap_median_brackets_the_median_and_is_repeatable() -> None:
    from app.engine.bench.stats import bootstrap_median

    samples = [1.0, 1.2, 0.8, 1.1, 0.9, 1.05, float("nan")]
    median, low, high = bootstrap_median(samples, seed=3)
    assert median == 1.025  # the NaN is ignored
    assert low <= median <= high and low >= 0.8 and high <= 1.2
    assert bootstrap_median(samples, seed=3) == (median, low, high)
    assert all(v != v for v in bootstrap_median([]))  # NaN three times
