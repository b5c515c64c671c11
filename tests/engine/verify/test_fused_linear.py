"""A hand-written level 2 kernel, linear_leaky_relu (a linear layer, a multiply and a LeakyReLU
in one launch: the layer of KernelBench's level 2 problem 12), on the real CPU backend and, where
a GPU is, on pycuda: the template passes every case, and the bugs a tiled GEMM is written with
(a missing bounds check along in_features, a tile taken from the wrong block index, stores past
the last column, a barrier left out) are each caught with the finding they should give, in exactly
the cases that can show them. On the GPU it is also timed at KernelBench's sizes, and against
the PyTorch forward of the same layer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.bench.against_pytorch import compare_file
from app.engine.bench.runner import BenchOptions, bench_file
from app.engine.verify.results import Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.spec.model import load_spec

NAME = "linear_leaky_relu"
TEMPLATE = RESOURCES / "kernels" / NAME
BACKENDS = ["cpu", pytest.param("pycuda", marks=pytest.mark.gpu)]
TILE = 64  # output rows and columns per block, as in the kernel
STEP = 16  # in_features per shared-memory stage
X_LOAD = "(row < batch && k < in_features)"
W_LOAD = "(col < out_features && k < in_features)"
W_TILE = "const int col = col0 + r;"
COL_STORE = "if (col < out_features) {"
FIRST_BARRIER = "// The stage must be complete before anyone reads it...\n        __syncthreads();"
# Our own text of the layer in KernelBench's problem format (Model, get_inputs, get_init_inputs),
# at the sizes of the template's bench case.
PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer whose output is scaled by a constant and passed through LeakyReLU."""

    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        scaled = self.linear(x) * self.multiplier
        return torch.nn.functional.leaky_relu(scaled, self.negative_slope)


def get_inputs():
    return [torch.rand(1024, 8192)]


def get_init_inputs():
    return [8192, 8192, 2.0, 0.1]
