"""The CPU worker keeps buffer arenas mapped between launches (memory.ArenaPool): reused only
for the same runtime key, bounded, and the kernel never sees an earlier launch's bytes."""

from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

from app.engine.worker.backends.base import BufferArg
from app.engine.worker.backends.cpu import memory, toolchain

PAGE = memory.PAGE


@pytest.fixture(scope="module")
def runtime() -> ctypes.CDLL:
    compiler = toolchain.find_toolchain()
    if compiler is None:
        pytest.skip("no host compiler for the CPU backend")
    library = ctypes.CDLL(str(toolchain.runtime_library(compiler)),
                          mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    memory.declare(library)
    return library


def image(nbytes: int, fill: int) -> BufferArg:
    return BufferArg(np.full(nbytes, fill, dtype=np.uint8), 0, "uint8")


def test_an_arena_given_back_is_taken_again_for_the_same_key_only(runtime: ctypes.CDLL) -> None:
    pool = memory.ArenaPool(runtime)
    first = memory.Arena(pool, image(3 * PAGE, 1), 0)
    address = first.address
    first.release()
    assert memory.Arena(pool, image(3 * PAGE, 2), 1).address != address  # another parameter
    again = memory.Arena(pool, image(3 * PAGE, 3), 0)
    assert again.address == address
    again.release()
    pool.close()
    assert pool.kept == []


def test_a_reused_arena_holds_the_new_image_and_fresh_slack(runtime: ctypes.CDLL) -> None:
    pool = memory.ArenaPool(runtime)
    first = memory.Arena(pool, image(PAGE + 10, 7), 0)
    first.view[:] = 0xAB  # what a kernel might leave anywhere in the pages
    slack_before = first.slack.copy()
    first.release()
    second = memory.Arena(pool, image(PAGE + 10, 5), 0)
    assert np.all(second.view[:PAGE + 10] == 5)
    assert np.array_equal(second.view[PAGE + 10:], second.slack)
    assert not np.all(second.view[PAGE + 10:] == 0xAB)
    assert not np.array_equal(second.slack, slack_before)
    second.copy_back()  # the slack is as laid: no write beyond the guards reported
    second.release()
    pool.close()


def test_the_pool_keeps_no_more_than_its_limit(runtime: ctypes.CDLL) -> None:
    pool = memory.ArenaPool(runtime, limit=4 * PAGE)
    arenas = [memory.Arena(pool, image(2 * PAGE, 0), index) for index in range(3)]
    for arena in arenas:
        arena.release()
    assert sum(capacity for _, _, capacity in pool.kept) <= 4 * PAGE
    assert [key[1] for key, _, _ in pool.kept] == [1, 2]  # the oldest went first
    pool.close()
