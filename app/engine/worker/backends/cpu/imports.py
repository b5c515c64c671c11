"""What a kernel library may call on the host.

The CPU backend runs a kernel as native code in the worker process, so host code hidden from
the GPU compiler (say behind `#ifdef __linux__`, which NVRTC does not define) would run with the
user's rights. A kernel may only call what device code can call: the emulation runtime, C's math
library, printf and what the C++ compiler itself emits. Every other function the built library
imports (system, fopen, socket, dlsym, ...) makes the kernel unsupported here. This raises the
bar; it is not a sandbox (see the README).
"""

from __future__ import annotations

import ctypes.util
import functools
import shutil
import subprocess
from pathlib import Path

from app.engine.worker.backends.base import BackendError
from app.engine.worker.backends.cpu import sealed

# Emitted by the compiler or the C/C++ runtime for ordinary device-style code, or what CUDA's
# printf and assert become on the host.
TOOLCHAIN = frozenset({
    "__tls_get_addr", "__gmon_start__", "_ITM_registerTMCloneTable",
    "_ITM_deregisterTMCloneTable", "__cxa_finalize", "__cxa_atexit", "__stack_chk_fail",
    "__gxx_personality_v0", "_Unwind_Resume", "__cxa_guard_acquire", "__cxa_guard_release",
    "__cxa_guard_abort", "__cxa_pure_virtual", "__cxa_begin_catch", "__cxa_end_catch",
    "_ZSt9terminatev", "__assert_fail", "abort", "memcpy", "memmove", "memset", "memcmp",
    "printf", "vprintf", "puts", "putchar", "__printf_chk", "__vprintf_chk", "__memcpy_chk",
    "__memset_chk", "__memmove_chk",
})
RUNTIME_PREFIX = "ks_"
# Digests of the kernel libraries whose imports passed in this process (check_imports).
_PASSED: set[str] = set()
# libgcc's arithmetic helpers (__popcountdi2, __divti3, __mulsc3, ...).
LIBGCC_SUFFIXES = ("di2", "ti3", "si2", "sc3", "dc3", "sf2", "df2", "tf2")


@functools.cache
def _libm_functions() -> frozenset[str]:
    """Every function C's math library exports (pure computation)."""
    found = ctypes.util.find_library("m")
    candidates = [Path(p) for p in ("/lib/x86_64-linux-gnu/libm.so.6",
                                    "/lib/aarch64-linux-gnu/libm.so.6", "/lib64/libm.so.6",
                                    "/usr/lib/libm.so.6")]
    paths = ([Path(found)] if found and Path(found).is_absolute() else []) + candidates
    for path in paths:
        if path.exists():
            return frozenset(_symbols(path, "--defined-only"))
    return frozenset()


def _symbols(library: Path, which: str) -> list[str]:
    """Dynamic symbol names of a library (without version suffixes), from nm."""
    nm = shutil.which("nm")
    if nm is None:
        raise BackendError("unsupported", "not supported by the CPU backend: `nm` (binutils) "
                           "is missing, so the kernel's host calls cannot be checked")
    done = subprocess.run([nm, "-D", which, str(library)], capture_output=True, text=True,
                          timeout=30, check=False)
    if done.returncode != 0:
        raise BackendError("unsupported", f"not supported by the CPU backend: cannot read the "
                           f"kernel library's symbols ({done.stderr.strip()[:200]})")
    return [line.split()[-1].split("@")[0] for line in done.stdout.splitlines() if line.strip()]


def allowed(name: str) -> bool:
    """Whether a kernel library may import this function."""
    return (name in TOOLCHAIN or name.startswith(RUNTIME_PREFIX)
            or (name.startswith("__") and name.endswith(LIBGCC_SUFFIXES))
            or name in _libm_functions())


def check_imports(library: Path) -> None:
    """Refuse a kernel library that imports any host function a kernel has no business calling.
    A library content this process has passed before is not read by nm again: a cached kernel
    is checked at every load, and nm is a process of its own (30 ms, more on a busy machine)."""
    before = sealed.digest(library)
    if before is not None and before in _PASSED:
        return
    forbidden = sorted({n for n in _symbols(library, "--undefined-only") if not allowed(n)})
    if forbidden:
        names = ", ".join(forbidden[:8]) + (" ..." if len(forbidden) > 8 else "")
        raise BackendError("unsupported", "not supported by the CPU backend: the kernel calls "
                           f"host functions that device code cannot ({names}); it is not run")
    if before is not None and sealed.digest(library) == before:  # nm read what was hashed
        _PASSED.add(before)
