"""The host C++ compiler for the CPU backend: finding it, building the emulation runtime once,
and building each kernel into a shared library, cached by content.

A kernel library's cache key covers everything that decides its bytes: the preprocessed source
(so a change in a header the kernel includes counts too), the options, the emulation's own
files and the compiler's version. Libraries are written atomically, so workers building the
same kernel at the same time never see half a file.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.base import paths, settings
from app.base.fsutil import atomic_write_bytes
from app.compile.limits import explain, limit_hit, preexec
from app.compile.model import OptionError
from app.compile.options import check_options  # the same allowlist as the GPU compile
from app.engine.worker.backends.base import BackendError
from app.engine.worker.backends.cpu import sealed
from app.isolation import sandbox

NATIVE = Path(__file__).resolve().parent / "native"
HEADER = NATIVE / "cuda_emu.h"
STUB_INCLUDES = NATIVE / "include"
RUNTIME_SOURCES = ("context.cpp", "scheduler.cpp", "warp.cpp", "launch.cpp", "fault.cpp")
COMMON_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-fwrapv", "-fno-strict-aliasing", "-w")
RUNTIME_FLAGS = (*COMMON_FLAGS, "-shared", "-pthread", "-fvisibility=hidden")
# Checks whose handlers (native/emu_checks.h) end a launch where the CPU would part ways with
# a GPU: misaligned accesses, out-of-range float->int conversions, over-wide shifts, integer
# division by zero. The handlers live in the kernel's library, so no sanitizer runtime is
# loaded: the empty libubsan.a in native/lib stands in for the one the driver asks for.
# -frounding-math keeps the rounding-mode intrinsics' operations where emu_math.h puts them.
CHECK_FLAGS = ("-fsanitize=alignment,float-cast-overflow,shift-exponent,integer-divide-by-zero",
               "-fno-sanitize-recover=all", "-frounding-math")
# -g: the line tables let a fault name the user's file and line (lines.py); GCC's code is the
# same with or without it (measured: identical .text), and the build takes about 6% longer.
KERNEL_FLAGS = (*COMMON_FLAGS, *CHECK_FLAGS, "-g", "-shared", "-fvisibility=hidden",
                "-fno-exceptions", f"-L{NATIVE / 'lib'}")
LAUNCHER_FILE = "<kernel-studio launcher>"
COMPILE_TIMEOUT = settings.HOST_COMPILE_TIME_LIMIT_S
COMPILER_MEMORY = 4 << 30  # address space of one compiler process
COMPILER_FILE_LIMIT = 1 << 30
# Compilers tried in order when KERNEL_STUDIO_CXX does not name one.
CANDIDATES = ("g++", "c++", "clang++")


@dataclass(frozen=True)
class Toolchain:
    """A host C++ compiler: where it is and what it says its version is."""

    path: str
    version: str


def find_toolchain() -> Toolchain | None:
    """The compiler named by KERNEL_STUDIO_CXX, else the first of g++, c++, clang++ found."""
    names = [settings.CXX.get() or ""] if settings.CXX.get() else CANDIDATES
    for name in names:
        path = shutil.which(name)
        if path:
            return Toolchain(path, _version(path))
    return None


def missing_compiler() -> str | None:
    """None when a host C++ compiler exists, else why the CPU backend cannot run."""
    if find_toolchain() is None:
        return "no host C++ compiler found (install g++, or set KERNEL_STUDIO_CXX)"
    return None


@functools.lru_cache(maxsize=8)
def _version(path: str) -> str:
    """The first line of `compiler --version`."""
    try:
        result = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (result.stdout.splitlines() or ["unknown"])[0].strip()


@functools.lru_cache(maxsize=1)
def native_digest() -> str:
    """A hash of every file of the emulation (header, stub headers, runtime sources)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in NATIVE.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(NATIVE)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def cache_folder() -> Path:
    """Where built libraries are kept."""
    return paths.cache_dir() / "cpu"


