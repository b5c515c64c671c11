"""Compile and inspect CUDA kernels without a GPU: NVRTC (default) or nvcc, in a child process
with a time limit and a memory cap; diagnostics on the user's lines; per-kernel resources and
occupancy; PTX and SASS with source lines; options and includes from an allowlist; a verified,
content-addressed cache. No Qt here.

    result = compile_file("kernels/vector_add.cu", arch="sm_90", options=["-O3"])
    if result.ok:
        symbol = result.kernel_symbol("vector_add")
        listing = sass_listing(result, symbol)
"""

from app.compile.api import MAX_SOURCE_BYTES, compile_file, compile_source, default_arch
from app.compile.model import (
    CompileResult,
    Diagnostic,
    KernelResources,
    Occupancy,
    OptionError,
    SassLine,
    Severity,
)
from app.compile.occupancy import occupancy
from app.compile.options import DEFAULT_ARCH, check_arch, check_options
from app.compile.sass import SassError, ptx_function, sass_listing

__all__ = [
    "DEFAULT_ARCH",
    "MAX_SOURCE_BYTES",
    "CompileResult",
    "Diagnostic",
    "KernelResources",
    "Occupancy",
    "OptionError",
    "SassError",
    "SassLine",
    "Severity",
    "check_arch",
    "check_options",
    "compile_file",
    "compile_source",
    "default_arch",
    "occupancy",
    "ptx_function",
    "sass_listing",
]
