"""On an NVIDIA GPU (pycuda backend): template instantiations as entries verify and bench with
either compiler (NVRTC's name expressions, nvcc's appended instantiation), two instances of
one template run as two launches, and the wrong instantiations fail as on the CPU backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.bench.runner import BenchOptions, bench_file
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

SCALE = RESOURCES / "kernels" / "scale" / "scale.toml"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "template_entries"
EXPECTED = {"two_instances": "passed", "wrong_width": "unwritten",
            "wrong_for_float": "mismatch", "missing_instance": "compile_error"}


@pytest.fixture(scope="module")
def engine():
    """One engine for the module: a warm worker."""
    with Engine() as shared:
        yield shared


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
def test_the_template_example_verifies_with_either_compiler(engine: Engine,
                                                            compiler: str) -> None:
    verdict = verify_file(SCALE, VerifyOptions("pycuda", compiler=compiler), engine)
    assert verdict.status == "passed", verdict.describe()
    assert verdict.device["kind"] == "gpu"


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
def test_the_template_example_is_timed_with_either_compiler(engine: Engine,
                                                            compiler: str) -> None:
    options = BenchOptions(backend="pycuda", budget_ms=300.0, compiler=compiler)
    report = bench_file(SCALE, options, engine=engine)
    assert report.status == "timed", report.describe()
    [variant] = report.points[0].variants
    assert variant.stats is not None and variant.stats.count >= 10, report.describe()


@pytest.mark.gpu
@pytest.mark.parametrize(("name", "status"), sorted(EXPECTED.items()))
def test_template_entry_fixture_gets_its_verdict_on_the_gpu(engine: Engine, name: str,
                                                            status: str) -> None:
    verdict = verify_file(FIXTURES / name / "scale.toml", VerifyOptions("pycuda"), engine)
    assert verdict.status == status, verdict.describe()
