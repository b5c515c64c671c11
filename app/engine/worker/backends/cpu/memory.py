"""Buffers for CPU launches: each image lives in its own arena, surrounded by inaccessible
address space, so a wild access faults instead of landing in some other memory of the worker.

Layout of an arena: [PROT_NONE, up to 16 GiB][the image, rounded up to pages][PROT_NONE].
The image keeps the verifier's own guard zones (4 KiB of random NaNs or bytes on each side of the
data); the inaccessible regions catch what lies beyond them, as far as an int index times an
8-byte element can reach (2^31 * 8 bytes = 16 GiB). The few bytes between the image's end and
the end of its last page ("slack") get random bytes, kept and compared after the launch: no
constant a kernel could store there unnoticed.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from app.engine.worker.backends.base import BackendError, BufferArg

GUARD_BYTES = 16 << 30
PAGE = 4096


class Arena:
    """One buffer image copied into a guarded arena, and copied back after the launch."""

    def __init__(self, runtime: ctypes.CDLL, arg: BufferArg, index: int) -> None:
        """Map the arena and copy the image in."""
        self.runtime, self.arg, self.index = runtime, arg, index
        size = arg.image.nbytes
        self.capacity = max(PAGE, -(-size // PAGE) * PAGE)
        address = runtime.ks_arena_map(size, index, GUARD_BYTES)
        if not address:
            raise BackendError("device", f"cannot map memory for kernel parameter {index} "
                               f"({size} bytes)")
        self.address: int = address
        self.view = self._view()
        self.view[:size] = arg.image
        self.slack = np.frombuffer(os.urandom(self.capacity - size), dtype=np.uint8)
        self.view[size:] = self.slack

    def _view(self) -> np.ndarray[Any, np.dtype[np.uint8]]:
        """The arena's pages as a NumPy array (no copy)."""
        buffer = (ctypes.c_uint8 * self.capacity).from_address(self.address)
        return np.frombuffer(memoryview(buffer).cast("B"), dtype=np.uint8)

    @property
    def data_pointer(self) -> int:
        """The address the kernel gets: the data, past the verifier's leading guard zone."""
        return self.address + self.arg.offset

    def copy_back(self) -> None:
        """The image as the launch left it, into the worker's array; a write into the slack
        after the image (beyond the trailing guard zone) is reported, not silently dropped."""
        size = self.arg.image.nbytes
        self.arg.image[:] = self.view[:size]
        slack = self.view[size:]
        if slack.size and not bool(np.array_equal(slack, self.slack)):
            first = int(np.flatnonzero(slack != self.slack)[0])
            beyond = self.arg.offset + first  # the trailing guard zone is `offset` bytes
            raise BackendError("device", f"the kernel wrote past the guard zone of kernel "
                               f"parameter {self.index} ({beyond} bytes past the end of its data)")

    def release(self) -> None:
        """Unmap the arena (the view must not be used afterwards)."""
        del self.view
        self.runtime.ks_arena_unmap(ctypes.c_void_p(self.address))


def declare(runtime: ctypes.CDLL) -> None:
    """Argument and result types of the runtime's arena functions."""
    runtime.ks_arena_map.argtypes = [ctypes.c_ulonglong, ctypes.c_int, ctypes.c_ulonglong]
    runtime.ks_arena_map.restype = ctypes.c_void_p
    runtime.ks_arena_unmap.argtypes = [ctypes.c_void_p]
    runtime.ks_arena_unmap.restype = None
