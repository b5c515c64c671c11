"""The assistant's NF4 layers through Kernel Studio's own nf4_gemv kernel while it decodes.

Why: at batch 1 to 8 a decode step is one matrix-vector product per layer, and bitsandbytes'
4-bit path either runs its own GEMV (batch 1) or dequantizes the whole weight to bf16 and
multiplies (more than one row: three times the memory traffic). The nf4_gemv template (in the
gallery, verified like any kernel) reads each packed weight once for up to 8 rows.

Which kernel: the template's tensor-core kernel (nf4_gemv.cu, mma.sync on bf16) where the GPU
has bf16 tensor cores (compute capability 8.0 and up), else its CUDA-core kernel
(nf4_gemv_simt.cu); both keep one contract, checked by the same spec reference.

How: the template is compiled by the app's own compile service (NVRTC, cached), its cubin is
loaded with the CUDA driver API (cuda-python, which the compile service already uses) into the
context torch works in, and launched on torch's current stream, so a CUDA graph capture records
it like any other kernel. Each bitsandbytes Linear4bit layer whose layout the kernel knows
(NF4, blocksize 64, double-quantized absmax in groups of 256) gets a forward that takes the
kernel for up to MAX_ROWS rows of bf16 input and bitsandbytes' own path otherwise: more rows
(reading a prompt), other input dtypes, or autograd on (training). Layers in other layouts
keep bitsandbytes' forward.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Any

from app.base import paths

# Rows (tokens) above which bitsandbytes' dequantize-and-multiply is faster than streaming the
# weights once per 8 rows.
MAX_ROWS = 8
FOLDER = paths.RESOURCES / "kernels" / "nf4_gemv"


@dataclass(frozen=True)
class Variant:
    """One of the template's kernels and the launch its spec gives it."""

    source: str
    rows_per_block: int  # rows of W (outputs per row of x) a block computes
    threads: int
    capability: tuple[int, int]  # the oldest GPU it runs on
    blocks_per_sm: int = 0  # blocks loop over tiles, this many an SM (0: a block a tile)
    shared_bytes: int = 0  # dynamic shared memory a launch takes
    options: tuple[str, ...] = ()  # compile options (-D settings of the source's macros)

    def grid(self, n: int, sm_count: int) -> int:
        """Blocks to launch for N rows of W on a GPU of `sm_count` SMs."""
        tiles = -(-n // self.rows_per_block)
        return min(tiles, sm_count * self.blocks_per_sm) if self.blocks_per_sm else tiles


TENSOR_CORES = Variant("nf4_gemv.cu", 16, 256, (8, 0), 3)  # 3 an SM: as the kernel is built
CUDA_CORES = Variant("nf4_gemv_simt.cu", 4, 128, (0, 0))


def variant_for(capability: tuple[int, int]) -> Variant:
    """The fastest kernel a GPU of this compute capability runs."""
    return TENSOR_CORES if capability >= TENSOR_CORES.capability else CUDA_CORES


class KernelUnavailable(RuntimeError):
    """The kernel cannot be built or loaded here; the message says why."""


def _check(result: Any, what: str) -> Any:
    """The values of a cuda-python call, or KernelUnavailable with the driver's error."""
    error, *values = result
    if int(error) != 0:
        raise KernelUnavailable(f"{what} failed: CUDA error {int(error)} ({error})")
    return values[0] if len(values) == 1 else values


class Nf4Gemv:
    """The compiled template loaded into the current CUDA context, ready to launch."""

    def __init__(self, arch: str, device_index: int, variant: Variant, sm_count: int) -> None:
        """Compile `variant` for `arch` (sm_XY) through the compile service and load the cubin
        into the GPU's primary context (the one torch works in)."""
        from app.compile.api import compile_file

        result = compile_file(FOLDER / variant.source, arch=arch, options=list(variant.options))
        if not result.ok or not result.cubin:
            raise KernelUnavailable(f"nf4_gemv did not compile for {arch}: {result.message}")
        try:
            from cuda.bindings import driver
        except ImportError as error:
            raise KernelUnavailable(f"cuda-python is not installed ({error})") from error
        self.driver = driver
        device = _check(driver.cuDeviceGet(device_index), "finding the GPU")
        context = _check(driver.cuDevicePrimaryCtxRetain(device), "opening the GPU's context")
        _check(driver.cuCtxSetCurrent(context), "entering the GPU's context")
        self.module = _check(driver.cuModuleLoadData(result.cubin), "loading the cubin")
        self.function = _check(driver.cuModuleGetFunction(self.module, b"nf4_gemv"),
                               "finding nf4_gemv")
        if variant.shared_bytes:
            # Static and dynamic shared memory past 48 KB a block needs the kernel's opt-in.
            attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(driver.cuFuncSetAttribute(self.function, attribute, variant.shared_bytes),
                   f"asking for {variant.shared_bytes} bytes of shared memory")
        self.arch, self.variant, self.sm_count = arch, variant, sm_count

    def launch(self, x: Any, layer: Nf4Layer, out: Any, rows: int, stream: int) -> None:
        """out[rows, N] = x[rows, K] times the layer's weights transposed, on `stream`."""
        values = (x.data_ptr(), layer.weight.data_ptr(), layer.absmax_q.data_ptr(),
                  layer.code2.data_ptr(), layer.scale2.data_ptr(), layer.offset,
                  out.data_ptr(), rows, layer.n, layer.k)
        types = (ctypes.c_void_p,) * 5 + (ctypes.c_float, ctypes.c_void_p) + (ctypes.c_int,) * 3
        grid = self.variant.grid(layer.n, self.sm_count)
        _check(self.driver.cuLaunchKernel(self.function, grid, 1, 1, self.variant.threads, 1, 1,
                                          self.variant.shared_bytes, stream, (values, types), 0),
               "launching nf4_gemv")


@functools.cache
def kernel_for(device_index: int) -> Nf4Gemv:
    """One loaded kernel per GPU (cached: compiling and loading happen once per process)."""
    import torch

    major, minor = torch.cuda.get_device_capability(device_index)
    sm_count = torch.cuda.get_device_properties(device_index).multi_processor_count
    with torch.cuda.device(device_index):
        torch.cuda.current_stream().synchronize()  # torch's context exists before we join it
        return Nf4Gemv(f"sm_{major}{minor}", device_index, variant_for((major, minor)), sm_count)


class Nf4Layer:
    """What the kernel needs of one bitsandbytes Linear4bit layer, checked."""

    def __init__(self, module: Any) -> None:
        """Take the layer's packed weights and its double-quantized absmax; ValueError with the
        reason when the layout is not the one the kernel reads."""
        state = getattr(module.weight, "quant_state", None)
        if state is None or state.quant_type != "nf4" or state.blocksize != 64:
            raise ValueError("not NF4 at blocksize 64")
        if not state.nested or state.state2.blocksize != 256:
            raise ValueError("absmax not double-quantized in groups of 256")
        self.n, self.k = int(state.shape[0]), int(state.shape[1])
        if self.k % 64 or module.weight.device.type != "cuda":
            raise ValueError("K not a multiple of 64, or not on a GPU")
        self.weight = module.weight.data
        self.absmax_q = state.absmax
        self.code2 = state.state2.code.float().contiguous()
        self.scale2 = state.state2.absmax.float().contiguous()
        self.offset = float(state.offset)
        self.bias = module.bias


def _kernel_forward(layer: Nf4Layer, original: Any) -> Any:
    """A layer's forward: the kernel for a few rows in bf16 without autograd, else the
    layer's own forward."""
    import torch

    def forward(x: Any, *args: Any, **kwargs: Any) -> Any:
        rows = x.numel() // layer.k if x.shape[-1] == layer.k else 0
        if (not 0 < rows <= MAX_ROWS or x.dtype != torch.bfloat16 or args or kwargs
                or (torch.is_grad_enabled() and x.requires_grad)):
            return original(x, *args, **kwargs)
        flat = x.reshape(rows, layer.k).contiguous()
        out = torch.empty((rows, layer.n), dtype=torch.bfloat16, device=x.device)
        kernel_for(x.device.index or 0).launch(flat, layer, out, rows,
                                               torch.cuda.current_stream(x.device).cuda_stream)
        if layer.bias is not None:
            out += layer.bias.to(out.dtype)
        return out.view(*x.shape[:-1], layer.n)

    return forward


def slower_here(device_index: int) -> str | None:
    """Why the template's kernel is not worth it on this GPU (None: it is). Measured on the
    H200: the tensor-core kernel matches bitsandbytes' product at 1 row and is 2-3.5 times as
    fast at 8; the CUDA-core one is slower than bitsandbytes' at 1 row."""
    import torch

    capability = torch.cuda.get_device_capability(device_index)
    if variant_for(capability) is TENSOR_CORES:
        return None
    return (f"this GPU (compute capability {capability[0]}.{capability[1]}) has no bf16 tensor "
            "cores, and nf4_gemv's CUDA-core kernel is slower than bitsandbytes' there "
            "(KERNEL_STUDIO_NF4_KERNEL=on uses it anyway)")


def use_kernel(model: Any, any_gpu: bool = True) -> tuple[int, str | None]:
    """Route the model's NF4 layers through nf4_gemv for decode-sized inputs (with `any_gpu`
    False only where its tensor-core kernel runs). Returns how many layers take it and, when
    none can, why (the model keeps bitsandbytes' path)."""
    try:
        from bitsandbytes.nn.modules import Linear4bit
    except ImportError:
        return 0, "bitsandbytes is not installed"
    layers = [m for m in model.modules() if isinstance(m, Linear4bit)]
    if not layers:
        return 0, "the model has no 4-bit layers"
    checked: list[tuple[Any, Nf4Layer]] = []
    reasons: set[str] = set()
    for module in layers:
        try:
            checked.append((module, Nf4Layer(module)))
        except ValueError as error:
            reasons.add(str(error))
    if not checked:
        return 0, "no layer in a layout nf4_gemv reads (" + "; ".join(sorted(reasons)) + ")"
    device_index = checked[0][1].weight.device.index or 0
    slower = None if any_gpu else slower_here(device_index)
    if slower:
        return 0, slower
    try:
        kernel_for(device_index)
    except KernelUnavailable as error:
        return 0, str(error)
    for module, layer in checked:
        if getattr(module, "_nf4_gemv_original", None) is None:
            module._nf4_gemv_original = module.forward
        module.forward = _kernel_forward(layer, module._nf4_gemv_original)
    return len(checked), None


def stop_using_kernel(model: Any) -> None:
    """Give every patched layer its own forward back."""
    for module in model.modules():
        original = getattr(module, "_nf4_gemv_original", None)
        if original is not None:
            module.forward = original
            module._nf4_gemv_original = None
