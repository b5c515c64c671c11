"""Kernels whose file names the compilers would misread (a leading `-`, a quote, a backslash)
compile and verify like any other, and diagnostics and SASS still name the user's file; run
through the real CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.base import system
from app.base.paths import ROOT

VECTOR_ADD = ROOT / "resources" / "kernels" / "vector_add"
NAMES = ["-rf.cu", 'q"uote.cu', "back\\slash.cu"]
BACKENDS = ["nvrtc", pytest.param("nvcc", marks=pytest.mark.skipif(
    system.find_tool("nvcc") is None, reason="nvcc is not installed"))]


def kernel_studio(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m app ARGS` in a child process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=240, check=False)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_odd_name_compiles_and_sass_names_it(tmp_path: Path, name: str, backend: str) -> None:
    path = tmp_path / name
    shutil.copy(VECTOR_ADD / "vector_add.cu", path)
    done = kernel_studio("compile", "--no-cache", "--backend", backend, "--sass", "--", str(path))
    assert done.returncode == 0, done.stderr
    assert f"// {name}:14" in done.stdout
    assert "kernel_studio_main" not in done.stdout + done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_odd_name_errors_point_at_the_users_file(tmp_path: Path, name: str,
                                                 backend: str) -> None:
    text = (VECTOR_ADD / "vector_add.cu").read_text()
    path = tmp_path / name
    path.write_text(text.replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i] + nope;"))
    done = kernel_studio("compile", "--no-cache", "--backend", backend, "--", str(path))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f'{name}:19:'), done.stderr
    assert 'identifier "nope" is undefined' in done.stderr


@pytest.mark.parametrize("compiler", BACKENDS)
@pytest.mark.parametrize("name", ["-rf.cu", 'q"uote.cu'])
def test_verify_runs_a_kernel_with_an_odd_name(tmp_path: Path, name: str,
                                               compiler: str) -> None:
    for item in VECTOR_ADD.iterdir():
        if item.is_file():
            shutil.copy(item, tmp_path / item.name)
    shutil.copy(VECTOR_ADD / "vector_add.cu", tmp_path / name)
    spec = (tmp_path / "vector_add.toml").read_text()
    spec = spec.replace('source = "vector_add.cu"', f"source = '{name}'")
    (tmp_path / "odd.toml").write_text(spec)
    done = kernel_studio("verify", str(tmp_path / "odd.toml"), "--backend", "cpu",
                         "--compiler", compiler, "--case", "n=1025")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "runs passed" in done.stdout
