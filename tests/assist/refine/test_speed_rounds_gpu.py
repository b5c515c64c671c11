"""Keep the fastest that passes, on a GPU (issue 27): propose with a speed round benches each
kernel that passes with bench's own timer, and keeps the faster of a slow first kernel and a
fast second one, with the ratio between them. The model is scripted (the loop and the timing
are under test); the verifier, the bench and the worker are real."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.assist.model.batch import Request
from app.assist.refine.proposing import ProposeSettings, propose_kernels
from app.assist.tasks.suite import TASKS_DIR
from tests.assist.scripted import ADDS, ScriptedModel

pytestmark = pytest.mark.gpu

ADD = TASKS_DIR / "add_f32" / "add_f32.toml"
# Right, and slow: a few thousand dependent operations per element before the sum.
SLOW = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) {\n        float waste = a[i];\n"
        "        for (int k = 0; k < 4000; ++k) waste = sinf(waste) * 0.5f;\n"
        "        c[i] = a[i] + b[i] + waste * 0.0f;\n    }\n}\n")


class SlowThenFast:
    """The first answer slow, every later one fast."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Request) -> str:
        self.calls += 1
        return SLOW if self.calls == 1 else ADDS


def test_a_speed_round_keeps_the_faster_kernel_benched_on_the_gpu(tmp_path: Path) -> None:
    settings = ProposeSettings(chains=1, rounds=2, skills=False, examples=False,
                               backend="pycuda", speed_rounds=1)
    made = propose_kernels(ScriptedModel(SlowThenFast()), ADD, "", tmp_path / "run", settings)
    assert [a.status for a in made.attempts] == ["passed", "passed"]
    first, second = made.attempts
    assert first.time_ms is not None and second.time_ms is not None
    assert "its largest verify case {n=65537}" in first.timing
    assert made.passed is second and made.speedup is not None and made.speedup > 2.0
    assert made.speedup == pytest.approx(first.time_ms / second.time_ms)
