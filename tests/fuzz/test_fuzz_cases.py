"""Case strings (`--case n=1000,m=3`, and the Spec pane's case lines) and the cases they give:
each parses or raises the parser's own error quickly, and checking a case against a spec names
its problem instead of raising."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli.commands.verify import parse_case
from app.spec import form
from app.spec.cases import CaseError, check_case, resolve
from app.spec.model import parse_spec_text
from tests.fuzz.bounds import bounded, grows_linearly

ATOMS = ["n", "m", "=", ",", " ", "1", "-1", "1_000", "1e3", "1e999", "nan", "0x10", "(", ")",
         "9" * 30, "é", "\t", "==", "x"]
CASE_TEXTS = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=40).map("".join),
                       st.text(max_size=200))
SPEC = """[kernel]
source = "k.cu"
entry = "k"
[[arg]]
name = "a"
kind = "in"
dtype = "float16"
shape = ["n", "m"]
[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["n * m"]
[[arg]]
name = "s"
kind = "scalar"
dtype = "int8"
value = "m - 3"
[launch]
grid = ["cdiv(n, 256)", "m"]
block = ["256"]
[reference]
python = "r.py"
[verify]
cases = [{ n = 1, m = 3 }]
"""
NUMBERS = st.one_of(st.integers(), st.floats(), st.sampled_from([0, -1, 2**31, 2**80, 2**81]))


@given(CASE_TEXTS)
def test_any_case_text_parses_or_is_refused(text: str) -> None:
    """--case text gives a case or argparse's ArgumentTypeError (exit 2 with the message)."""
    bounded(parse_case, text, (argparse.ArgumentTypeError,))


@given(CASE_TEXTS)
def test_any_case_line_of_the_spec_pane_parses(text: str) -> None:
    """The Spec pane's case lines always give a table for the validator to check."""
    bounded(form.cases_from_text, text, ())


@given(st.dictionaries(st.sampled_from(["n", "m", "k", "x"]), NUMBERS, max_size=4))
def test_any_case_is_checked_without_raising(case: dict[str, int | float]) -> None:
    """check_case names every problem of a case (sizes, launch limits, dtypes) as text;
    resolve raises only CaseError."""
    spec = parse_spec_text(SPEC, Path("/nonexistent"), None, check_files=False)
    bounded(lambda c: check_case(spec, c, "--case"), case, ())
    bounded(lambda c: resolve(spec, c), case, (CaseError,))


@pytest.mark.parametrize("make", [lambda k: ",".join(f"v{i}=1" for i in range(k)),
                                  lambda k: "n=" + "1" * k, lambda k: "n" + " " * k + "=1",
                                  lambda k: "=" * k],
                         ids=["many-variables", "long-number", "spaces", "equals"])
def test_the_work_grows_linearly(make: object) -> None:
    """Four times the text costs about four times the work."""
    grows_linearly(parse_case, make, 4000, (argparse.ArgumentTypeError,))  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [lambda k: "n = 1, " * k, lambda k: "(" * k + "n = 1",
                                  lambda k: "n = 1\n" * k],
                         ids=["parts", "parentheses", "lines"])
def test_the_spec_pane_work_grows_linearly(make: object) -> None:
    """The same for the Spec pane's case lines."""
    grows_linearly(form.cases_from_text, make, 4000, ())  # type: ignore[arg-type]
