"""Choosing the compiler: `[kernel] compiler = "nvrtc" | "nvcc"` in the spec and `--compiler` on
verify and bench, carried to the real compile of a real verification (CPU backend)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.base import system
from app.base.paths import RESOURCES, ROOT
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.worker.backends.cpu.toolchain import find_toolchain
from app.spec.model import Compiler, SpecError, load_spec, parse_spec_text
from app.spec.writing import spec_to_toml

TEMPLATE = RESOURCES / "kernels" / "vector_add"
# Device code plus a host helper (as launchers bring): nvcc builds it, NVRTC refuses host code.
WITH_HOST_CODE = """static int blocks_for(int n) { return (n + 255) / 256; }

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def _kernel_folder(tmp_path: Path, compiler_line: str = "") -> Path:
    """vector_add's template with the kernel above, and `compiler_line` in [kernel]."""
    folder = tmp_path / "k"
    shutil.copytree(TEMPLATE, folder)
    (folder / "vector_add.cu").write_text(WITH_HOST_CODE)
    spec = folder / "vector_add.toml"
    text = spec.read_text().replace('options = []', f'options = []\n{compiler_line}')
    spec.write_text(text.replace("{ n = 65537 }, { n = 1_000_003 }", "{ n = 4099 }"))
    return spec


def test_the_spec_says_which_compiler(tmp_path: Path) -> None:
    assert load_spec(_kernel_folder(tmp_path)).compiler == Compiler.NVRTC
    spec = load_spec(_kernel_folder(tmp_path / "b", 'compiler = "nvcc"'))
    assert spec.compiler == Compiler.NVCC
    again = parse_spec_text(spec_to_toml(spec), spec.base_dir)
    assert again.compiler == "nvcc"


@pytest.mark.parametrize(("value", "shown"), [('"gcc"', "'gcc'"), ("3", "a int"),
                                              ('"NVCC"', "'NVCC'")])
def test_a_bad_compiler_is_named_with_what_to_write(tmp_path: Path, value: str,
                                                    shown: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(_kernel_folder(tmp_path, f"compiler = {value}"))
    assert [str(p) for p in caught.value.problems] == [
        f'[kernel].compiler: {shown} is not a compiler Kernel Studio can use: write "nvrtc" '
        '(the default) or "nvcc" (needed when the file also has host code)']


def test_the_cli_refuses_an_unknown_compiler(tmp_path: Path) -> None:
    spec = _kernel_folder(tmp_path)
    for command in ("verify", "bench"):
        done = subprocess.run([sys.executable, "-m", "app.cli.entry", command, str(spec),
                               "--compiler", "clang"], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)
        assert done.returncode == 2
        assert "--compiler: invalid choice: 'clang' (choose from nvrtc, nvcc)" in done.stderr \
            or "--compiler: invalid choice: 'clang' (choose from 'nvrtc', 'nvcc')" in done.stderr


needs_both = pytest.mark.skipif(system.find_tool("nvcc") is None or find_toolchain() is None,
                                reason="needs nvcc and a host C++ compiler (CPU backend)")


@needs_both
def test_the_choice_reaches_the_compile_of_a_verification(tmp_path: Path) -> None:
    default_spec = _kernel_folder(tmp_path / "default")
    nvcc_spec = _kernel_folder(tmp_path / "spec", 'compiler = "nvcc"')
    with Engine() as engine:
        refused = verify_file(default_spec, VerifyOptions(backend="cpu", trusted=True), engine)
        by_flag = verify_file(default_spec, VerifyOptions(backend="cpu", trusted=True,
                                                          compiler="nvcc"), engine)
        by_spec = verify_file(nvcc_spec, VerifyOptions(backend="cpu", trusted=True), engine)
        overridden = verify_file(nvcc_spec, VerifyOptions(backend="cpu", trusted=True,
                                                          compiler="nvrtc"), engine)
    assert refused.status == "compile_error" and "compile with nvcc" in refused.message
    assert overridden.status == "compile_error"
    assert by_flag.status == "passed", by_flag.describe()
    assert by_spec.status == "passed", by_spec.describe()
