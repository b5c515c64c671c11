"""The CPU backend: CUDA kernels compiled with the host C++ compiler against Kernel Studio's
emulation header and run on the CPU, so that a machine without a GPU can still check what a
kernel computes. It tells correctness only: its timings say nothing about a GPU.

How a launch runs: every GPU thread is a fiber; the fibers of a block take turns on one CPU
thread, switching only at barriers and warp operations; blocks run in parallel on the cores.
See native/cuda_emu.h and native/runtime/ for the emulation, memory.py for the guarded buffers.
"""

from __future__ import annotations

import ctypes
import os
import resource
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.base import settings
from app.engine.worker.backends.base import (
    Backend,
    BackendError,
    BufferArg,
    LaunchRequest,
    ScalarArg,
)
from app.engine.worker.backends.cpu import build, memory, toolchain
from app.spec.dtypes import lookup
from app.spec.model import entry_name

ERROR_BYTES = 2048
MAX_PARAMS = 256
# Each CPU thread keeps up to 1025 fiber stacks, two memory mappings each; 16 threads stay well
# inside the kernel's default limit of 65530 mappings per process.
MAX_THREADS = 16
KIND_WORDS = {"p": "a pointer", "f": "a floating-point value", "i": "an integer",
              "o": "a struct"}


def cpu_threads() -> int:
    """CPU threads for a launch: KERNEL_STUDIO_CPU_THREADS, else the cores this process may
    use, at most MAX_THREADS."""
    setting = settings.integer(settings.CPU_THREADS)
    if setting is not None:
        return min(setting, MAX_THREADS)
    return max(1, min(len(os.sched_getaffinity(0)), MAX_THREADS))


@dataclass
class LoadedKernel:
    """A kernel library loaded in this worker."""

    library: ctypes.CDLL
    entry: str
    params: list[tuple[str, int]]
    max_threads: int | None


def _declare_kernel(library: ctypes.CDLL) -> None:
    """Argument and result types of a kernel library's exported functions."""
    library.kernel_studio_params.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                             ctypes.c_int]
    library.kernel_studio_params.restype = ctypes.c_int
    library.kernel_studio_launch.argtypes = [
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint),
        ctypes.POINTER(ctypes.c_uint), ctypes.c_ulonglong, ctypes.c_int, ctypes.c_char_p,
        ctypes.c_ulonglong]
    library.kernel_studio_launch.restype = ctypes.c_int


def _params(library: ctypes.CDLL) -> list[tuple[str, int]]:
    """(kind, size) of each parameter of the entry, as the compiled kernel declares it."""
    kinds = ctypes.create_string_buffer(MAX_PARAMS)
    sizes = (ctypes.c_int * MAX_PARAMS)()
    count = min(library.kernel_studio_params(kinds, sizes, MAX_PARAMS), MAX_PARAMS)
    return [(kinds.raw[i:i + 1].decode(), sizes[i]) for i in range(count)]


def _expected(arg: BufferArg | ScalarArg) -> tuple[str, int, str]:
    """(kind, size, words) the spec gives for one parameter."""
    if isinstance(arg, BufferArg):
        return "p", ctypes.sizeof(ctypes.c_void_p), f"a {arg.dtype} buffer"
    dtype = lookup(arg.dtype)
    return ("f" if dtype.is_float else "i"), dtype.itemsize, f"a {arg.dtype} scalar"


def check_params(kernel: LoadedKernel, args: list[BufferArg | ScalarArg]) -> None:
    """Refuse a launch whose arguments do not fit the kernel's parameters (on a GPU the kernel
    would read garbage); the message names the parameter."""
    if len(kernel.params) != len(args):
        raise BackendError("load", f"{kernel.entry} takes {len(kernel.params)} parameters but "
                           f"the spec gives {len(args)} arguments")
    for index, ((kind, size), arg) in enumerate(zip(kernel.params, args, strict=True)):
        want_kind, want_size, words = _expected(arg)
        if (kind == "p") != (want_kind == "p") or size != want_size or (
                kind in "fi" and want_kind in "fi" and kind != want_kind):
            raise BackendError("load", f"parameter {index} of {kernel.entry} is "
                               f"{KIND_WORDS.get(kind, kind)} of {size} bytes, but the spec "
                               f"gives {words} ({want_size} bytes)")


def _scalar_bytes(arg: ScalarArg) -> ctypes.Array[ctypes.c_char]:
    """A by-value parameter with the exact bytes of its dtype."""
    value = np.array(arg.value, dtype=lookup(arg.dtype).numpy)
    return ctypes.create_string_buffer(value.tobytes(), max(8, value.nbytes))


