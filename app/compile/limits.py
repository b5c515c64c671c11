"""Resource limits for compilers: an address-space cap (RLIMIT_AS) and a cap on the size of any
file they write (RLIMIT_FSIZE). A kernel that makes a compiler explode (a template without end,
a macro that doubles itself, a table of gigabytes) then fails inside that compiler, which
reports it, instead of pushing the machine into swap or filling its disk.

Limits are inherited by every process a capped process starts: the compile child caps itself,
so nvcc and its tools carry the same caps; the CPU backend caps each host-compiler run in the
child, between fork and exec (`preexec`).
"""

from __future__ import annotations

import resource
import signal
from collections.abc import Callable

MIB = 1 << 20
# The defaults: what one compile may take (as the sandbox, where there is one, also allows).
COMPILER_MEMORY_MB = 4096
COMPILER_FILE_MB = 1024
# What compilers print when a cap stopped them (GCC, EDG, LLVM, the C++ runtime, the shell).
_OUT_OF_MEMORY = ("out of memory", "std::bad_alloc", "virtual memory exhausted",
                  "cannot allocate memory")
_FILE_TOO_LARGE = ("file size limit exceeded", f"signal {int(signal.SIGXFSZ)}",
                   "file too large")


def cap(memory_mb: int, file_mb: int) -> None:
    """Cap this process (and whatever it starts) at `memory_mb` MiB of address space and
    `file_mb` MiB per written file; never above a hard limit already in force."""
    _set(resource.RLIMIT_AS, memory_mb * MIB)
    _set(resource.RLIMIT_FSIZE, file_mb * MIB)


def _set(kind: int, limit: int) -> None:
    """Soft and hard limit `kind` to `limit`, or to the present hard limit when lower."""
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(kind, (limit, limit))


def preexec(memory_mb: int = COMPILER_MEMORY_MB,
            file_mb: int = COMPILER_FILE_MB) -> Callable[[], None]:
    """A `preexec_fn` for subprocess that caps the program about to run. (It runs between fork
    and exec and only calls setrlimit, which is safe even where other threads exist.)"""
    def apply() -> None:
        cap(memory_mb, file_mb)
    return apply


def current_mb() -> tuple[int | None, int | None]:
    """This process's address-space and file-size caps in MiB (None: unlimited)."""
    def mb(kind: int) -> int | None:
        soft, _ = resource.getrlimit(kind)
        return None if soft == resource.RLIM_INFINITY else soft // MIB
    return mb(resource.RLIMIT_AS), mb(resource.RLIMIT_FSIZE)


def limit_hit(output: str, returncode: int | None = None) -> str | None:
    """"memory" or "file" when a compiler's output (or its death by SIGXFSZ) says that a cap
    stopped it, else None."""
    text = output.lower()
    if returncode == -signal.SIGXFSZ or any(s in text for s in _FILE_TOO_LARGE):
        return "file"
    if any(s in text for s in _OUT_OF_MEMORY):
        return "memory"
    return None


def explain(which: str, memory_mb: int | None, file_mb: int | None, what: str) -> str:
    """The message for `what` (e.g. "compiling k.cu") stopped by the `which` cap."""
    if which == "file":
        return (f"{what} tried to write a file larger than its {file_mb} MiB limit and was "
                "stopped. A macro or template that expands without end, or a huge constant "
                "table, does this: simplify it")
    return (f"{what} needed more than its {memory_mb} MiB memory cap and was stopped. A runaway "
            "template or macro does this: simplify it, or raise the cap")
