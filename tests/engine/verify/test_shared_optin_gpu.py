"""On an NVIDIA GPU (pycuda backend): a launch that takes more than the 48 KB of shared memory a
kernel gets without opting in (nf4_gemv_ring: 41 KB static and 60 KB dynamic a block) verifies
and is timed, because the backend asks the driver for the launch's size; a size past what the
GPU gives a block is refused with the numbers and what to change, not a bare launch error."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.bench.runner import BenchOptions, bench_file
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

RING = RESOURCES / "kernels" / "nf4_gemv" / "nf4_gemv_ring.toml"


@pytest.fixture(scope="module")
def engine():
    """One engine for the module: a warm worker."""
    with Engine() as shared:
        yield shared


@pytest.mark.gpu
def test_a_launch_past_48_kb_of_shared_memory_verifies_and_is_timed(engine: Engine) -> None:
    verdict = verify_file(RING, VerifyOptions("pycuda"), engine)
    assert verdict.status == "passed", verdict.describe()
    report = bench_file(RING, BenchOptions(backend="pycuda", budget_ms=300.0), engine=engine)
    assert report.status == "timed", report.describe()


@pytest.mark.gpu
def test_more_shared_memory_than_a_block_may_have_is_refused_clearly(engine: Engine,
                                                                     tmp_path: Path) -> None:
    text = RING.read_text().replace('shared_bytes = "8 * 3 * 16 * 160"', 'shared_bytes = "300000"')
    spec = tmp_path / "nf4_gemv_ring.toml"
    spec.write_text(text)
    for name in ("nf4_gemv_ring.cu", "nf4_gemv_ref.py"):
        (tmp_path / name).write_text((RING.parent / name).read_text())
    verdict = verify_file(spec, VerifyOptions("pycuda"), engine)
    assert verdict.status != "passed"
    assert "300000 bytes of dynamic shared memory" in verdict.describe(), verdict.describe()
    assert "lower shared_bytes" in verdict.describe()
