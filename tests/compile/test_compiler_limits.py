"""Compilers run under a memory cap and a file-size cap: nvcc (and its tools) inherit them from
the compile child, the CPU backend's host compiler gets them before it starts. A compile that
needs more ends in a clear message, not a traceback or a full disk.

The sandbox (app.isolation.sandbox) applies limits of its own where it runs; these tests turn it
off, so
that what they see is this layer alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from heavy_templates import RUNAWAY

from app.base import system
from app.compile import compile_source
from app.compile.service import SERVICE
from app.engine.worker.backends.base import BackendError
from app.engine.worker.backends.cpu import toolchain

# Each level doubles the text: the preprocessor's output grows to about 80 MB.
MACRO_BOMB = """#define D0(x) x x
#define D1(x) D0(D0(x))
#define D2(x) D1(D1(x))
#define D3(x) D2(D2(x))
#define D4(x) D3(D3(x))
#define D5(x) D4(D4(x))
"""
# About 5 MB of preprocessed text from a few lines (a plain kernel makes 1.3 MB: cuda_runtime.h).
BIG_OUTPUT = """#define R4(x) x x x x
#define R16(x) R4(R4(x))
#define R256(x) R16(R16(x))
#define R4096(x) R16(R256(x))
extern "C" __global__ void k(float* a) {
    R4096(R16(a[threadIdx.x] = a[threadIdx.x] * 1.0001f + 0.5f;))
}
"""
HUNGRY_TEMPLATE = RUNAWAY.replace("T<N,N,N>", "T<30,30,30>")
needs_nvcc = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="needs nvcc")
needs_cxx = pytest.mark.skipif(toolchain.find_toolchain() is None, reason="needs g++")


@pytest.fixture(autouse=True)
def _no_sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Compile children started here run without the sandbox's own limits."""
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    SERVICE.close()
    yield
    SERVICE.close()


@needs_nvcc
def test_nvcc_over_the_memory_cap_stops_with_a_message(tmp_path: Path) -> None:
    result = compile_source(HUNGRY_TEMPLATE, filename="hungry.cu", folder=tmp_path,
                            backend="nvcc", memory_mb=400, timeout=120, use_cache=False)
    assert (result.ok, result.stage) == (False, "memory"), result.message
    assert result.message.startswith("compiling hungry.cu needed more than its 400 MiB memory cap")


@needs_nvcc
def test_nvcc_over_the_file_size_cap_stops_with_a_message(tmp_path: Path) -> None:
    result = compile_source(BIG_OUTPUT, filename="big.cu", folder=tmp_path, backend="nvcc",
                            file_mb=3, timeout=120, use_cache=False)
    assert (result.ok, result.stage) == (False, "crash"), result.message
    assert "a step of nvcc tried to write a file larger than its 3 MiB limit" in result.message
    small = 'extern "C" __global__ void k(float* a) { a[0] = 1.0f; }\n'
    after = compile_source(small, filename="k.cu", folder=tmp_path, backend="nvcc",
                           file_mb=3, use_cache=False)
    assert after.ok, after.message


@needs_cxx
def test_the_host_compiler_runs_with_both_caps() -> None:
    limits = toolchain._run(["cat", "/proc/self/limits"]).stdout
    assert f"Max address space         {toolchain.COMPILER_MEMORY}" in limits
    assert f"Max file size             {toolchain.COMPILER_FILE_LIMIT}" in limits


@needs_cxx
def test_the_host_compiler_over_its_memory_cap_is_a_clear_backend_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "COMPILER_MEMORY", 400 << 20)
    source = MACRO_BOMB + "int f() { return 0 D5(D5(+ 1)); }\n"
    compiler = toolchain.find_toolchain()
    assert compiler is not None
    with pytest.raises(BackendError) as caught:
        toolchain.preprocess(compiler, source, None, [])
    assert caught.value.kind == "unsupported"
    assert str(caught.value).startswith("the host compiler (building the kernel for the CPU "
                                        "backend) needed more than its 400 MiB memory cap")


@needs_cxx
def test_the_host_compiler_over_its_file_cap_is_a_clear_backend_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "COMPILER_FILE_LIMIT", 1 << 20)
    source = '__attribute__((used)) char table[4 << 20] = {1};\n'
    compiler = toolchain.find_toolchain()
    assert compiler is not None
    with pytest.raises(BackendError) as caught:
        toolchain.kernel_library(compiler, source, [])
    assert "tried to write a file larger than its 1 MiB limit" in str(caught.value)
