"""The parity corpus (tests/cpu_backend/parity/, issue 23) on the CPU emulation: every kernel
gets the verdict a GPU gives it, or is refused (unverified) naming the construct that the
emulation cannot make behave as the GPU; never "passed" where the GPU fails."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

CORPUS = Path(__file__).parent / "parity"
KERNELS = tomllib.loads((CORPUS / "corpus.toml").read_text())["kernel"]


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def test_the_corpus_is_large_and_indexed() -> None:
    assert len(KERNELS) >= 60
    assert len({k["name"] for k in KERNELS}) == len(KERNELS)
    for kernel in KERNELS:
        assert (CORPUS / kernel["spec"]).is_file(), kernel["spec"]
        assert kernel["gpu"] in ("passed", "mismatch", "crash"), kernel
    assert any(k["gpu"] != "passed" for k in KERNELS)


@pytest.mark.parametrize("kernel", KERNELS, ids=[k["name"] for k in KERNELS])
def test_the_cpu_gives_the_gpu_verdict_or_refuses(engine: Engine, kernel: dict[str, str]) -> None:
    options = VerifyOptions(backend="cpu", random_seeds=0, trusted=True)
    verdict = verify_file(CORPUS / kernel["spec"], options, engine)
    refused = kernel.get("cpu_refuses")
    if refused:
        assert verdict.status == "unverified" and verdict.exit_code == 3, verdict.describe()
        assert "not supported by the CPU backend" in verdict.message
        assert refused in verdict.message, verdict.message
    else:
        assert verdict.status == kernel["gpu"], verdict.describe()
