"""The portable context switch (ucontext), which every CPU but x86-64 uses, tested here on
x86-64 by asking for it: barriers, shuffles and deadlock detection behave the same."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.cpu_backend import test_emulation
from tests.cpu_backend.harness import CpuWorker


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CpuWorker]:
    """A cpu worker whose runtime switches fibers with ucontext."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNEL_STUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
        patch.setenv("KERNEL_STUDIO_CPU_UCONTEXT", "1")
        worker = CpuWorker(tmp_path_factory.mktemp("ucontext-worker"))
    yield worker
    worker.close()


def test_barriers_with_ucontext(portable: CpuWorker) -> None:
    test_emulation.test_barrier_orders_shared_memory_and_a_missing_one_is_always_caught(portable)
    test_emulation.test_threads_that_exit_early_do_not_hold_up_a_barrier(portable)


def test_warp_operations_with_ucontext(portable: CpuWorker) -> None:
    test_emulation.test_shuffles_follow_ptx_lane_rules_with_full_and_partial_masks(portable)
    test_emulation.test_ballot_any_all_activemask_match_and_reduce(portable)


def test_deadlocks_and_many_threads_with_ucontext(portable: CpuWorker) -> None:
    test_emulation.test_a_deadlocked_block_fails_the_launch_with_a_description(portable)
    test_emulation.test_atomics_are_atomic_across_blocks_running_in_parallel(portable)
    out = portable.run("shared.cu", "static_shared", (300,), (32,), [np.zeros(300, np.int32)])[0]
    assert out[0] == 1234 and (out[1:] == -1).all()
