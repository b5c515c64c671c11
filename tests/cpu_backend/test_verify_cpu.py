"""The verifier on the CPU backend, for real (NVRTC for diagnostics, g++ and the emulation for
the runs, worker processes): every template passes and every hostile fixture gets its verdict.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.base import system
from app.base.paths import RESOURCES, ROOT
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

# Every spec of every template folder (a folder may hold variants of one contract).
TEMPLATES = sorted(p.relative_to(RESOURCES / "kernels").as_posix()
                   for p in (RESOURCES / "kernels").glob("*/*.toml"))
# Templates the CPU backend cannot emulate, and the reason its refusal must name.
GPU_ONLY = {"nf4_gemv/nf4_gemv.toml": "inline assembly",
            "nf4_gemv/nf4_gemv_ring.toml": "inline assembly"}
FIXTURES = Path(__file__).parent.parent / "fixtures" / "hostile"
# The verdict each fixture must get here. shared_race is a mismatch on the CPU even without a
# sanitizer: threads switch only at barriers, so the missing barrier always shows (its README).
EXPECTED = {
    "skip_tail": "unwritten", "first_block_only": "unwritten", "mutate_input": "input_changed",
    "write_past_end": "guard_zone", "constant_output": "mismatch", "stale_output": "unwritten",
    "hang": "timeout", "illegal_address": "crash", "shared_race": "mismatch",
    "read_past_end": "mismatch", "read_output_first": "mismatch", "off_by_one": "guard_zone",
    "memoised_result": "mismatch", "hard_coded_size": "unwritten",
    "precision_downgrade": "mismatch",
}


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_passes_on_the_cpu_backend(engine: Engine, name: str) -> None:
    verdict = verify_file(RESOURCES / "kernels" / name, VerifyOptions(backend="cpu"), engine)
    if name in GPU_ONLY:
        # Refused with the construct and its line, not passed, failed or crashed.
        assert verdict.status == "unverified", verdict.describe()
        assert f"not supported by the CPU backend: {GPU_ONLY[name]}" in verdict.message
        return
    assert verdict.status == "passed", verdict.describe()
    assert verdict.emulated and verdict.device["kind"] == "emulation"
    assert "CPU emulation" in verdict.describe()


def test_every_fixture_has_an_expected_verdict() -> None:
    assert sorted(EXPECTED) == sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_fixture_gets_its_verdict(engine: Engine, name: str) -> None:
    verdict = verify_file(FIXTURES / name / f"{name}.toml",
                          VerifyOptions(backend="cpu", timeout=1.5), engine)
    assert verdict.status == EXPECTED[name], verdict.describe()
    if name == "illegal_address":
        assert "write to 0x10 (a null or near-null pointer) in kernel illegal_address" in \
            verdict.message
    if name == "hang":
        assert "no answer within 1.5" in verdict.message and "the worker was killed" in \
            verdict.message


def test_an_unsupported_construct_makes_the_verdict_unverified(engine: Engine,
                                                               tmp_path: Path) -> None:
    spec = (RESOURCES / "kernels" / "vector_add" / "vector_add.toml").read_text()
    kernel = (RESOURCES / "kernels" / "vector_add" / "vector_add.cu").read_text()
    (tmp_path / "vector_add.toml").write_text(spec)
    (tmp_path / "vector_add_ref.py").write_text(
        (RESOURCES / "kernels" / "vector_add" / "vector_add_ref.py").read_text())
    (tmp_path / "vector_add.cu").write_text(kernel.replace(
        "c[i] = a[i] + b[i];", 'c[i] = a[i] + b[i]; asm volatile("membar.gl;");'))
    verdict = verify_file(tmp_path / "vector_add.toml", VerifyOptions(backend="cpu"), engine)
    assert verdict.status == "unverified" and verdict.exit_code == 3
    assert "not supported by the CPU backend: inline assembly (asm)" in verdict.message


def test_the_cli_verifies_with_cpu_emulation_where_there_is_no_gpu() -> None:
    # On a machine without a GPU, `auto` must pick the CPU backend; elsewhere ask for it.
    choice = ["--backend", "cpu"] if system.list_gpus() else []
    spec = RESOURCES / "kernels" / "vector_add" / "vector_add.toml"
    result = subprocess.run([sys.executable, "-m", "app", "verify", str(spec), *choice,
                             "--case", "n=1025", "--case", "n=1000003"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    # 3 seeds of the spec and one drawn now, printed so that it can be replayed.
    assert "PASSED: all 8 runs passed" in result.stdout
    assert "random seeds: " in result.stderr and "(replay one with --seed " in result.stderr
    assert "backend: cpu (CPU emulation" in result.stdout
    assert "timing is not meaningful" in result.stdout


def test_a_pass_on_a_weak_spec_comes_with_spec_check_warnings(tmp_path: Path) -> None:
    for name in ("vector_add.cu", "vector_add_ref.py"):
        (tmp_path / name).write_bytes((RESOURCES / "kernels" / "vector_add" / name).read_bytes())
    text = (RESOURCES / "kernels" / "vector_add" / "vector_add.toml").read_text()
    weak = "\n".join("cases = [{ n = 1 }]" if line.startswith("cases =") else line
                     for line in text.splitlines())
    (tmp_path / "vector_add.toml").write_text(weak)
    command = [sys.executable, "-m", "app", "verify", str(tmp_path / "vector_add.toml"),
               "--backend", "cpu"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASSED" in result.stdout
    assert "spec warning: weak spec: a kernel that writes only the first element" in result.stdout
    strong = subprocess.run([*command[:4], str(RESOURCES / "kernels" / "vector_add" /
                                              "vector_add.toml"), "--backend", "cpu"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert strong.returncode == 0 and "spec warning" not in strong.stdout


def test_without_a_host_compiler_the_cpu_backend_says_so() -> None:
    from app.engine.worker import backends

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNEL_STUDIO_CXX", "/nonexistent/g++")
        assert backends.usable("cpu") == ("no host C++ compiler found (install g++, or set "
                                          "KERNEL_STUDIO_CXX)")
