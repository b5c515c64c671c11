"""A stand-in for `pycuda.driver`, backed by NumPy, so that the pycuda backend's timing code
runs on machines without a GPU: allocations are byte arrays at fake addresses, copies and
memsets really move bytes, kernels are Python functions chosen by symbol, and events read the
host clock. Every call is logged, so tests can check what the timer queued and in which order.
"""

from __future__ import annotations

import time
import types
from typing import Any

import numpy as np

MEMORY: dict[int, np.ndarray] = {}
LOG: list[tuple[str, Any]] = []
CALLS: dict[str, int] = {}
_NEXT = [1 << 32]
ATTRIBUTES = {"L2_CACHE_SIZE": 3 * 2**20, "MULTIPROCESSOR_COUNT": 132, "CLOCK_RATE": 1_980_000,
              "MEMORY_CLOCK_RATE": 3_201_000, "GLOBAL_MEMORY_BUS_WIDTH": 6144}


class Error(Exception):
    """pycuda.driver.Error."""


class DeviceAllocation:
    """A fake device allocation: an int address and a byte array."""

    def __init__(self, size: int) -> None:
        self.base = _NEXT[0]
        _NEXT[0] += size + (1 << 20)
        MEMORY[self.base] = np.zeros(size, dtype=np.uint8)

    def __int__(self) -> int:
        return self.base

    def free(self) -> None:
        MEMORY.pop(self.base, None)


def reset() -> None:
    """Forget every allocation, log entry and call count."""
    MEMORY.clear()
    LOG.clear()
    CALLS.clear()


def _view(address: int, size: int) -> np.ndarray:
    """`size` bytes of fake device memory starting at `address`."""
    for base, data in MEMORY.items():
        if base <= address and address + size <= base + data.size:
            return data[address - base:address - base + size]
    raise Error(f"an illegal memory access was encountered at {address:#x}")


def init() -> None:
    LOG.append(("init", None))


def get_driver_version() -> int:
    return 13000


def get_version() -> tuple[int, int, int]:
    return (12, 8, 0)


def mem_alloc(size: int) -> DeviceAllocation:
    return DeviceAllocation(size)


def memcpy_htod(dest: Any, src: np.ndarray) -> None:
    _view(int(dest), src.nbytes)[:] = src.reshape(-1).view(np.uint8)


def memcpy_dtoh(dest: np.ndarray, src: Any) -> None:
    dest.reshape(-1).view(np.uint8)[:] = _view(int(src), dest.nbytes)


def memcpy_dtod(dest: Any, src: Any, size: int) -> None:
    LOG.append(("memcpy_dtod", size))
    _view(int(dest), size)[:] = _view(int(src), size).copy()


def memset_d8(dest: Any, value: int, size: int) -> None:
    LOG.append(("memset_d8", size))
    _view(int(dest), size)[:] = value


class Event:
    """Events read the host clock when recorded."""

    def __init__(self, flags: int = 0) -> None:
        self.when = 0.0

    def record(self, stream: Any = None) -> Event:
        self.when = time.perf_counter()
        LOG.append(("record", None))
        return self

    def synchronize(self) -> Event:
        return self

    def time_since(self, other: Event) -> float:
        return (self.when - other.when) * 1000.0


def _floats(address: int, count: int) -> np.ndarray:
    return _view(address, 4 * count).view(np.float32)


def _copy_f32(src: Any, dst: Any, n: Any) -> None:
    """dst = src."""
    _floats(int(dst), int(n))[:] = _floats(int(src), int(n))


def _add_one(y: Any, n: Any) -> None:
    """y += 1, in place (an inout kernel: its result depends on the launches before it)."""
    _floats(int(y), int(n))[:] += 1


def _lazy_copy(src: Any, dst: Any, n: Any) -> None:
    """dst = src on the first two launches only."""
    if CALLS.get("lazy_copy", 0) <= 2:
        _copy_f32(src, dst, n)


KERNELS = {"copy_f32": _copy_f32, "add_one": _add_one, "lazy_copy": _lazy_copy,
           "ks_spin": lambda ns: None, "ks_read_flush": lambda data, count, sink: None}


class Function:
    """A kernel: a Python function over fake device memory."""

    def __init__(self, name: str) -> None:
        if name not in KERNELS:
            raise Error(f"named symbol not found: {name}")
        self.name = name

    def __call__(self, *args: Any, block: tuple[int, ...], grid: tuple[int, ...] = (1, 1),
                 shared: int = 0, stream: Any = None) -> None:
        assert len(block) == 3 and len(grid) in (2, 3)
        CALLS[self.name] = CALLS.get(self.name, 0) + 1
        LOG.append(("launch", self.name))
        KERNELS[self.name](*args)


class Module:
    def get_function(self, name: str) -> Function:
        return Function(name)


def module_from_buffer(buffer: bytes) -> Module:
    return Module()


class Context:
    def synchronize(self) -> None:
        LOG.append(("synchronize", None))

    def pop(self) -> None:
        pass

    def detach(self) -> None:
        pass


device_attribute = types.SimpleNamespace(**{name: name for name in ATTRIBUTES})


class Device:
    def __init__(self, number: int) -> None:
        self.number = number

    def name(self) -> str:
        return "Fake H200"

    def compute_capability(self) -> tuple[int, int]:
        return (9, 0)

    def total_memory(self) -> int:
        return 141 * 2**30

    def get_attribute(self, attribute: str) -> int:
        return ATTRIBUTES[attribute]

    def make_context(self) -> Context:
        return Context()

    def get_uuid(self) -> bytes:
        return bytes(range(16))

    def pci_bus_id(self) -> str:
        return "0000:3B:00.0"