def _key(*parts: str) -> str:
    """A short content hash of several strings."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _compiler_home(path: str) -> list[Path]:
    """The installation of a compiler outside /usr (KERNEL_STUDIO_CXX may name one)."""
    home = Path(path).resolve().parent.parent
    return [] if str(home).startswith("/usr") else [home]


def _contained(command: list[str], readable: list[Path], writable: list[Path]) -> list[str]:
    """The compiler's command inside a sandbox, where one can be had: it reads the toolchain,
    the emulation's headers and `readable`, and writes only `writable` (the kernel's source
    may ask it to include anything, and it would)."""
    if not sandbox.available()[0]:
        return command
    limits = sandbox.Limits(address_space=COMPILER_MEMORY, cpu_seconds=int(2 * COMPILE_TIMEOUT),
                            file_size=COMPILER_FILE_LIMIT, open_files=256, processes=64)
    box = sandbox.Sandbox(read_only=[NATIVE, *_compiler_home(command[0]), *readable],
                          writable=writable, limits=limits, cwd=writable[0] if writable else "/",
                          env={**os.environ, "LC_ALL": "C"})
    return box.command(command)


def _run(command: list[str], stdin: str | None = None, readable: tuple[Path, ...] = (),
         writable: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run the compiler (sandboxed); one that hangs, cannot start or hits its memory or
    file-size cap is a backend failure. The caps hold with or without a sandbox: they are set
    in the compiler's own process before it starts."""
    command = _contained(command, list(readable), list(writable))
    try:
        result = subprocess.run(command, input=stdin, capture_output=True, text=True,
                                timeout=COMPILE_TIMEOUT, env={**os.environ, "LC_ALL": "C"},
                                preexec_fn=preexec(COMPILER_MEMORY >> 20,
                                                   COMPILER_FILE_LIMIT >> 20))
    except subprocess.TimeoutExpired:
        raise BackendError("load", f"the host compiler took more than {COMPILE_TIMEOUT:g} s"
                           ) from None
    except OSError as error:
        raise BackendError("unsupported", f"cannot run the host compiler: {error}") from None
    hit = limit_hit(result.stderr, result.returncode) if result.returncode else None
    if hit:
        raise BackendError("unsupported", explain(hit, COMPILER_MEMORY >> 20,
                                                  COMPILER_FILE_LIMIT >> 20,
                                                  "the host compiler (building the kernel for "
                                                  "the CPU backend)"))
    return result


def run_tool(command: list[str],
             readable: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Another binutils-like tool (addr2line) over a built library, sandboxed and capped like
    the compiler."""
    return _run(command, readable=readable)


def _build(command: list[str], target: Path, stdin: str | None = None) -> str:
    """Compile into a private folder, then move the library into place atomically. Returns the
    compiler's messages when it failed, else an empty string."""
    with tempfile.TemporaryDirectory(prefix="ks-cpu-") as folder:
        output = Path(folder) / "out.so"
        result = _run([*command, "-o", str(output)], stdin, writable=(Path(folder),))
        if result.returncode != 0 or not output.exists():
            return result.stderr or f"the host compiler exited with {result.returncode}"
        try:  # never through a link the sandboxed compiler could have left (docs/isolation.md)
            with sandbox.open_shared(output) as handle:
                library = handle.read()
        except OSError as error:
            return f"the host compiler left no plain library file ({error})"
        atomic_write_bytes(target, library)
        sealed.seal(target)
    return ""


def runtime_flags() -> list[str]:
    """Flags for the runtime. KERNEL_STUDIO_CPU_UCONTEXT=1 selects the portable ucontext
    context switch (used on every CPU but x86-64) so that it can be tested on x86-64 too."""
    flags = list(RUNTIME_FLAGS)
    if settings.text(settings.CPU_UCONTEXT) == "1":
        flags.append("-DKS_USE_UCONTEXT")
    return flags


def runtime_library(toolchain: Toolchain) -> Path:
    """The emulation runtime, built once per compiler, emulation version and flags."""
    flags = runtime_flags()
    key = _key(toolchain.version, native_digest(), " ".join(flags))
    target = cache_folder() / f"runtime-{key}.so"
    if sealed.intact(target):  # a library that is missing, unsealed or changed is rebuilt
        return target
    sources = [str(NATIVE / "runtime" / name) for name in RUNTIME_SOURCES]
    problem = _build([toolchain.path, *flags, *sources, "-ldl"], target)
    if problem:
        raise BackendError("unsupported", "the CPU backend's runtime did not build with "
                           f"{toolchain.version}: {_first_errors(problem)}")
    return target


# Options that change what float arithmetic computes on the GPU (approximate division, square
# root and math functions, denormals flushed), by name and the values that do it: the CPU
# build computes IEEE results, so a kernel built with one is refused rather than verified.
FLOAT_SEMANTICS = {"use_fast_math": None, "ftz": "true", "prec-div": "false",
                   "prec-sqrt": "false"}


def refuse_float_options(options: list[str]) -> None:
    """Raise "unsupported" naming the first option that changes the GPU's float results."""
    for option in options:
        name, _, value = option.lstrip("-").partition("=")
        if name in FLOAT_SEMANTICS and FLOAT_SEMANTICS[name] in (None, value.lower()):
            raise BackendError("unsupported", f"not supported by the CPU backend: the compiler "
                               f"option {option} (on the GPU it changes float results: "
                               f"approximate division, square root and math functions or "
                               f"denormals flushed to zero; the CPU build computes IEEE "
                               f"results, so it cannot tell what the GPU gives)")


def host_options(options: list[str], source_dir: str | None) -> list[str]:
    """The spec's compiler options that mean something to the host compiler: macros, include
    folders (checked and made absolute by the compile step's allowlist) and C++20. Options that
    change float results are refused (refuse_float_options); the rest (-O3, -lineinfo,
    --fmad, ...) tune GPU code generation and are ignored."""
    if not options:
        return []
    try:
        normalized = check_options(options, Path(source_dir) if source_dir else None)
    except OptionError as error:
        raise BackendError("load", f"compiler option refused: {error}") from None
    refuse_float_options(normalized)
    return [option for option in normalized
            if option.startswith(("-D", "-U", "-I")) or option == "-std=c++20"]


def preprocess(toolchain: Toolchain, wrapper: str, source_dir: str | None,
               flags: list[str]) -> tuple[str, str]:
    """The preprocessed wrapper (and, on failure, the compiler's messages)."""
    includes = [f"-I{STUB_INCLUDES}", f"-I{NATIVE}"]
    if source_dir:
        includes.insert(0, f"-iquote{source_dir}")
    result = _run([toolchain.path, *COMMON_FLAGS, *flags, *includes, "-E", "-x", "c++", "-"],
                  wrapper, readable=(Path(source_dir),) if source_dir else ())
    return (result.stdout, "") if result.returncode == 0 else ("", result.stderr)


def kernel_library(toolchain: Toolchain, preprocessed: str, flags: list[str]) -> tuple[Path, str]:
    """The kernel's library from its preprocessed source: (path, compiler messages on
    failure). A cached library is used when one exists."""
    key = _key(toolchain.version, native_digest(), " ".join(KERNEL_FLAGS), " ".join(flags),
               preprocessed)
    target = cache_folder() / f"kernel-{key}.so"
    if sealed.intact(target):  # a library that is missing, unsealed or changed is rebuilt
        return target, ""
    command = [toolchain.path, *KERNEL_FLAGS, *flags, "-x", "c++-cpp-output", "-"]
    return target, _build(command, target, preprocessed)


_ERROR_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*"
                         r"(?P<message>.*)$", re.M)
