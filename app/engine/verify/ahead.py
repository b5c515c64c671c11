"""One step of work done ahead: while a run's kernel executes and its images are checked, the
next run's inputs are drawn and sent to the reference process on a second thread (both wait
on other processes or in NumPy, which lets go of the GIL). Only one step is ever in flight,
so the reference still answers one request at a time, in the runs' order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Generic, TypeVar

T = TypeVar("T")
# After a run that stops the verification, how long a step in flight may still finish before
# its reference is stopped (then started afresh by the next verification).
GRACE_SECONDS = 2.0


class Ahead(Generic[T]):
    """Results of `steps`, taken in order; take(k) starts step k + 1 before returning when
    `may_overlap(k + 1)` allows (a step too large to hold twice runs in its turn)."""

    def __init__(self, steps: Sequence[Callable[[], T]],
                 may_overlap: Callable[[int], bool]) -> None:
        """Nothing runs until the first take()."""
        self.steps = steps
        self.may_overlap = may_overlap
        self._pool: ThreadPoolExecutor | None = None
        self._pending: tuple[int, Future[T]] | None = None

    def take(self, position: int) -> T:
        """Step `position`'s result (raising what it raised), computed ahead or now."""
        if self._pending is not None and self._pending[0] == position:
            result = self._pending[1].result()
            self._pending = None
        else:
            self._settle()
            result = self.steps[position]()
        following = position + 1
        if following < len(self.steps) and self.may_overlap(following):
            self._pool = self._pool or ThreadPoolExecutor(1, thread_name_prefix="verify-ahead")
            self._pending = (following, self._pool.submit(self.steps[following]))
        return result

    def _settle(self) -> None:
        """Wait for a step in flight that will not be taken (its errors no longer matter)."""
        if self._pending is not None:
            self._pending[1].exception()
            self._pending = None

    def close(self, abandon: Callable[[], None], grace: float = GRACE_SECONDS) -> None:
        """End early or at the end: a step still in flight gets `grace` seconds to finish,
        then `abandon()` (which must make it end: stop its reference process)."""
        if self._pending is not None:
            future = self._pending[1]
            if not future.cancel():
                try:
                    future.exception(timeout=grace)
                except FutureTimeout:
                    abandon()
                    future.exception()
            self._pending = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