class CpuBackend(Backend):
    """CUDA kernels on the CPU through the emulation runtime."""

    name = "cpu"

    def __init__(self, device: int = 0) -> None:
        """Find the host compiler; nothing is built until the first kernel arrives."""
        compiler = toolchain.find_toolchain()
        if compiler is None:
            raise BackendError("unsupported", toolchain.missing_compiler() or "no compiler")
        self.compiler = compiler
        self.device = device
        self.threads = cpu_threads()
        self._runtime: ctypes.CDLL | None = None
        self._arenas: memory.ArenaPool | None = None
        self._kernels: dict[str, LoadedKernel] = {}
        # A kernel that crashes the worker on purpose should not leave a core file behind.
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))

    def describe(self) -> dict[str, Any]:
        """The emulated device: CPU threads and compiler; kind "emulation"."""
        return {"name": f"CPU emulation ({self.threads} CPU threads)", "kind": "emulation",
                "arch": "emulated (sm_90 semantics)", "threads": self.threads,
                "compiler": self.compiler.version, "pid": os.getpid()}

    def runtime(self) -> ctypes.CDLL:
        """The emulation runtime, built when needed and loaded once, globally (kernel
        libraries find its functions through the global symbol scope)."""
        if self._runtime is None:
            path = toolchain.runtime_library(self.compiler)
            self._runtime = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
            memory.declare(self._runtime)
        return self._runtime

    def arenas(self) -> memory.ArenaPool:
        """The arenas of this worker's launches, kept between them."""
        if self._arenas is None:
            self._arenas = memory.ArenaPool(self.runtime())
        return self._arenas

    def prepare(self, request: LaunchRequest) -> None:
        """Build (or reuse) the kernel's library and load it."""
        if request.source is None:
            raise BackendError("bad_request", "the cpu backend builds kernels from source, and "
                               "this load request has none")
        self.runtime()
        built = build.build(self.compiler, request.source, _source_name(request),
                            request.source_dir, list(request.options), request.entry)
        try:
            library = ctypes.CDLL(str(built.library), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as error:
            raise BackendError("unsupported", f"not supported by the CPU backend: the kernel "
                               f"library does not load ({error})") from None
        _declare_kernel(library)
        self._kernels[request.kernel_key] = LoadedKernel(library, request.entry, _params(library),
                                                     built.max_threads)

    def run(self, request: LaunchRequest) -> float:
        """Run one launch on the CPU; images are updated in place."""
        kernel = self._kernels.get(request.kernel_key)
        if kernel is None:
            raise BackendError("bad_request", f"kernel {request.symbol} was not loaded")
        check_params(kernel, request.args)
        _check_launch_bounds(kernel, request.block)
        arenas: list[memory.Arena] = []
        self.runtime().ks_set_descending(int(request.descending))
        try:
            values = self._values(request.args, arenas)
            seconds = self._launch(kernel, request, values)
            for arena in arenas:
                arena.copy_back()
            return seconds
        finally:
            for arena in arenas:
                arena.release()

    def _values(self, args: list[BufferArg | ScalarArg],
                arenas: list[memory.Arena]) -> list[ctypes._CData]:
        """Storage for each parameter's value: a pointer into an arena, or a scalar's bytes."""
        values: list[ctypes._CData] = []
        for index, arg in enumerate(args):
            if isinstance(arg, BufferArg):
                arenas.append(memory.Arena(self.arenas(), arg, index))
                values.append(ctypes.c_uint64(arenas[-1].data_pointer))
            else:
                values.append(_scalar_bytes(arg))
        return values

    def _launch(self, kernel: LoadedKernel, request: LaunchRequest,
                values: list[ctypes._CData]) -> float:
        """Call the kernel library's launcher; failures become BackendErrors."""
        pointers = (ctypes.c_void_p * max(1, len(values)))(
            *[ctypes.addressof(v) for v in values])
        grid = (ctypes.c_uint * 3)(*request.grid)
        block = (ctypes.c_uint * 3)(*request.block)
        error = ctypes.create_string_buffer(ERROR_BYTES)
        start = time.perf_counter()
        code = kernel.library.kernel_studio_launch(pointers, grid, block, request.shared_bytes,
                                                   self.threads, error, ERROR_BYTES)
        seconds = time.perf_counter() - start
        message = error.value.decode("utf-8", "replace")
        if code == 2:
            raise BackendError("load", f"launch refused: {message}")
        if code == 3:  # the emulation met something it cannot run as a GPU would
            raise BackendError("unsupported", f"{message} (CPU emulation)")
        if code != 0:
            raise BackendError("device", f"{message} (kernel {kernel.entry}, CPU emulation)")
        return seconds


def _source_name(request: LaunchRequest) -> str:
    """The file name the compiler's messages should show for the kernel's source."""
    if request.source_path:
        return request.source_path
    if request.source_dir:
        return os.path.join(request.source_dir, f"{entry_name(request.entry)}.cu")
    return f"{entry_name(request.entry)}.cu"


def _check_launch_bounds(kernel: LoadedKernel, block: tuple[int, int, int]) -> None:
    """A GPU refuses a block larger than the entry's __launch_bounds__."""
    threads = block[0] * block[1] * block[2]
    if kernel.max_threads is not None and threads > kernel.max_threads:
        raise BackendError("load", f"launch refused: a block of {threads} threads exceeds "
                           f"__launch_bounds__({kernel.max_threads}) of {kernel.entry}")
