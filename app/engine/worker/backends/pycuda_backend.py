"""The GPU backend: PyCUDA in the worker process, loading SASS (cubin) for the exact arch."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np
import pycuda.driver as cuda

from app.engine.worker.backends.base import (
    Backend,
    BackendError,
    BufferArg,
    LaunchRequest,
    LaunchSequence,
    ScalarArg,
)
from app.engine.worker.backends.pycuda_timer import time_launches
from app.engine.worker.timing import TimingPlan, TimingRecord
from app.spec.dtypes import lookup


class PycudaBackend(Backend):
    """One CUDA device with its own context for the life of the worker."""

    name = "pycuda"

    def __init__(self, device: int = 0) -> None:
        """Create the context; every failure here is a device error."""
        try:
            cuda.init()
            self.device = cuda.Device(device)
            self.context = self.device.make_context()
        except cuda.Error as error:
            raise BackendError("device", f"cannot open CUDA device {device}: {error}") from None
        self.modules: dict[str, Any] = {}
        self.loaded: dict[str, Any] = {}  # symbol -> function, from `load` requests

    def describe(self) -> dict[str, Any]:
        """Name, arch, UUID, memory, driver and runtime versions."""
        major, minor = self.device.compute_capability()
        info: dict[str, Any] = {
            "name": self.device.name(), "kind": "gpu", "arch": f"sm_{major}{minor}",
            "total_memory": self.device.total_memory(),
            "driver_version": cuda.get_driver_version(),
            "multiprocessors": self.device.get_attribute(
                cuda.device_attribute.MULTIPROCESSOR_COUNT),
        }
        try:
            info["uuid"] = self.device.get_uuid().hex()
        except (AttributeError, cuda.Error):
            info["uuid"] = ""
        return info

    def prepare(self, request: LaunchRequest) -> None:
        """Load the kernel of a `load` request, so that later `run` requests (which name only
        the symbol) find it."""
        self.loaded[request.kernel_key] = self._function(request)

    def _function(self, request: LaunchRequest) -> Any:
        """The kernel function, from a module cached by the cubin's hash."""
        if request.cubin is None:
            if request.kernel_key not in self.loaded:
                raise BackendError("bad_request", "the pycuda backend needs a cubin")
            function = self.loaded[request.kernel_key]
            # A loaded kernel's later launches may ask for another size (a spec's expression).
            _allow_shared(function, request.symbol, request.shared_bytes)
            return function
        key = hashlib.sha256(request.cubin).hexdigest()
        try:
            if key not in self.modules:
                self.modules[key] = cuda.module_from_buffer(request.cubin)
            function = self.modules[key].get_function(request.symbol)
        except cuda.Error as error:
            raise BackendError("load", f"cannot load kernel {request.symbol}: {error}") from None
        _allow_shared(function, request.symbol, request.shared_bytes)
        return function

    @staticmethod
    def _scalar(arg: ScalarArg) -> Any:
        """A by-value parameter with the exact bytes of its dtype."""
        dtype = lookup(arg.dtype)
        value = np.array(arg.value, dtype=dtype.numpy)
        if arg.dtype in ("float16", "bfloat16"):
            # Same size and alignment; pycuda packs uint16 without needing to know the type.
            return value.view(np.uint16)[()]
        return value[()]

    def run(self, request: LaunchRequest) -> float:
        """Copy images in, launch, synchronise, copy images back."""
        function = self._function(request)
        allocations: list[Any] = []
        try:
            params = self._upload(request, allocations)
            start = time.perf_counter()
            function(*params, block=request.block, grid=request.grid,
                     shared=request.shared_bytes)
            self.context.synchronize()
            seconds = time.perf_counter() - start
            self._download(request, allocations)
            return seconds
        except cuda.Error as error:
            raise BackendError("device", f"CUDA error: {error}") from None
        finally:
            for allocation in allocations:
                try:
                    allocation.free()
                except cuda.Error:
                    pass

    def _upload(self, request: LaunchRequest, allocations: list[Any]) -> list[Any]:
        """Allocate each buffer image at its exact size, copy it in, build the parameters."""
        params: list[Any] = []
        for arg in request.args:
            if isinstance(arg, ScalarArg):
                params.append(self._scalar(arg))
                continue
            allocation = cuda.mem_alloc(max(1, arg.image.nbytes))
            allocations.append(allocation)
            if arg.image.nbytes and arg.upload:
                cuda.memcpy_htod(allocation, arg.image)
            params.append(np.uintp(int(allocation) + arg.offset))
        return params

    @staticmethod
    def _download(request: LaunchRequest, allocations: list[Any]) -> None:
        """Copy every image back over the host copy."""
        buffers = [a for a in request.args if isinstance(a, BufferArg)]
        for arg, allocation in zip(buffers, allocations, strict=True):
            if arg.image.nbytes:
                cuda.memcpy_dtoh(arg.image, allocation)

    def time(self, variants: list[LaunchSequence], plan: TimingPlan,
             helpers: bytes | None = None, per_launch: bool = False) -> TimingRecord:
        """Time launch sequences with CUDA events (app.engine.worker.backends.pycuda_timer)."""
        return time_launches(self, variants, plan, helpers, per_launch)

    def close(self) -> None:
        """Pop and detach the context."""
        try:
            self.context.pop()
            self.context.detach()
        except cuda.Error:
            pass


def _allow_shared(function: Any, symbol: str, shared_bytes: int) -> None:
    """Let a launch take `shared_bytes` of dynamic shared memory: past 48 KB a block (static and
    dynamic together) the kernel must opt in, and Hopper offers up to 227 KB."""
    if shared_bytes <= 0:
        return
    try:
        function.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes)
    except cuda.Error as error:
        static = function.get_attribute(cuda.function_attribute.SHARED_SIZE_BYTES)
        most = cuda.Context.get_device().get_attribute(
            cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        raise BackendError(
            "load", f"{symbol} asks for {shared_bytes} bytes of dynamic shared memory beside its "
            f"{static} static bytes; this GPU gives a block at most {most} in all ({error}): lower "
            "shared_bytes in the spec's [launch]") from None

