"""On a GPU: the driver agrees with what the compile reported without one (registers, shared,
constant and local memory, max threads per block) and with the occupancy computed here."""

from __future__ import annotations

import pytest

from app.compile import compile_source, occupancy

SOURCE = """__constant__ float table[32];

extern "C" __global__ void tiled(const float* a, float* c, int n) {
    __shared__ float tile[512];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n) c[i] = tile[511 - threadIdx.x] * table[threadIdx.x % 32];
}

__global__ void __launch_bounds__(256) bounded(float* out) { out[threadIdx.x] = 1.0f; }
"""


def _check(call):
    """The value of a cuda.bindings.driver call, asserting success."""
    err, *values = call
    assert int(err) == 0, err
    return values[0] if len(values) == 1 else values


@pytest.mark.gpu
def test_driver_agrees_with_resources_and_occupancy(tmp_path) -> None:
    from cuda.bindings import driver

    _check(driver.cuInit(0))
    device = _check(driver.cuDeviceGet(0))
    major = _check(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = _check(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    result = compile_source(SOURCE, filename="k.cu", folder=tmp_path, arch=f"sm_{major}{minor}")
    assert result.ok, result.message
    context = _check(driver.cuCtxCreate(None, 0, device))
    try:
        module = _check(driver.cuModuleLoadData(result.cubin))
        attribute = driver.CUfunction_attribute
        for kernel in result.kernels:
            function = _check(driver.cuModuleGetFunction(module, kernel.name.encode()))
            def get(name: str, function=function) -> int:
                return int(_check(driver.cuFuncGetAttribute(getattr(attribute, name), function)))
            assert get("CU_FUNC_ATTRIBUTE_NUM_REGS") == kernel.registers
            assert get("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES") == kernel.shared_static_bytes
            assert get("CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES") == kernel.constant_bytes
            assert get("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES") == kernel.local_bytes
            assert get("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK") == kernel.max_threads_per_block
            for block in (64, 256):
                blocks = int(_check(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    function, block, 0)))
                assert occupancy(kernel, block, 0, result.arch).active_blocks_per_sm == blocks
    finally:
        driver.cuCtxDestroy(context)
