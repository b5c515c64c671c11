"""Buffers for CPU launches: each image lives in its own arena, surrounded by inaccessible
address space, so a wild access faults instead of landing in some other memory of the worker.

Layout of an arena: [PROT_NONE, up to 16 GiB][the image, rounded up to pages][PROT_NONE].
The image keeps the verifier's own guard zones (4 KiB of random NaNs or bytes on each side of the
data); the inaccessible regions catch what lies beyond them, as far as an int index times an
8-byte element can reach (2^31 * 8 bytes = 16 GiB). The few bytes between the image's end and
the end of its last page ("slack") get random bytes, kept and compared after the launch: no
constant a kernel could store there unnoticed.

Guard zones only see what changed: a kernel that reads past its data and writes the same bytes
back leaves them as they were. So the verifier also asks for launches with the data against
inaccessible memory at one edge (BufferArg.edge), where such an access faults.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from app.engine.worker.backends.base import BackendError, BufferArg

GUARD_BYTES = 16 << 30
PAGE = 4096
# What an idle worker keeps mapped for the next launches (ArenaPool).
POOL_BYTES = 256 << 20


# A kernel may load and store 16-byte vectors at the data's start; an "end" placement keeps
# that alignment, so up to 15 bytes after the data stay reachable (they hold guard bytes).
VECTOR = 16


class Arena:
    """One buffer image copied into a guarded arena, and copied back after the launch.

    The arena holds `visible`, the part of the image the kernel can reach: the whole image
    (edge ""), or the image cut at one edge of the data (edge "end": up to the data's end
    rounded up to 16 bytes, placed to end where the arena's pages end; "exact": up to the
    data's very end, placed likewise, so the data's start is aligned to its element only;
    edge "start": from the data's start, placed where the pages begin). The parts cut off lie
    in inaccessible memory, so the kernel faults on any access there, and they return
    unchanged. Whatever else the pages hold ("slack", before or after `visible`) is random and
    compared after the launch."""

    def __init__(self, pool: ArenaPool, arg: BufferArg, index: int) -> None:
        """Take an arena from the pool (or map one) and copy the visible part of the image
        in; every byte of its pages is written, so nothing of an earlier launch is left."""
        self.pool, self.arg, self.index = pool, arg, index
        self.first, self.last = self._visible(arg)
        size = self.last - self.first
        self.capacity = max(PAGE, -(-size // PAGE) * PAGE)
        # The runtime measures a fault from the end of `reach` bytes (its message's "past the
        # end"): the visible part, which for edges "end" and "exact" ends with the pages.
        self.reach = self.capacity if self.place_at_end(arg) else size
        address = pool.take(self.reach, index)
        if not address:
            raise BackendError("device", f"cannot map memory for kernel parameter {index} "
                               f"({arg.image.nbytes} bytes)")
        self.address: int = address
        self.view = self._view()
        # Where `visible` starts in the arena: at its end for edges "end" and "exact", else at
        # its start.
        self.place = self.capacity - size if self.place_at_end(arg) else 0
        self.slack = np.frombuffer(os.urandom(self.capacity - size), dtype=np.uint8)
        self._outside()[:] = self.slack
        self.view[self.place:self.place + size] = arg.image[self.first:self.last]

    @staticmethod
    def place_at_end(arg: BufferArg) -> bool:
        """Whether the visible part ends where the arena's pages end."""
        return arg.edge in ("end", "exact")

    @staticmethod
    def _visible(arg: BufferArg) -> tuple[int, int]:
        """The image's bytes [first, last) the kernel can reach, for the argument's edge."""
        return visible(arg.edge, arg.image.nbytes, arg.offset)

    def _outside(self) -> np.ndarray[Any, np.dtype[np.uint8]]:
        """The arena's bytes around the visible part, as a view: before it when it is placed
        at the end of the pages (edges "end" and "exact"), else after it."""
        size = self.last - self.first
        if self.place:
            return self.view[:self.place]
        return self.view[size:]

    def _view(self) -> np.ndarray[Any, np.dtype[np.uint8]]:
        """The arena's pages as a NumPy array (no copy)."""
        buffer = (ctypes.c_uint8 * self.capacity).from_address(self.address)
        return np.frombuffer(memoryview(buffer).cast("B"), dtype=np.uint8)

    @property
    def data_pointer(self) -> int:
        """The address the kernel gets: the data, past the verifier's leading guard zone."""
        return self.address + self.place + self.arg.offset - self.first

    def copy_back(self) -> None:
        """The visible part as the launch left it, into the worker's image; a write into the
        slack around it (beyond the guard zones) is reported, not silently dropped."""
        size = self.last - self.first
        self.arg.image[self.first:self.last] = self.view[self.place:self.place + size]
        slack = self._outside()
        if slack.size and not bool(np.array_equal(slack, self.slack)):
            first = int(np.flatnonzero(slack != self.slack)[0])
            where = (f"{self.place - first} bytes before the start of its image" if self.place
                     else f"{self.arg.image.nbytes - self.last + first} bytes past the end of "
                          "its image")
            raise BackendError("device", f"the kernel wrote beyond the guard zone of kernel "
                               f"parameter {self.index} ({where})")

    def release(self) -> None:
        """Give the arena back to its pool (the view must not be used afterwards)."""
        del self.view
        self.pool.give(self.reach, self.index, self.address, self.capacity)


class ArenaPool:
    """Arenas kept mapped between launches, by the runtime's key for them (reach, parameter
    index): a warm re-verify reuses pages already faulted in instead of mapping and zeroing
    fresh ones for every buffer of every run. At most `limit` bytes are kept; the runtime's
    fault messages stay exact, since a kept arena is taken only for the same key."""

    def __init__(self, runtime: ctypes.CDLL, limit: int = POOL_BYTES) -> None:
        """An empty pool over the emulation runtime."""
        self.runtime, self.limit = runtime, limit
        self.kept: list[tuple[tuple[int, int], int, int]] = []  # (key, address, capacity)

    def take(self, reach: int, index: int) -> int:
        """A kept arena for this key, else a new one (0 when none can be mapped)."""
        for position, (key, address, _) in enumerate(self.kept):
            if key == (reach, index):
                del self.kept[position]
                return address
        return int(self.runtime.ks_arena_map(reach, index, GUARD_BYTES) or 0)

    def give(self, reach: int, index: int, address: int, capacity: int) -> None:
        """Keep an arena for a later launch, unmapping the oldest beyond the limit."""
        self.kept.append(((reach, index), address, capacity))
        while self.kept and sum(c for _, _, c in self.kept) > self.limit:
            _, oldest, _ = self.kept.pop(0)
            self.runtime.ks_arena_unmap(ctypes.c_void_p(oldest))

    def close(self) -> None:
        """Unmap every kept arena."""
        for _, address, _ in self.kept:
            self.runtime.ks_arena_unmap(ctypes.c_void_p(address))
        self.kept.clear()


def visible(edge: str, total: int, offset: int) -> tuple[int, int]:
    """The bytes [first, last) of an image of `total` bytes (guard zones of `offset` bytes on
    each side) that a kernel can reach with its data placed at `edge` (protocol.Edge)."""
    data = total - 2 * offset  # image_for: the same guard on both sides
    if edge == "end" and offset and data >= 0:
        return 0, min(total, offset + -(-data // VECTOR) * VECTOR)
    if edge == "exact" and offset and data >= 0:
        return 0, offset + data
    if edge == "start" and offset and data >= 0:
        return offset, total
    return 0, total


def from_data_start(edge: str, total: int, offset: int, distance: int, before: bool) -> int:
    """Where an address the runtime reported as `distance` bytes before the arena's memory
    (`before`) or past the end of what it measures from (Arena: `reach`) lies, in bytes from
    the data's first byte (negative: before it). The parent's reading of a fault line, laid
    out exactly as Arena lays out the buffer."""
    first, last = visible(edge, total, offset)
    size = last - first
    capacity = max(PAGE, -(-size // PAGE) * PAGE)
    at_end = edge in ("end", "exact")
    place = capacity - size if at_end else 0
    address = -distance if before else (capacity if at_end else size) + distance
    return address - (place + offset - first)


def declare(runtime: ctypes.CDLL) -> None:
    """Argument and result types of the runtime functions the worker calls."""
    runtime.ks_arena_map.argtypes = [ctypes.c_ulonglong, ctypes.c_int, ctypes.c_ulonglong]
    runtime.ks_arena_map.restype = ctypes.c_void_p
    runtime.ks_arena_unmap.argtypes = [ctypes.c_void_p]
    runtime.ks_arena_unmap.restype = None
    runtime.ks_set_descending.argtypes = [ctypes.c_int]
    runtime.ks_set_descending.restype = None
