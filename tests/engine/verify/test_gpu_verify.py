"""On an NVIDIA GPU (pycuda backend): every template passes, every hostile fixture gets its
verdict, sanitizers report what plain runs miss, and a faulted worker is replaced."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hostile"
TEMPLATES = sorted(p.name for p in (RESOURCES / "kernels").iterdir() if p.is_dir())
HOSTILE = {
    "skip_tail": "unwritten",
    "first_block_only": "unwritten",
    "mutate_input": "input_changed",
    "write_past_end": "guard_zone",
    "constant_output": "mismatch",
    "stale_output": "unwritten",
    "hang": "timeout",
    "illegal_address": "crash",
    "read_past_end": "mismatch",
    "read_output_first": "mismatch",
    "off_by_one": "guard_zone",
    "memoised_result": "mismatch",
    "hard_coded_size": "unwritten",
    "precision_downgrade": "mismatch",
}


@pytest.fixture(scope="module")
def engine():
    """One engine for the module: a warm worker, replaced after each fault."""
    with Engine() as shared:
        yield shared


def spec_path(folder: Path, name: str) -> Path:
    """The spec of a template or fixture."""
    return folder / name / f"{name}.toml"


@pytest.mark.gpu
@pytest.mark.parametrize("name", TEMPLATES)
def test_template_passes_on_the_gpu(name: str, engine: Engine) -> None:
    verdict = verify_file(spec_path(RESOURCES / "kernels", name), VerifyOptions("pycuda"),
                          engine)
    assert verdict.status == "passed", verdict.describe()
    assert verdict.device["kind"] == "gpu"


@pytest.mark.gpu
@pytest.mark.parametrize(("name", "status"), sorted(HOSTILE.items()))
def test_hostile_fixture_is_caught(name: str, status: str, engine: Engine) -> None:
    options = VerifyOptions("pycuda", timeout=2.0)
    verdict = verify_file(spec_path(FIXTURES, name), options, engine)
    assert verdict.status == status, verdict.describe()
    if status == "crash":
        assert "illegal" in verdict.message.lower() or "CUDA error" in verdict.message


@pytest.mark.gpu
def test_a_fresh_worker_serves_within_seconds_after_a_crash(engine: Engine) -> None:
    crashed = verify_file(spec_path(FIXTURES, "illegal_address"), VerifyOptions("pycuda"), engine)
    assert crashed.status == "crash"
    started = time.monotonic()
    verdict = verify_file(spec_path(RESOURCES / "kernels", "vector_add"),
                          VerifyOptions("pycuda", seeds=1, cases=[{"n": 1000}]), engine)
    assert verdict.passed, verdict.describe()
    assert time.monotonic() - started < 5.0


@pytest.mark.gpu
def test_racecheck_finds_the_missing_barrier(engine: Engine) -> None:
    verdict = verify_file(spec_path(FIXTURES, "shared_race"),
                          VerifyOptions("pycuda", sanitize="racecheck"), engine)
    assert verdict.status == "sanitizer", verdict.describe()
    assert verdict.sanitizer and verdict.sanitizer[0]["tool"] == "racecheck"


@pytest.mark.gpu
def test_racecheck_passes_the_correct_reduction(engine: Engine) -> None:
    verdict = verify_file(spec_path(RESOURCES / "kernels", "reduce_sum"),
                          VerifyOptions("pycuda", sanitize="racecheck"), engine)
    assert verdict.status == "passed", verdict.describe()


@pytest.mark.gpu
def test_memcheck_reports_the_out_of_bounds_read(engine: Engine) -> None:
    verdict = verify_file(spec_path(FIXTURES, "read_past_end"),
                          VerifyOptions("pycuda", sanitize="memcheck"), engine)
    assert verdict.status == "sanitizer", verdict.describe()
    kinds = " ".join(item["kind"] for item in verdict.sanitizer)
    assert "Invalid __global__ read" in kinds
    assert any(".cu:" in item["location"] for item in verdict.sanitizer), verdict.sanitizer


@pytest.mark.gpu
def test_initcheck_reports_a_read_of_an_output_nothing_wrote(engine: Engine) -> None:
    verdict = verify_file(spec_path(FIXTURES, "read_output_first"),
                          VerifyOptions("pycuda", sanitize="initcheck"), engine)
    assert verdict.status == "sanitizer", verdict.describe()
    assert any("Uninitialized" in item["kind"] for item in verdict.sanitizer), verdict.sanitizer


@pytest.mark.gpu
def test_initcheck_passes_a_kernel_that_only_writes_its_output(engine: Engine) -> None:
    verdict = verify_file(spec_path(RESOURCES / "kernels", "vector_add"),
                          VerifyOptions("pycuda", sanitize="initcheck"), engine)
    assert verdict.status == "passed", verdict.describe()
