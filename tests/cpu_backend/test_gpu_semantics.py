"""Where x86 and a GPU part ways (issue 23, items 4-6): the emulation computes what the GPU
computes, or ends the launch as the GPU does, or refuses; it never quietly gives the CPU's
answer."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cpu_backend.harness import CpuWorker, LaunchFailed, Scalar

KERNELS = "gpu_semantics.cu"
INT_MAX, INT_MIN = 2**31 - 1, -(2**31)


def test_float_to_int_intrinsics_saturate_as_the_gpu(cpu: CpuWorker) -> None:
    x = np.array([3e9, -3e9, np.nan, 2.5, -1.5, np.inf, -np.inf, 1e30], np.float32)
    n = len(x)
    rz, rn, u, ll, h = cpu.run(KERNELS, "to_int", (1,), (n,), [
        x, np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n, np.uint32),
        np.zeros(n, np.int64), np.zeros(n, np.int32), Scalar(n, "int32")])[1:6]
    assert rz.tolist() == [INT_MAX, INT_MIN, 0, 2, -1, INT_MAX, INT_MIN, INT_MAX]
    assert rn.tolist()[3:5] == [2, -2]  # ties to even
    assert u.tolist() == [3_000_000_000, 0, 0, 2, 0, 2**32 - 1, 0, 2**32 - 1]
    # a 64-bit result of NaN is 0x8000000000000000 (measured on an H200), not 0
    assert ll.tolist() == [3_000_000_000, -3_000_000_000, -(2**63), 2, -2, 2**63 - 1, -(2**63),
                           2**63 - 1]
    assert h.tolist() == [INT_MAX, INT_MIN, 0, 2, -2, INT_MAX, INT_MIN, INT_MAX]


def test_an_out_of_range_implicit_cast_is_refused_naming_it(cpu: CpuWorker) -> None:
    ok = cpu.run(KERNELS, "implicit_cast", (1,), (2,), [np.array([1.5, -7.9], np.float32),
                                                        np.zeros(2, np.int32)])[1]
    assert ok.tolist() == [1, -7]
    with pytest.raises(LaunchFailed) as failure:
        cpu.run(KERNELS, "implicit_cast", (1,), (2,), [np.array([1.0, 3e9], np.float32),
                                                       np.zeros(2, np.int32)])
    assert failure.value.kind == "unsupported"
    assert "out-of-range float->int conversion" in str(failure.value)
    assert "gpu_semantics.cu:16" in str(failure.value) and "thread (1, 0, 0)" in str(failure.value)


def test_fast_intrinsics_follow_the_gpu(cpu: CpuWorker) -> None:
    x = np.array([1.0, 8.0, 30.0, -np.inf], np.float32)
    y = np.array([2.0**127, 3.0, 10000.0, 2.0**127], np.float32)
    div, ex, s = cpu.run(KERNELS, "fast", (1,), (4,), [x, y] + [np.zeros(4, np.float32)] * 3)[2:]
    assert div[0] == 0.0 and np.isnan(div[3])  # a divisor above 2^126: 0, and NaN for inf
    assert div[1] == pytest.approx(8 / 3, rel=1e-6)
    # __expf scales by log2(e) in float first: at x = 30 that alone costs many ulps.
    scaled = np.float32(np.float32(30.0) * np.float32(1.44269504))
    assert ex[2] == np.float32(2.0 ** np.float64(scaled)) and ex[2] != np.float32(np.exp(30.0))
    # __sinf(10000) takes the argument in turns, rounded to float: about 3e-4 off sin(10000).
    assert abs(float(s[2]) - np.sin(10000.0)) > 1e-5


def test_rounding_mode_intrinsics_round_as_named(cpu: CpuWorker) -> None:
    a = np.array([1.0, -1.0, 1.0, 3.0], np.float32)
    b = np.array([3.0, 3.0, 1.1, 7.0], np.float32)
    up, down, zero, near = cpu.run(KERNELS, "rounding", (1,), (4,),
                                   [a, b] + [np.zeros(4, np.float32)] * 4)[2:]
    exact = a.astype(np.float64) / b.astype(np.float64)
    assert (up >= exact).all() and (down <= exact).all()
    assert (np.nextafter(down, np.float32(np.inf)) == up).all()
    product = a.astype(np.float64) * b.astype(np.float64)
    assert (np.abs(zero) <= np.abs(product)).all()
    assert np.array_equal(near, a + b)


@pytest.mark.parametrize(("entry", "args", "what"), [
    ("misaligned_float2", lambda: [np.zeros(64, np.float32), np.zeros(4, np.float32),
                                   Scalar(1, "int32")], "float2"),
    ("misaligned_double", lambda: [np.zeros(64, np.uint8), np.zeros(4, np.float64),
                                   Scalar(4, "int32")], "double"),
    ("misaligned_store_int4", lambda: [np.zeros(64, np.int32), Scalar(2, "int32")], "int4"),
])
def test_misaligned_accesses_fault_as_on_the_gpu(cpu: CpuWorker, entry: str, args: object,
                                                 what: str) -> None:
    with pytest.raises(LaunchFailed) as failure:
        cpu.run(KERNELS, entry, (1,), (4,), args())  # type: ignore[operator]
    message = str(failure.value)
    assert failure.value.kind == "device" and "misaligned address" in message
    assert what in message and "gpu_semantics.cu:" in message and "read from 0x0" not in message


def test_aligned_vector_access_runs(cpu: CpuWorker) -> None:
    x = np.arange(64, dtype=np.float32)
    out = cpu.run(KERNELS, "misaligned_float2", (1,), (4,), [x, np.zeros(4, np.float32),
                                                             Scalar(2, "int32")])[1]
    assert out.tolist() == [2.0, 4.0, 6.0, 8.0]


def test_a_shift_by_the_width_is_refused(cpu: CpuWorker) -> None:
    out = cpu.run(KERNELS, "wide_shift", (1,), (2,), [np.array([3, 31], np.int32),
                                                      np.zeros(2, np.uint32)])[1]
    assert out.tolist() == [8, 2**31]
    with pytest.raises(LaunchFailed) as failure:
        cpu.run(KERNELS, "wide_shift", (1,), (2,), [np.array([3, 32], np.int32),
                                                    np.zeros(2, np.uint32)])
    assert failure.value.kind == "unsupported" and "shift" in str(failure.value)
