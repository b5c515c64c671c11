"""Faults on the CPU backend end to end, through real worker processes: wild accesses crash
the worker (with a line saying where), and so do stack overflows, integer division by zero
and __trap(); launches a GPU would refuse are refused; printf cannot disturb the protocol."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.engine.worker.client import WorkerFault
from tests.cpu_backend.harness import CpuWorker, LaunchFailed, Scalar


def _crash(cpu: CpuWorker, entry: str, args: list[np.ndarray | Scalar],
           block: tuple[int, ...] = (32,)) -> str:
    """Run a kernel that must kill the worker; the death message (with its stderr tail)."""
    with pytest.raises(WorkerFault) as fault:
        cpu.run("faults.cu", entry, (1,), block, args)
    assert fault.value.kind == "crash"
    return str(fault.value)


def test_a_write_far_past_a_buffer_faults_and_says_where(cpu: CpuWorker) -> None:
    message = _crash(cpu, "far_write", [np.zeros(1000, np.float32), Scalar(1000, "int32")])
    assert "signal SIGSEGV" in message
    assert "write to" in message and "far_write, block (0, 0, 0), thread (0, 0, 0)" in message
    assert "past the end of the allocation of kernel parameter 0" in message


def test_a_write_before_a_buffer_faults(cpu: CpuWorker) -> None:
    message = _crash(cpu, "before_start", [np.zeros(10, np.float32), Scalar(10, "int32")])
    assert "before the allocation of kernel parameter 0" in message
    assert "thread (3, 0, 0)" in message


def test_a_stack_overflow_faults_instead_of_corrupting_other_threads(cpu: CpuWorker) -> None:
    message = _crash(cpu, "stack_overflow", [np.zeros(32, np.int32), Scalar(100000, "int32")])
    assert "stack overflow" in message


def test_integer_division_by_zero_is_refused(cpu: CpuWorker) -> None:
    # A GPU gives some value without a fault, the CPU would trap: neither verdict would match.
    with pytest.raises(LaunchFailed) as failure:
        cpu.run("faults.cu", "divide", (1,), (32,), [np.ones(32, np.int32),
                                                     np.zeros(32, np.int32), Scalar(0, "int32")])
    assert failure.value.kind == "unsupported"
    assert "integer division of 'int' by zero" in str(failure.value)


def test_trap_crashes(cpu: CpuWorker) -> None:
    message = _crash(cpu, "trap", [np.zeros(32, np.int32)])
    assert "signal SIGABRT" in message and "__trap() was called" in message


def test_printf_goes_to_the_log_not_the_protocol(cpu: CpuWorker) -> None:
    out = cpu.run("faults.cu", "chatty", (3,), (32,), [np.zeros(32, np.int32)])[0]
    assert np.array_equal(out, np.arange(32))
    log = cpu.worker.stderr_path
    assert log is not None
    # A thread copies the worker's stderr into the log: the reply can come first (seen at a
    # load of 2), so wait for the line to arrive, not for a time.
    deadline = time.monotonic() + 60
    while "says hello" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "thread 1 of block 2 says hello" in log.read_text()


def test_a_parameter_that_does_not_fit_the_spec_is_refused(cpu: CpuWorker) -> None:
    with pytest.raises(LaunchFailed) as failure:
        cpu.run("faults.cu", "wants_size_t", (1,), (32,),
                [np.zeros(32, np.float32), Scalar(32, "int32")])
    assert failure.value.kind == "load"
    assert "parameter 1 of wants_size_t is an integer of 8 bytes" in str(failure.value)
    assert "int32 scalar (4 bytes)" in str(failure.value)
    with pytest.raises(LaunchFailed, match="takes 2 parameters but the spec gives 1"):
        cpu.run("faults.cu", "wants_size_t", (1,), (32,), [np.zeros(32, np.float32)])


@pytest.mark.parametrize(("grid", "block", "shared", "words"), [
    ((1,), (2048,), 0, "exceeds the GPU limits"),
    ((0,), (32,), 0, "is 0"),
    ((1, 70000), (32,), 0, "grid (1, 70000, 1)"),
    ((1,), (32,), 228 * 1024, "exceed the 232448 a block may have"),
])
def test_launches_a_gpu_would_refuse_are_refused(cpu: CpuWorker, grid: tuple[int, ...],
                                                 block: tuple[int, ...], shared: int,
                                                 words: str) -> None:
    with pytest.raises(LaunchFailed, match="launch refused") as failure:
        cpu.run("faults.cu", "plain", grid, block, [np.zeros(4096, np.float32)], shared)
    assert failure.value.kind == "load" and words in str(failure.value)


def test_a_block_larger_than_launch_bounds_is_refused(cpu: CpuWorker) -> None:
    with pytest.raises(LaunchFailed, match=r"exceeds __launch_bounds__\(128\)"):
        cpu.run("faults.cu", "bounded", (1,), (256,), [np.zeros(256, np.float32)])
    assert (cpu.run("faults.cu", "bounded", (1,), (128,), [np.zeros(128, np.float32)])[0]
            == 2.0).all()


def test_static_shared_memory_counts_against_the_launch_limit(cpu: CpuWorker) -> None:
    out = cpu.run("shared_limit_exact.cu", "exact", (1,), (64,), [np.zeros(64, np.float32)])[0]
    assert (out == 1.0).all()
    with pytest.raises(LaunchFailed, match="exceed the 49152 a kernel may declare"):
        cpu.run("shared_limit_over.cu", "over", (1,), (64,), [np.zeros(64, np.float32)])
    # Dynamic memory past 48 KiB is what an sm_90 block gets once the kernel opts in, as the
    # GPU backend does for it: 48 KiB static and 179 KiB dynamic fill the 227 KiB exactly.
    out = cpu.run("shared_limit_exact.cu", "exact", (1,), (64,), [np.zeros(64, np.float32)],
                  179 * 1024 - 64)[0]
    assert (out == 1.0).all()
    with pytest.raises(LaunchFailed, match="a block may have"):
        cpu.run("shared_limit_exact.cu", "exact", (1,), (64,), [np.zeros(64, np.float32)],
                180 * 1024)


def test_a_pointer_made_from_a_32_bit_value_faults(cpu: CpuWorker) -> None:
    message = _crash(cpu, "small_pointer", [np.zeros(4, np.float32), Scalar(4, "int32")])
    assert "a 32-bit value used as a pointer" in message
