"""The parity corpus (tests/cpu_backend/parity/) on a GPU: every kernel gets the verdict the
index expects, and the CPU emulation never passes a kernel that the GPU fails."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.base.paths import ROOT
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

pytestmark = pytest.mark.gpu

CORPUS = ROOT / "tests" / "cpu_backend" / "parity"
KERNELS = tomllib.loads((CORPUS / "corpus.toml").read_text())["kernel"]


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    """One engine: warm pycuda and cpu workers across the corpus."""
    with Engine() as shared:
        yield shared


def _verdict(engine: Engine, spec: Path, backend: str) -> tuple[str, str]:
    """Status and message of one verification with the spec's own seeds only."""
    options = VerifyOptions(backend=backend, random_seeds=0, trusted=True)
    verdict = verify_file(spec, options, engine)
    return str(verdict.status), verdict.message


@pytest.mark.parametrize("kernel", KERNELS, ids=[k["name"] for k in KERNELS])
def test_the_gpu_gives_the_expected_verdict_and_the_cpu_never_passes_more(
        engine: Engine, kernel: dict[str, str]) -> None:
    gpu, message = _verdict(engine, CORPUS / kernel["spec"], "pycuda")
    assert gpu == kernel["gpu"], message
    cpu, cpu_message = _verdict(engine, CORPUS / kernel["spec"], "cpu")
    assert cpu in (gpu, "unverified"), cpu_message
