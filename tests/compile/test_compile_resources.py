"""Per-kernel resources agree with ptxas' own report (from a separate NVRTC compile made here
with the raw bindings, and from nvcc) and with cuobjdump's reading of the cubin."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from app.base import system
from app.compile import compile_file, sass

needs_nvcc = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="nvcc is not installed")

KERNELS = """__constant__ float weights[16];

extern "C" __global__ void tiled(const float* a, float* c, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n) c[i] = tile[255 - threadIdx.x] * weights[threadIdx.x % 16];
}

__global__ void __launch_bounds__(128) gather(const int* index, float* out, int n) {
    float local[64];
    for (int k = 0; k < 64; ++k) local[k] = out[index[(k * 7) % n]];
    out[threadIdx.x] = local[index[threadIdx.x] % 64];
}

extern "C" __global__ void spill(const float* in, float* out, int n) {
    float acc[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = in[threadIdx.x + k * n];
    float total = 0.0f;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
#pragma unroll
        for (int k = 0; k < 48; ++k) total += acc[k] * acc[(k * 7 + r) % 48];
    }
    out[threadIdx.x] = total;
}
"""
OPTIONS = ["--maxrregcount=24"]  # forces `spill` to spill, so spill figures are not all zero


def ptxas_report(log: str) -> dict[str, dict[str, int]]:
    """ptxas -v output read independently of app.compile: figures per entry function."""
    report: dict[str, dict[str, int]] = {}
    entry = described = None
    for line in log.splitlines():
        if (m := re.search(r"Compiling entry function '([^']+)'", line)):
            entry = m.group(1)
            report.setdefault(entry, {"smem": 0})
        elif (m := re.search(r"Function properties for (\S+)", line)):
            described = m.group(1)
        elif (m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                             r"(\d+) bytes spill loads", line)):
            report.setdefault(described, {"smem": 0}).update(
                frame=int(m.group(1)), stores=int(m.group(2)), loads=int(m.group(3)))
        elif (m := re.search(r"Used (\d+) registers", line)):
            report[entry]["registers"] = int(m.group(1))
            if (s := re.search(r"(\d+) bytes smem", line)):
                report[entry]["smem"] = int(s.group(1))
    return report


def raw_nvrtc_log(source: str, arch: str, options: list[str]) -> str:
    """Compile with the NVRTC bindings directly (not through app.compile) and return the log."""
    from cuda.bindings import nvrtc

    _, program = nvrtc.nvrtcCreateProgram(source.encode(), b"kernels.cu", 0, [], [])
    flags = [f"-arch={arch}".encode(), b"--ptxas-options=-v", *(o.encode() for o in options)]
    try:
        err, = nvrtc.nvrtcCompileProgram(program, len(flags), flags)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        _, size = nvrtc.nvrtcGetProgramLogSize(program)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(program, log)
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return log.decode()


def assert_matches_ptxas(result, report: dict[str, dict[str, int]]) -> None:
    """Every kernel's figures equal ptxas' own, and every entry ptxas compiled is listed."""
    assert sorted(k.name for k in result.kernels) == sorted(report)
    for kernel in result.kernels:
        own = report[kernel.name]
        assert (kernel.registers, kernel.shared_static_bytes, kernel.stack_frame_bytes,
                kernel.spill_stores_bytes, kernel.spill_loads_bytes) == (
            own["registers"], own["smem"], own["frame"], own["stores"], own["loads"]), kernel.name


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_resources_agree_with_ptxas_report_from_nvrtc(write, arch: str) -> None:
    result = compile_file(write("kernels.cu", KERNELS), arch=arch, options=OPTIONS)
    assert result.ok, result.message
    report = ptxas_report(raw_nvrtc_log(KERNELS, arch, OPTIONS))
    assert_matches_ptxas(result, report)
    spill = result.kernel("spill")
    assert spill is not None and spill.spill_stores_bytes > 0 and spill.spill_loads_bytes > 0
    tiled = result.kernel("tiled")
    assert tiled is not None and tiled.shared_static_bytes == 256 * 4 and tiled.barriers == 1


@needs_nvcc
def test_resources_agree_with_nvcc_ptxas_report(write, tmp_path: Path) -> None:
    source = write("kernels.cu", KERNELS)
    result = compile_file(source, backend="nvcc", options=OPTIONS)
    assert result.ok and result.backend == "nvcc", result.message
    done = subprocess.run([system.find_tool("nvcc") or "nvcc", "-cubin", "-arch=sm_90",
                           "-Xptxas", "-v", *OPTIONS, "-o", str(tmp_path / "own.cubin"),
                           str(source)], capture_output=True, text=True, timeout=120, check=True)
    assert_matches_ptxas(result, ptxas_report(done.stdout + done.stderr))


def cuobjdump_usage(cubin: bytes, folder: Path) -> tuple[dict[str, dict[str, int]], int]:
    """cuobjdump -res-usage: (per function REG/STACK/..., module CONSTANT bytes)."""
    tool = sass._wheel_tool("cuobjdump") or system.find_tool("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump is not installed")
    (folder / "k.cubin").write_bytes(cubin)
    text = subprocess.run([tool, "-res-usage", str(folder / "k.cubin")], capture_output=True,
                          text=True, timeout=60, check=True).stdout
    usage: dict[str, dict[str, int]] = {}
    for name, fields in re.findall(r"Function (\S+):\n\s+(.*)", text):
        usage[name] = {k: int(v) for k, v in re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", fields)}
    common = re.search(r"Common:\n\s+(.*)", text)
    constant = sum(int(v) for v in re.findall(r"CONSTANT\[\d+\]:(\d+)", common.group(1))) \
        if common else 0
    return usage, constant


def test_resources_agree_with_cuobjdump(write, tmp_path: Path) -> None:
    result = compile_file(write("kernels.cu", KERNELS), options=OPTIONS)
    usage, constant = cuobjdump_usage(result.cubin, tmp_path)
    assert sorted(usage) == sorted(k.name for k in result.kernels)
    for kernel in result.kernels:
        assert usage[kernel.name]["REG"] == kernel.registers
        assert usage[kernel.name]["STACK"] == kernel.stack_frame_bytes
        assert usage[kernel.name]["LOCAL"] == kernel.local_bytes
        assert kernel.constant_bytes == constant == 16 * 4


def test_launch_bounds_cap_max_threads_per_block(write) -> None:
    result = compile_file(write("kernels.cu", KERNELS), options=OPTIONS)
    gather = result.kernel(result.kernel_symbol("gather") or "")
    assert gather is not None and gather.name.startswith("_Z6gather")
    assert gather.max_threads_per_block == 128
    assert gather.stack_frame_bytes >= 64 * 4  # the local array lives in the stack frame