_MISSING = (
    re.compile(r"'([\w:~<>]+)' was not declared in this scope"),
    re.compile(r"'([\w:~<>]+)' is not a member of"),
    re.compile(r"'([\w:~<>]+)' has not been declared"),
    re.compile(r"'([\w:~<>]+)' does not name a type"),
    re.compile(r"no matching function for call to '([\w:~<>]+)\("),
    re.compile(r"there are no arguments to '([\w:~<>]+)' that depend on a template parameter"),
    re.compile(r"^(\S+): No such file or directory"),
)


def _first_errors(messages: str, count: int = 2) -> str:
    """The first error lines of a compiler's output, one line each."""
    errors = [m.group(0).strip() for m in _ERROR_LINE.finditer(messages)][:count]
    return "; ".join(errors) or " ".join(messages.split())[:400]


def explain_failure(messages: str, entry: str) -> BackendError:
    """What a host compiler failure means. The kernel already compiled for the GPU, so a
    failure here is the emulation's gap: "unsupported", naming the construct when the message
    says which. A failure inside the generated launcher means the entry cannot be called."""
    first = _ERROR_LINE.search(messages)
    if first is None:
        return BackendError("unsupported", "not supported by the CPU backend: the host compiler "
                            f"rejected this kernel ({_first_errors(messages)})")
    where = f"{first.group('file')}:{first.group('line')}"
    message = first.group("message").strip()
    if "not supported by the CPU backend:" in message:  # a stub header's #error
        return BackendError("unsupported", message.split("#error", 1)[-1].strip(' "'))
    if first.group("file") == LAUNCHER_FILE:
        return BackendError("load", f"the CPU backend cannot call the entry {entry!r} "
                            f"(it must name one __global__ function, not an overload set or an "
                            f"uninstantiated template): {message}")
    for pattern in _MISSING:
        named = pattern.search(message)
        if named:
            return BackendError("unsupported", f"not supported by the CPU backend: "
                                f"{named.group(1)} ({where}: {message})")
    return BackendError("unsupported", f"not supported by the CPU backend: the host compiler "
                        f"rejected this kernel ({where}: {message})")
