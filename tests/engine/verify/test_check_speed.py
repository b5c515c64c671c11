"""The faster forms of the output checks give exactly what the plain NumPy forms gave: the
median magnitude behind the default atol, and the tolerance test."""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.verify import checks
from app.spec.dtypes import lookup


def plain_median(values: np.ndarray) -> float:  # type: ignore[type-arg]
    """The median |x| of the finite elements, as np.median computes it in float64."""
    wide = values.astype(np.float64)
    finite = np.abs(wide[np.isfinite(wide)])
    return float(np.median(finite)) if finite.size else 0.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("count", [1, 2, 3, 10, 11, 1001, 100_000, 100_001])
def test_the_median_magnitude_is_numpys_median(dtype: str, count: int) -> None:
    rng = np.random.default_rng(count)
    values = (rng.standard_normal(count) * rng.choice([1e-4, 1.0, 1e4], count))
    values = values.astype(lookup(dtype).numpy)
    if count > 10:  # NaN, both infinities and negative zeros must not count
        values[::7], values[::11], values[::13], values[::17] = np.nan, np.inf, -np.inf, -0.0
    assert checks.median_magnitude(values) == plain_median(values)


def test_no_finite_element_means_no_magnitude() -> None:
    assert checks.median_magnitude(np.array([np.nan, np.inf, -np.inf], np.float32)) == 0.0
    assert checks.median_magnitude(np.array([], np.float64)) == 0.0


def test_values_sharing_their_top_bits_still_give_the_exact_median() -> None:
    # Every element in one bucket of the first pass: the second pass alone decides.
    values = np.float32(1.0) + np.arange(4096, dtype=np.float32) * np.float32(2**-23)
    np.random.default_rng(1).shuffle(values)
    assert checks.median_magnitude(values) == plain_median(values)


def test_the_tolerance_test_is_unchanged() -> None:
    rng = np.random.default_rng(2)
    want = rng.standard_normal(10_000)
    got = want + rng.standard_normal(10_000) * 1e-5
    got[::97], want[::89], got[::83], want[::83] = np.nan, np.inf, -np.inf, -np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(got - want) <= 2e-5 + 1e-5 * np.abs(want)
    plain = ~close | np.isinf(want)
    plain[np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))] = False
    plain[np.isnan(got) & np.isnan(want)] = False
    assert np.array_equal(checks._bad_mask(got, want, 1e-5, 2e-5, True), plain)
    assert 0 < plain.sum() < plain.size
