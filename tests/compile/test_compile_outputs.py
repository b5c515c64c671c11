"""What a compile gives to inspect: SASS mapped to source lines, PTX per kernel, kernel symbols
for the worker, and theoretical occupancy."""

from __future__ import annotations

import pytest

from app.base import system
from app.compile import (
    KernelResources,
    SassError,
    compile_file,
    compile_source,
    default_arch,
    occupancy,
    ptx_function,
    sass_listing,
)

needs_nvcc = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="nvcc is not installed")

SOURCE = """__device__ float square(float x) {
    return x * x;
}

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + square(b[i]);
    }
}

template <typename T>
__global__ void fill(T* out, T value) { out[threadIdx.x] = value; }

template __global__ void fill<float>(float*, float);
template __global__ void fill<int>(int*, int);

namespace ops {
__global__ void negate(float* a) { a[threadIdx.x] = -a[threadIdx.x]; }
}

__global__ void plain(double* a) { a[0] = 1.0; }
"""


def line_of(text: str, fragment: str) -> int:
    """The 1-based line where `fragment` first appears."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """SOURCE compiled once for the module."""
    folder = tmp_path_factory.mktemp("outputs")
    result = compile_source(SOURCE, filename="ops.cu", folder=folder)
    assert result.ok, result.message
    return result


def test_kernel_symbols_for_extern_c_cpp_templates_and_namespaces(built) -> None:
    assert built.kernel_symbol("vector_add") == "vector_add"
    assert built.kernel_symbol("plain") == "_Z5plainPd"
    assert built.kernel_symbol("ops::negate") == "_ZN3ops6negateEPf"
    assert built.kernel_symbol("fill") is None  # two instances: ambiguous, the caller decides
    assert sorted(built.kernel_symbols("fill")) == ["_Z4fillIfEvPT_S0_", "_Z4fillIiEvPT_S0_"]
    assert built.kernel_symbol("fil") is None and built.kernel_symbol("square") is None


def test_sass_maps_each_instruction_to_a_source_line(built) -> None:
    listing = sass_listing(built, "vector_add")
    instructions = [s for s in listing if not s.text.endswith(":")]
    assert instructions and all(s.file == "ops.cu" for s in instructions)
    assert [s.offset for s in instructions] == sorted(s.offset for s in instructions)
    by_line = {s.line for s in instructions}
    assert line_of(SOURCE, "int i = blockIdx.x") in by_line
    assert line_of(SOURCE, "if (i < n)") in by_line
    # a[i] + square(b[i]) becomes one fused multiply-add on the line of the assignment.
    assert [s.line for s in instructions if s.text.startswith("FFMA")] == [
        line_of(SOURCE, "c[i] = a[i]")]
    assert any(s.text.startswith("EXIT") for s in instructions)


def test_sass_of_unknown_kernel_or_failed_compile_says_why(built, tmp_path) -> None:
    with pytest.raises(SassError, match="no kernel 'nope'"):
        sass_listing(built, "nope")
    failed = compile_source("__global__ void k( {", filename="x.cu", folder=tmp_path)
    with pytest.raises(SassError, match="the compile did not succeed"):
        sass_listing(failed, "k")


def test_ptx_per_kernel(built) -> None:
    ptx = ptx_function(built, "vector_add")
    assert ptx is not None and ".entry vector_add(" in ptx and ptx.rstrip().endswith("}")
    assert "_Z5plainPd" not in ptx
    assert ".target sm_90" in (built.ptx or "")
    assert ptx_function(built, "nope") is None


def test_default_arch_is_the_gpu_or_sm_90(write) -> None:
    gpus = system.list_gpus()
    assert default_arch() == (gpus[0].arch if gpus else "sm_90")
    assert compile_file(write("k.cu", SOURCE)).arch == default_arch()


def resources(registers: int = 32, shared: int = 0, max_threads: int = 1024) -> KernelResources:
    """A kernel's resources, for occupancy."""
    return KernelResources("k", registers, shared, 0, 0, 0, 0, 0, max_threads)


def test_occupancy_limits_follow_the_occupancy_calculator_rules() -> None:
    # sm_90: 64 warps, 32 blocks, 64K registers, 228 KiB shared per SM, 1 KiB reserved/block.
    full = occupancy(resources(), 256, 0, "sm_90")
    assert (full.active_blocks_per_sm, full.occupancy, full.limiter) == (8, 1.0, "warps")
    # 128 registers: 4096 per warp, 4 warps per 16K sub-partition, 16 warps: 2 blocks of 8.
    heavy = occupancy(resources(registers=128), 256, 0, "sm_90")
    assert (heavy.active_blocks_per_sm, heavy.occupancy, heavy.limiter) == (2, 0.25, "registers")
    # 100 KiB dynamic + 1 KiB reserved per block: two blocks fit in 228 KiB.
    shared = occupancy(resources(), 256, 100 * 1024, "sm_90")
    assert (shared.active_blocks_per_sm, shared.limiter) == (2, "shared memory")
    assert any("48 KiB" in note for note in shared.notes)
    # 32-thread blocks: the 32-block limit binds before the 64 warps.
    small = occupancy(resources(), 32, 0, "sm_90")
    assert (small.active_blocks_per_sm, small.occupancy, small.limiter) == (32, 0.5, "blocks")
    # sm_86 has 48 warps per SM and 16 blocks.
    ampere = occupancy(resources(), 1024, 0, "sm_86")
    assert (ampere.active_blocks_per_sm, ampere.occupancy) == (1, 32 / 48)


def test_occupancy_of_a_block_larger_than_the_kernel_allows_is_zero(built) -> None:
    capped = occupancy(resources(max_threads=128), 256, 0, "sm_90")
    assert (capped.active_blocks_per_sm, capped.occupancy, capped.limiter) == (0, 0.0, "block size")
    with pytest.raises(ValueError, match="no occupancy data for sm_61"):
        occupancy(resources(), 256, 0, "sm_61")
    real = occupancy(built.kernels[0], 256, 0, built.arch)
    assert 0 < real.occupancy <= 1


@needs_nvcc
def test_nvcc_backend_gives_the_same_contract(write) -> None:
    path = write("ops.cu", SOURCE)
    result = compile_file(path, backend="nvcc")
    assert result.ok and result.backend == "nvcc" and result.compiler.startswith("nvcc ")
    assert result.kernel_symbol("vector_add") == "vector_add"
    assert ".entry vector_add(" in (result.ptx or "")
    listing = sass_listing(result, "vector_add")
    assert {s.file for s in listing if s.file} == {"ops.cu"}
    assert line_of(SOURCE, "int i = blockIdx.x") in {s.line for s in listing}
