"""Constructs the CPU backend cannot emulate are named before anything runs, never turned
into a wrong verdict; and the source rewrites keep the user's lines where they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.worker.backends.cpu import source
from tests.cpu_backend.harness import CpuWorker, LaunchFailed

KERNEL = """{prelude}
extern "C" __global__ void k(float* out, int n)
{{
    int i = threadIdx.x;
    {body}
    out[i] = 1.0f;
}}
"""

CASES = {
    "asm": ("", 'asm volatile("membar.gl;");', "inline assembly (asm)"),
    "wmma_header": ("#include <mma.h>", "", "tensor-core matrix operations"),
    "wmma": ("", "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f;",
             "tensor-core matrix operations"),
    "grid_sync": ("#include <cooperative_groups.h>",
                  "cooperative_groups::this_grid().sync();", "grid-wide synchronisation"),
    "texture": ("", "cudaTextureObject_t t = 0; out[0] = tex1Dfetch<float>(t, i);", "textures"),
    "surface": ("", "cudaSurfaceObject_t s = 0; surf2Dwrite(1.0f, s, 0, 0);", "surfaces"),
    "dynamic_parallelism": ("__global__ void child(float* o) { o[0] = 2.0f; }",
                            "if (i == 0) child<<<1, 1>>>(out);", "kernel launches in the source"),
    "cluster": ("", "", "thread block clusters"),
    "libcudacxx": ("#include <cuda/std/atomic>", "", "cuda/std/atomic"),
    "unknown_intrinsic": ("", "unsigned int v = __vadd4(1u, 2u); out[1] = (float)v;",
                          "not supported by the CPU backend: __vadd4"),
}


def _write(folder: Path, name: str, prelude: str, body: str) -> Path:
    """A kernel file with one construct in it."""
    path = folder / f"{name}.cu"
    text = KERNEL.format(prelude=prelude, body=body)
    if name == "cluster":
        text = text.replace('extern "C" __global__ void k', 'extern "C" __global__ void '
                            "__cluster_dims__(2, 1, 1) k")
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_unsupported_constructs_are_named(cpu: CpuWorker, tmp_path: Path, name: str) -> None:
    prelude, body, words = CASES[name]
    path = _write(tmp_path, name, prelude, body)
    with pytest.raises(LaunchFailed) as failure:
        cpu.load(path, "k")
    assert failure.value.kind == "unsupported"
    assert "not supported by the CPU backend: " in str(failure.value)
    assert words in str(failure.value)


def test_the_finding_names_the_file_and_line(cpu: CpuWorker, tmp_path: Path) -> None:
    path = _write(tmp_path, "where", "", 'asm("trap;");')
    with pytest.raises(LaunchFailed, match=rf"\({path}:5\)"):
        cpu.load(path, "k")


def test_constructs_in_comments_strings_and_disabled_code_are_ignored(cpu: CpuWorker,
                                                                        tmp_path: Path) -> None:
    body = """// asm("trap;"); tex2D and this_grid() in a comment
    /* wmma::fragment in a block comment */
    if (i == 1000) printf("asm volatile and <<< in a string\\n");
#if 0
    asm("trap;");
#endif
#ifndef __CUDA_ARCH__
    cooperative_groups::this_grid().sync();
#endif"""
    cpu.load(_write(tmp_path, "harmless", "", body), "k")


def test_rewrites_keep_lines_and_give_dynamic_shared_memory_both_scopes() -> None:
    text = """extern __shared__ float4 top[];
namespace inner { extern __shared__ __align__(16) int nested[]; }
// extern __shared__ float in_a_comment[];
__device__ __noinline__ void f()
{
    extern __shared__ volatile unsigned char raw[];
}
"""
    rewritten = source.rewrite(text)
    lines = rewritten.splitlines()
    assert len(lines) == len(text.splitlines())
    assert lines[0] == "static const ks_dynamic_shared<float4> top{};"
    assert "static const ks_dynamic_shared<int> nested{};" in lines[1]
    assert lines[2] == "// extern __shared__ float in_a_comment[];"
    assert lines[3] == "__device__ __attribute__((noinline)) void f()"
    assert lines[5].strip() == ("volatile unsigned char* const raw = reinterpret_cast<volatile "
                                "unsigned char*>(ks_self()->block->dynamic_shared);")


def test_launch_bounds_are_read_from_the_entry() -> None:
    text = "__global__ void __launch_bounds__(256, 2) k(float* x) {}\n__global__ void j() {}"
    assert source.launch_bounds(text, "k") == 256
    assert source.launch_bounds(text, "j") is None
