"""Whether a kernel's text tests which compiler (or host) reads it."""

from __future__ import annotations

import re

# Preprocessor tests of which compiler (or host) reads the file. A kernel that branches on them
# has code that neither verification path compiles (NVRTC and the CPU emulation both define
# __CUDA_ARCH__): "passed" says nothing about it, so it is never kept as an example or taught.
_COMPILER_TEST = re.compile(
    r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*\b(?:__CUDA_ARCH__|__CUDACC__|"
    r"__CUDACC_RTC__|__NVCC__|__CUDA_ARCH_LIST__|__x86_64__|__aarch64__|__linux__|__unix__|"
    r"__GNUC__|__clang__|_WIN32|_MSC_VER|__STDC_HOSTED__)\b", re.MULTILINE)


def compiler_dependent(source: str) -> str | None:
    """The first preprocessor line of `source` that tests which compiler or host reads it
    (continued lines joined), or None."""
    joined = re.sub(r"\\\r?\n", " ", source)
    found = _COMPILER_TEST.search(joined)
    return found.group(0).strip() if found else None
