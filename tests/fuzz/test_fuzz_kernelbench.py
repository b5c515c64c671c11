"""KernelBench problem files read for import (app.assist.tasks.kernelbench*): the part of the
import that reads the file as text here (its sizes, forward's parameters, the candidate cases)
takes any file to a Problem or Refused, quickly, deep nesting included; what the Model is gets
learned only in the sandbox (tests/assist/tasks)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import read_problem, request
from tests.fuzz.bounds import bounded, grows_linearly

PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        """A scaled, clamped copy."""
        def __init__(self, scale: float):
            super().__init__()
            self.scale = scale

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return {body}

    rows = {rows}
    cols = {cols}

    def get_inputs():
        x = torch.randn(rows, cols)
        return [x]

    def get_init_inputs():
        return [{init}]
''')
FIELDS = {"body": "torch.clamp(x * self.scale, min=-1.0, max=1.0)", "rows": "512",
          "cols": "2048 * 3", "init": "0.75"}
ATOMS = ["x", "self.scale", "torch.", "relu(", "sum(", "matmul(", "x.T", "(", ")", ",", "*", "+",
         "-", "**", "dim=", "1", "0", "-1", "2048", "1e9", "[", "]", ":", "None", "lambda",
         "rows", "cols", "'s'", "keepdim=True", "x.shape[0]", "2 ** 100", "."]
PIECES = st.lists(st.sampled_from(ATOMS), max_size=30).map("".join)


def _import(text: str) -> object:
    """What `import kernelbench` makes of one file, in memory."""
    problem = read_problem(Path("1_fuzzed.py"), text)
    return problem.stem, problem.sizes, request(problem)


@given(st.sampled_from(sorted(FIELDS)), PIECES)
def test_any_change_to_a_problem_maps_or_is_refused(field: str, piece: str) -> None:
    """One part of a real problem replaced by anything: a task, or Refused with a reason."""
    bounded(_import, PROBLEM.format(**{**FIELDS, field: piece}), (Refused,))


@given(st.text(max_size=300))
def test_any_file_maps_or_is_refused(text: str) -> None:
    """Any text at all."""
    bounded(_import, text, (Refused,))


@pytest.mark.parametrize("make", [
    lambda k: PROBLEM.format(**{**FIELDS, "body": "(" * min(k, 190) + "x" + ")" * min(k, 190)}),
    lambda k: PROBLEM.format(**{**FIELDS, "body": "-" * k + "x"}),
    lambda k: PROBLEM.format(**{**FIELDS, "body": "x" + " + x" * k}),
    lambda k: PROBLEM.format(**{**FIELDS, "rows": "1" + " * 1" * k}),
    lambda k: PROBLEM.format(**{**FIELDS, "body": "x" + ".relu()" * k}),
], ids=["parentheses", "unary", "sum", "size-product", "method-chain"])
def test_deep_problems_are_refused_quickly_and_linearly(make: object) -> None:
    """Long and deeply nested expressions: Refused (never RecursionError), in linear time."""
    grows_linearly(_import, make, 2000, (Refused,))  # type: ignore[arg-type]


def test_the_unchanged_problem_maps() -> None:
    """The problem the fuzzing changes is one that maps, so changes reach every stage."""
    assert "'rows': 512" in str(_import(PROBLEM.format(**FIELDS)))
