"""Several launches per run (spec version 2) on the real CPU backend, and on pycuda where a GPU
is: they run in order on the buffers they share, scratch is poisoned before every run and never
compared, and a verdict names the launch that faulted or timed out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

TEMPLATE = RESOURCES / "kernels" / "two_pass_sum"
FINISH_LOOP = "for (int i = threadIdx.x; i < blocks; i += THREADS)"
PARTIAL_STORE = "if (threadIdx.x == 0) partial[blockIdx.x] = value;"
BACKENDS = ["cpu", pytest.param("pycuda", marks=pytest.mark.gpu)]


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def two_pass(folder: Path, engine: Engine, *edits: tuple[str, str], cases: str = "",
             timeout: float = 10.0, backend: str = "cpu") -> Verdict:
    """two_pass_sum with its source edited, one seed and no fresh ones, on `backend`."""
    shutil.copytree(TEMPLATE, folder)
    source = folder / "two_pass_sum.cu"
    text = source.read_text("utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    source.write_text(text, "utf-8")
    spec = folder / "two_pass_sum.toml"
    spec_text = spec.read_text("utf-8").replace("seeds = 3", "seeds = 1")
    if cases:
        spec_text = "\n".join(cases if line.startswith("cases =") else line
                              for line in spec_text.splitlines()) + "\n"
    spec.write_text(spec_text, "utf-8")
    options = VerifyOptions(backend=backend, random_seeds=0, timeout=timeout)
    return verify_file(spec, options, engine)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_two_pass_template_passes_every_case(tmp_path: Path, engine: Engine,
                                                 backend: str) -> None:
    verdict = two_pass(tmp_path / "k", engine, backend=backend)
    assert verdict.status == "passed", verdict.describe()
    assert len(verdict.runs) >= 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrong_second_launch_fails_where_it_is_wrong(tmp_path: Path, engine: Engine,
                                                       backend: str) -> None:
    # Sums at most 255 partial sums: right while the first launch has at most 255 blocks.
    verdict = two_pass(tmp_path / "k", engine, (FINISH_LOOP, FINISH_LOOP.replace(
        "i < blocks", "i < blocks && i < 255")), backend=backend)
    assert verdict.status == "mismatch", verdict.describe()
    failed = {r.case["n"] for r in verdict.runs if not r.passed}
    assert failed and min(failed) > 255 * 256


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_past_the_scratch_buffer_is_a_guard_zone_finding(
        tmp_path: Path, engine: Engine, backend: str) -> None:
    verdict = two_pass(tmp_path / "k", engine,
                       (PARTIAL_STORE, PARTIAL_STORE.replace("[blockIdx.x]", "[blockIdx.x + 1]")),
                       backend=backend)
    assert verdict.status == "guard_zone", verdict.describe()
    assert "partial" in verdict.describe()


@pytest.mark.parametrize("backend", BACKENDS)
def test_scratch_starts_as_poison_so_a_kernel_relying_on_zeros_fails(
        tmp_path: Path, engine: Engine, backend: str) -> None:
    # Accumulates into the scratch buffer instead of storing: right only if it started at zero.
    verdict = two_pass(tmp_path / "k", engine, (PARTIAL_STORE, PARTIAL_STORE.replace(
        "partial[blockIdx.x] = value", "partial[blockIdx.x] += value")), backend=backend)
    assert verdict.status != "passed", verdict.describe()
    # Every run fails, whatever the outputs started as: scratch is the poison in each.
    assert not any(r.passed for r in verdict.runs)


def test_a_hanging_second_launch_is_named_in_the_timeout(tmp_path: Path, engine: Engine) -> None:
    hang = ('extern "C" __global__ void finish_sum(const float* partial, float* total, '
            'int blocks) {')
    verdict = two_pass(tmp_path / "k", engine, (hang, hang + "\n    for (;;) {}"),
                       cases="cases = [{ n = 1 }]", timeout=2.0)
    assert verdict.status == "timeout", verdict.describe()
    assert "launch 2 of 2 (finish_sum)" in verdict.describe()


def test_a_missing_second_entry_is_a_compile_error_naming_it(tmp_path: Path,
                                                             engine: Engine) -> None:
    verdict = two_pass(tmp_path / "k", engine, ("void finish_sum(", "void finish_total("))
    assert verdict.status == "compile_error"
    assert "finish_sum" in verdict.message
