"""Outputs start some runs at zero, some at the poison NaN and some at random ordinary values,
so a kernel that writes only where it finds something (non-zero, NaN) fails however few seeds
a spec has; and every verification adds seeds drawn when it starts. Real engine, CPU backend,
real NVRTC."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.buffers import Start
from app.engine.verify.results import Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.seeds import FRESH_FLOOR, draw_seeds, plan_runs
from app.engine.verify.verifier import verify_file

HEAD = 'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)'
INDEX = "int i = blockIdx.x * blockDim.x + threadIdx.x;"
# Write only where the output holds something: zero-filled buffers come back untouched.
WHERE_NONZERO = f"{{ {INDEX} if (i < n && c[i] != 0.0f) c[i] = a[i] + b[i]; }}"
# Write only where the output holds a NaN (the poison).
WHERE_NAN = f"{{ {INDEX} if (i < n && isnan(c[i])) c[i] = a[i] + b[i]; }}"


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def verdict_of(folder: Path, body: str, engine: Engine, **options: object) -> Verdict:
    """vector_add with another body, one seed, cases n=1 and n=1000, on the CPU backend."""
    shutil.copytree(RESOURCES / "kernels" / "vector_add", folder)
    (folder / "vector_add.cu").write_text(f"{HEAD}\n{body}\n", "utf-8")
    spec = folder / "vector_add.toml"
    text = spec.read_text("utf-8")
    lines = [line for line in text.splitlines() if not line.startswith(("cases =", "seeds ="))]
    at = lines.index("[verify]") + 1
    lines[at:at] = ["cases = [{ n = 1 }, { n = 1000 }]", "seeds = 1"]
    spec.write_text("\n".join(lines) + "\n", "utf-8")
    return verify_file(spec, VerifyOptions(backend="cpu", **options), engine)  # type: ignore[arg-type]


@pytest.mark.parametrize("body", [WHERE_NONZERO, WHERE_NAN], ids=["nonzero", "nan"])
def test_a_kernel_that_writes_only_where_it_finds_something_fails(
        tmp_path: Path, engine: Engine, body: str) -> None:
    verdict = verdict_of(tmp_path / "k", body, engine)
    assert verdict.status == "mismatch", verdict.describe()
    failed = next(r for r in verdict.runs if not r.passed)
    assert failed.start == Start.ZEROS and "outputs started at zero" in verdict.describe()


def test_exact_repeats_still_start_every_case_at_zero_once(tmp_path: Path,
                                                           engine: Engine) -> None:
    verdict = verdict_of(tmp_path / "k", WHERE_NONZERO, engine, random_seeds=0)
    assert verdict.status == "mismatch" and verdict.fresh_seeds == []
    assert {r.seed for r in verdict.runs} == {0}


def test_a_correct_kernel_passes_from_every_start(tmp_path: Path, engine: Engine) -> None:
    body = f"{{ {INDEX} if (i < n) c[i] = a[i] + b[i]; }}"
    verdict = verdict_of(tmp_path / "k", body, engine)
    assert verdict.passed, verdict.describe()
    assert {r.start for r in verdict.runs if r.case == {"n": 1}} >= {"zeros", "poison"}


def test_every_case_sees_zeros_and_poison_without_extra_runs_when_a_seed_is_fresh() -> None:
    for spec_seeds in range(1, 5):
        seeds = [*range(spec_seeds), *draw_seeds(1, range(spec_seeds))]
        plan = plan_runs(seeds)
        assert len(plan) == len(seeds) and seeds[-1] >= FRESH_FLOOR
        assert {Start.ZEROS, Start.POISON} <= {start for _, start in plan}
    # With no fresh seed, the missing starts are added as runs.
    assert [start for _, start in plan_runs([0])] == [Start.POISON, Start.ZEROS]
    assert len(set(draw_seeds(50))) == 50
