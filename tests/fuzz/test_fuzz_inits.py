"""Inits (`init = "uniform(lo, hi)"`) on hostile text: each parses or raises InitError quickly;
the GUI's Spec pane parses them in the window's process."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.spec.dtypes import DTYPES, lookup
from app.spec.inits import InitError, parse_init
from tests.fuzz.bounds import bounded, grows_linearly

ATOMS = ["uniform", "randint", "normal", "(", ")", ",", " ", "\t", "\n", "1", "-2", "0.5",
         "1e30", "nan", "inf", "1_000", "x", "9" * 30]
INITS = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=30).map("".join),
                  st.text(max_size=200))


@given(INITS, st.sampled_from(sorted(DTYPES)))
def test_any_init_parses_or_is_refused(text: str, dtype: str) -> None:
    """Any text gives an init or an InitError, for every dtype."""
    bounded(lambda t: parse_init(t, lookup(dtype)), text, (InitError,))


@given(st.floats(allow_nan=False, allow_infinity=False, width=32),
       st.floats(allow_nan=False, allow_infinity=False, width=32), st.text(" \t", max_size=5))
def test_written_bounds_are_read_back(low: float, high: float, space: str) -> None:
    """`uniform(lo, hi)` with spaces anywhere gives [lo, hi) for float64 when lo < hi."""
    text = f"uniform({space}{low!r}{space},{space}{high!r}{space})"
    if low < high:
        init = parse_init(text, lookup("float64"))
        assert (init.kind, init.low, init.high) == ("reals", low, high)
    else:
        with pytest.raises(InitError):
            parse_init(text, lookup("float64"))


def test_a_bound_followed_by_many_spaces_is_refused_at_once() -> None:
    """The issue's probe: `uniform(1` and 120k spaces ran spec-check past 30 s."""
    result = bounded(lambda t: parse_init(t, lookup("float32")),
                     "uniform(1" + " " * 120_000 + ")", (InitError,), seconds=0.5)
    assert result.error == "InitError" and "characters long" in result.message


@pytest.mark.parametrize("make", [lambda k: "uniform(1" + " " * k + ")",
                                  lambda k: "randint(" + " " * k + "1," + " " * k + "x)",
                                  lambda k: "uniform(" + "1" * k + ", 2)"],
                         ids=["trailing-spaces", "spaces-both", "long-bound"])
def test_the_work_grows_linearly(make: object) -> None:
    """Four times the text costs about four times the work."""
    grows_linearly(lambda t: parse_init(t, lookup("float32")), make, 4000,  # type: ignore[arg-type]
                   (InitError,))
