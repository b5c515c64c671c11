"""Compiler logs read into diagnostics (app.compile.diagnostics): the compiler echoes the user's
own lines and names, so a crafted source shapes the log; any log is read quickly and never
raises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.compile.diagnostics import LogContext, parse_log
from tests.fuzz.bounds import bounded, grows_linearly

ATOMS = ["k.cu", "(", ")", "12", ": ", "error", "warning", "note", "remark", "catastrophic error",
         " #20", "-D", ":", "\n", "  ", " ", "^", "at line 3", " of ", '"h.cuh"', "detected during",
         "nvrtc", "ptxas", "fatal", "\r\n", "\0", "x", "é"]
LOGS = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=120).map("".join),
                 st.text(max_size=400))
SOURCE = "int x;\n__global__ void k(float* a) { a[0] = y; }\n"


def _read(log: str) -> object:
    """The log read with the source known, so carets are mapped onto it."""
    return parse_log(log, LogContext(aliases={"k.cu": "kernel.cu"}, sources={"k.cu": SOURCE}))


@given(LOGS)
def test_any_log_is_read_without_raising(log: str) -> None:
    """Every log gives a list of diagnostics."""
    bounded(_read, log, ())


FAMILIES = {
    "context-spaces": lambda k: "k.cu(1): error: x\n  " + " " * k + "x\n",
    "context-at-lines": lambda k: "k.cu(1): error: x\n  " + ' at line 1 of "x' * k + "\n",
    "header-parentheses": lambda k: "k" + "(1)" * k + "\n",
    "many-carets": lambda k: "k.cu(2): error: x\n  __global__ void k\n  ^\n" * k,
    "gcc-colons": lambda k: "k.cu:1:" * k + "\n",
    "long-echo": lambda k: "k.cu(2): error: x\n  " + "y " * k + "\n  " + " " * k + "^\n",
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_work_grows_linearly(family: str) -> None:
    """A log 4 times larger costs about 4 times more."""
    grows_linearly(_read, FAMILIES[family], 2000, ())


def test_a_context_line_of_many_spaces_is_read_at_once() -> None:
    """A context line's leading spaces were tried at every split: 100k took minutes."""
    bounded(_read, "k.cu(1): error: x\n  " + " " * 100_000 + "x\n", (), seconds=0.5)
