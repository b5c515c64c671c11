"""Model-written kernels and the trust rule: without a sandbox they are vouched for only where
their host code can never run (a GPU) and the user's own spec is trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.assist.refine.verifypool import vouch_for
from app.base import system
from app.base.paths import RESOURCES
from app.isolation import sandbox, trust
from app.spec.model import load_spec


@pytest.fixture
def trusted_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A copy of vector_add, trusted by its content, with the sandbox turned off."""
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    # The kernel's folder apart from the data folder: trust covers every file of the folder,
    # and the trust file itself would change it.
    folder = tmp_path / "kernel"
    folder.mkdir()
    for name in ("vector_add.cu", "vector_add.toml", "vector_add_ref.py"):
        (folder / name).write_bytes((RESOURCES / "kernels" / "vector_add" / name).read_bytes())
    spec = load_spec(folder / "vector_add.toml")
    trust.add(spec)
    return spec


def test_without_a_sandbox_a_cpu_candidate_is_never_vouched_for(trusted_spec) -> None:
    assert not sandbox.available()[0] and trust.is_trusted(trusted_spec)
    assert vouch_for(trusted_spec, "cpu") is None  # its host code would run natively


@pytest.mark.skipif(system.list_gpus() != [], reason="auto picks the GPU where there is one")
def test_auto_without_a_gpu_is_the_cpu_backend_and_not_vouched_for(trusted_spec) -> None:
    assert vouch_for(trusted_spec, "auto") is None


@pytest.mark.gpu
def test_on_a_gpu_the_users_trusted_spec_vouches_for_its_candidates(trusted_spec) -> None:
    assert vouch_for(trusted_spec, "pycuda") is True
