"""A loaded machine for the startup and editor-loop benchmarks: K processes that only spin."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager


def spin() -> None:
    """A busy process (the machine's load)."""
    while True:
        pass


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """`processes` spinning processes while the block runs."""
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(processes)]
    for process in spinners:
        process.start()
    try:
        yield
    finally:
        for process in spinners:
            process.terminate()
