"""What a CPU-backend fault line says, read back in the parent: which thread touched which
kernel parameter how far outside its memory, and at which line of the user's source.

The runtime (native/runtime/fault.cpp) writes one line as the worker dies, e.g.

    kernel-studio cpu backend: illegal memory access: read from 0x7f53e0000000 (0 bytes past
    the end of the allocation of kernel parameter 2, beyond its guard zone) in kernel
    vector_add, block (3, 0, 0), thread (255, 0, 0) [pc kernel-<hash>.so+0x1a2b]

The "[pc ...]" part is the faulting instruction's offset in the kernel library; the worker
client turns it into " at vector_add.cu:5" (without_pc) before anyone reads the message. Kernel
libraries are built with -g, and `#line` keeps the user's file and line numbers in them
(build.wrapper), so addr2line (binutils, which every GNU toolchain installs; llvm-addr2line
beside clang) maps it to "vector_add.cu:5". Only a library of the build cache's own, intact
by its seal, is read; the tool runs sandboxed like the compiler. Where no tool is found, or
the fault lies outside the kernel's code, the line is simply not named.
"""

from __future__ import annotations

import functools
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from app.engine.worker.backends.base import BackendError
from app.engine.worker.backends.cpu import build, sealed, toolchain

PC = re.compile(r" \[pc (?P<library>kernel-[0-9a-f]{24}\.so)\+0x(?P<offset>[0-9a-f]+)\]")
OUTSIDE = re.compile(
    r"kernel-studio cpu backend: [^:\n]*access(?:: (?P<access>read from|write to) | at )"
    r"0x[0-9a-f]+ \((?P<bytes>\d+) bytes (?P<side>past the end of|before) the allocation of "
    r"kernel parameter (?P<param>\d+)[^)\n]*\) in kernel \S+, block \((?P<block>[\d, ]+)\), "
    r"thread \((?P<thread>[\d, ]+)\)(?: at (?P<line>[^\s:]+:\d+))?")
SYMBOLIZERS = ("addr2line", "llvm-addr2line")
# addr2line's answer for one frame: "/path/file.cu:12" or "...:12 (discriminator 3)".
FRAME = re.compile(r"^(?P<file>.+):(?P<line>\d+)(?: \(discriminator \d+\))?$")


@dataclass(frozen=True)
class OutsideAccess:
    """An access of one GPU thread outside a buffer's memory, as the runtime reported it.
    `before`: before the allocation's start (else past its end), by `bytes` bytes; `write`
    is None where the platform does not say which."""

    param: int
    bytes: int
    before: bool
    write: bool | None
    block: tuple[int, ...]
    thread: tuple[int, ...]
    line: str | None  # "vector_add.cu:5", when it could be found


def _triple(text: str) -> tuple[int, ...]:
    """'3, 0, 0' -> (3, 0, 0)."""
    return tuple(int(part) for part in text.split(","))


def outside_access(message: str) -> OutsideAccess | None:
    """The access outside a buffer that a fault line in `message` reports, or None."""
    found = OUTSIDE.search(message)
    if found is None:
        return None
    access = found.group("access")
    return OutsideAccess(int(found.group("param")), int(found.group("bytes")),
                         found.group("side") == "before", None if access is None else
                         access == "write to", _triple(found.group("block")),
                         _triple(found.group("thread")),
                         found.group("line") or source_line(message[found.end():]))


def source_line(message: str) -> str | None:
    """The user's file (its name) and line of the first "[pc ...]" in `message`, or None."""
    found = PC.search(message)
    if found is None:
        return None
    library = sealed.confined(toolchain.cache_folder(), found.group("library"))
    if library is None or not sealed.intact(library):
        return None
    return user_line(frames(library, int(found.group("offset"), 16)))


def without_pc(message: str) -> str:
    """The message with its "[pc ...]" parts turned into " at FILE:LINE" (or dropped)."""
    def said(found: re.Match[str]) -> str:
        line = source_line(found.group(0))
        return f" at {line}" if line else ""
    return PC.sub(said, message)


@functools.lru_cache(maxsize=1)
def symbolizer() -> str | None:
    """The addr2line to use: beside the compiler first (a clang install), else on PATH."""
    compiler = toolchain.find_toolchain()
    folders = [str(Path(compiler.path).parent)] if compiler else []
    for name in SYMBOLIZERS:
        for folder in [*folders, None]:
            found = shutil.which(name, path=folder)
            if found:
                return found
    return None


def frames(library: Path, offset: int) -> list[tuple[str, int]]:
    """(file, line) of the instruction at `offset` in `library`, innermost inlined function
    first, then the functions it was inlined into; [] when that cannot be known."""
    tool = symbolizer()
    if tool is None:
        return []
    try:
        result = toolchain.run_tool([tool, "-i", "-e", str(library), hex(offset)],
                                    readable=(library.parent,))
    except BackendError:
        return []
    found = [FRAME.match(line.strip()) for line in result.stdout.splitlines()]
    return [(m.group("file"), int(m.group("line"))) for m in found if m and m.group("line") != "0"]


def user_line(found: list[tuple[str, int]]) -> str | None:
    """'file.cu:12' for the innermost frame in the user's own files (not the emulation's
    headers, its launcher or the system's), or None."""
    own = (str(toolchain.NATIVE), *build.SYSTEM_PREFIXES)
    for file, line in found:
        if not file.startswith(own) and not file.endswith(toolchain.LAUNCHER_FILE) \
                and file != "??":
            return f"{Path(file).name}:{line}"
    return None