'''


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def copy_template(folder: Path, *edits: tuple[str, str]) -> Path:
    """A private copy of the template with its source edited and one seed; its spec."""
    shutil.copytree(TEMPLATE, folder)
    source = folder / f"{NAME}.cu"
    text = source.read_text("utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    source.write_text(text, "utf-8")
    spec = folder / f"{NAME}.toml"
    spec.write_text(spec.read_text("utf-8").replace("seeds = 3", "seeds = 1"), "utf-8")
    return spec


def fused(folder: Path, engine: Engine, *edits: tuple[str, str], backend: str = "cpu") -> Verdict:
    """The edited template verified on `backend`, one seed and no fresh ones."""
    options = VerifyOptions(backend=backend, random_seeds=0)
    return verify_file(copy_template(folder, *edits), options, engine)


def failed_cases(verdict: Verdict) -> list[tuple[int, int, int]]:
    """(batch, in_features, out_features) of every case with a failed run."""
    return sorted({(r.case["batch"], r.case["in_features"], r.case["out_features"])
                   for r in verdict.runs if not r.passed})


def all_cases() -> list[tuple[int, int, int]]:
    """(batch, in_features, out_features) of every verify case of the template."""
    spec = load_spec(TEMPLATE / f"{NAME}.toml")
    return sorted((int(c["batch"]), int(c["in_features"]), int(c["out_features"]))
                  for c in spec.cases)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_fused_layer_passes_every_case(tmp_path: Path, engine: Engine, backend: str) -> None:
    verdict = fused(tmp_path / "k", engine, backend=backend)
    assert verdict.status == "passed", verdict.describe()
    assert len(verdict.runs) >= len(all_cases())


@pytest.mark.parametrize("backend", BACKENDS)
def test_loads_without_the_in_features_check_fail_where_a_stage_hangs_over(
        tmp_path: Path, engine: Engine, backend: str) -> None:
    # The last stage then reads past the end of each row: the next row's values, and past the
    # last row the guard zone's NaNs.
    verdict = fused(tmp_path / "k", engine, (X_LOAD, "(row < batch)"),
                    (W_LOAD, "(col < out_features)"), backend=backend)
    assert verdict.status == "mismatch", verdict.describe()
    assert failed_cases(verdict) == [c for c in all_cases() if c[1] % STEP]
    assert any(c[1] % STEP == 0 for c in all_cases())  # a case where the bug cannot show


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_weight_tile_taken_from_the_batch_index_fails_past_the_first_tile(
        tmp_path: Path, engine: Engine, backend: str) -> None:
    verdict = fused(tmp_path / "k", engine, (W_TILE, "const int col = row0 + r;"),
                    backend=backend)
    assert verdict.status == "mismatch", verdict.describe()
    # Right only where there is one tile, where both indices are 0.
    assert failed_cases(verdict) == [c for c in all_cases() if c[0] > TILE or c[2] > TILE]
    assert any(c[0] <= TILE and c[2] <= TILE for c in all_cases())


@pytest.mark.parametrize("backend", BACKENDS)
def test_stores_past_the_last_column_are_a_guard_zone_finding(tmp_path: Path, engine: Engine,
                                                              backend: str) -> None:
    # Without the column check the last tile of a row writes on into the next row and, from
    # the last row, up to 63 elements past the end of out: into its guard zone.
    verdict = fused(tmp_path / "k", engine, (COL_STORE, "{"), backend=backend)
    assert verdict.status == "guard_zone", verdict.describe()
    assert "out" in verdict.describe()
    assert failed_cases(verdict) == [c for c in all_cases() if c[2] % TILE]
    assert any(c[2] % TILE == 0 for c in all_cases())


def test_a_missing_barrier_reads_a_stage_before_it_is_loaded(tmp_path: Path,
                                                             engine: Engine) -> None:
    # On the CPU backend a block's threads take turns and switch only at barriers, so without
    # the first one each thread computes from a stage the others have not stored yet: always
    # caught there. On a GPU whether such a race shows is up to the scheduler (racecheck is the
    # tool), so this one runs on the CPU only.
    verdict = fused(tmp_path / "k", engine, (FIRST_BARRIER, ""))
    assert verdict.status == "mismatch", verdict.describe()


@pytest.mark.gpu
def test_the_fused_layer_is_timed_at_kernelbench_sizes(engine: Engine) -> None:
    spec = TEMPLATE / f"{NAME}.toml"
    report = bench_file(spec, BenchOptions(backend="pycuda", budget_ms=500.0), engine=engine)
    print(report.describe())
    assert report.status == "timed", report.describe()
    [variant] = report.points[0].variants
    assert variant.case == {"batch": 1024, "in_features": 8192, "out_features": 8192}
    assert variant.stats is not None and variant.stats.count >= 10, report.describe()
    assert variant.checks and all(c.status == "passed" for c in variant.checks)
    # 137 GFLOP a call. A 64 x 64 register-blocked tile should reach well over 3 TFLOP/s on an
    # H200 (its float32 peak is about 67); less means the tiling does not work as written.
    assert variant.gflops is not None and variant.gflops > 3000, report.describe()
    assert "above_roofline" not in [flag.code for flag in report.all_flags()]


@pytest.mark.gpu
def test_the_fused_layer_against_the_pytorch_forward_of_the_same_layer(tmp_path: Path) -> None:
    folder = tmp_path / NAME
    spec = copy_template(folder)
    (folder / "problem.py").write_text(PROBLEM, "utf-8")
    options = BenchOptions(backend="pycuda", budget_ms=500.0, trusted=True)
    result = compare_file(spec, options, compile_too=False)
    print(result.describe())
    assert result.bench.status == "timed", result.describe()
    assert result.forward.facts["inputs"].startswith("the kernel's bench inputs")
    eager = result.speedup("eager")
    assert eager is not None, result.describe()
    assert 0 < eager.low <= eager.speedup <= eager.high
    # cuBLAS's float32 GEMM is several times faster than a hand tile, but not 20 times.
    assert eager.speedup > 0.05, result.describe()
