"""compile_source and compile_file: check the input, the options and the includes, look in the
cache, otherwise compile in the child process, and describe the outcome as a CompileResult."""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.base import system
from app.base.fsutil import NotAFile, read_regular
from app.compile import cache, entries, includes, service
from app.compile.backends import NVRTC_HEADERS
from app.compile.diagnostics import LogContext, parse_log
from app.compile.elf import CubinError
from app.compile.model import CompileResult, Diagnostic, OptionError, Severity, failure
from app.compile.options import DEFAULT_ARCH, check_arch, check_options
from app.compile.resources import kernel_resources

MAX_SOURCE_BYTES = 4 * 1024 * 1024
BACKENDS = ("nvrtc", "nvcc")
CACHE_FORMAT = "kernel-studio-compile-1"
CUDA_HEADER_PREFIXES = ("cuda", "cub/", "thrust/", "nv/", "cooperative_groups", "mma.h", "crt/",
                        "vector_types", "vector_functions", "device_", "math_", "sm_")
_MISSING_HEADER = re.compile(r'open source file "([^"]+)"')
_HOST_CODE = "are not allowed in JIT mode"  # host functions, host variables
HOST_CODE_HINT = ("NVRTC compiles device code only and this file has host code: mark device "
                  "helpers __device__, move host code out, or compile with nvcc "
                  "(compiler = \"nvcc\" in the spec's [kernel] table, or --compiler nvcc)")


class Refusal(Exception):
    """Why a compile is not attempted: a stage, a message, and diagnostics to mark."""

    def __init__(self, stage: str, message: str, diagnostics: list[Diagnostic] | None = None):
        """`stage` is one of model.STAGES."""
        super().__init__(message)
        self.stage = stage
        self.message = message
        self.diagnostics = diagnostics or []


@dataclass
class Plan:
    """A checked compile: what goes to the child and the cache key that stands for it."""

    name: str
    filename: str
    source: str
    folder: Path | None
    arch: str
    backend: str
    options: list[str]
    key: str
    request: dict[str, Any] = field(default_factory=dict)
    entries: list[str] = field(default_factory=list)  # the template entries to instantiate


@functools.cache
def default_arch() -> str:
    """The first GPU's architecture, or sm_90 on a machine without one."""
    gpus = system.list_gpus()
    return gpus[0].arch if gpus else DEFAULT_ARCH


@functools.cache
def nvrtc_archs() -> tuple[str, ...]:
    """The architectures this machine's NVRTC builds for, as the compile child reports them
    (asked once); empty when it cannot be asked."""
    try:
        hello = service.SERVICE.hello()
    except (service.ChildFailed, OSError):
        return ()
    return tuple(f"sm_{number}" for number in hello.get("archs", []))


def arch_problem(arch: str) -> str:
    """What is wrong with an architecture for NVRTC here ('' when it builds): a malformed
    name, or one this NVRTC does not support (with the ones it does)."""
    try:
        check_arch(arch)
    except OptionError as error:
        return str(error)
    supported = nvrtc_archs()
    if supported and f"sm_{arch[3:].rstrip('af')}" not in supported:
        return f"{arch} is not supported by this machine's NVRTC; supported: " \
               f"{', '.join(supported)}"
    return ""


def _stamp(path: Path) -> str:
    """A file's identity for the cache: path, size and modification time."""
    info = path.stat()
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


@functools.cache
def compiler_identity(backend: str) -> str:
    """What identifies the compiler in the cache key (a new compiler means new entries)."""
    if backend == "nvcc":
        return f"nvcc {system.find_tool('nvcc')} {system.nvcc_version()}"
    libraries = sorted(p for entry in sys.path if Path(entry, "nvidia").is_dir()
                       for p in Path(entry, "nvidia").glob("*/lib/libnvrtc*.so*"))
    return "nvrtc " + " ".join(_stamp(p) for p in libraries) + " " + _nvrtc_headers_digest()


def _nvrtc_headers_digest() -> str:
    """A hash of our NVRTC compatibility headers: editing one must not reuse old cubins."""
    digest = hashlib.sha256()
    for path in sorted(p for p in NVRTC_HEADERS.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(NVRTC_HEADERS)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def source_problem(source: str, filename: str) -> str | None:
    """Why `source` cannot be compiled at all (empty, binary, too large), or None."""
    if not isinstance(source, str):
        return f"{filename}: the source must be text, not {type(source).__name__}"
    if not source.strip():
        return f"{filename} is empty: there is nothing to compile; write a __global__ function"
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError as error:
        return f"{filename} is not valid Unicode text (at character {error.start})"
    if size > MAX_SOURCE_BYTES:
        return too_large(filename, size)
    if "\0" in source:
        line = source.count("\n", 0, source.index("\0")) + 1
        return (f"{filename} contains a NUL character on line {line}: it looks like a binary "
                "file, not CUDA source")
    return None


def too_large(filename: str, size: int) -> str:
    """The message for a source over the size limit."""
    return (f"{filename} is {size / 2**20:.1f} MiB; kernel sources are limited to "
            f"{MAX_SOURCE_BYTES // 2**20} MiB. Move tables into a data file, or split the file "
            "into headers in the kernel's folder")


def _check_inputs(source: str, filename: str, folder: Path | None, backend: str,
                  timeout: float) -> tuple[str, Path | None]:
    """The program name and the absolute folder, or Refusal."""
    if backend not in BACKENDS:
        raise Refusal("options", f"unknown backend {backend!r}: choose nvrtc or nvcc")
    if backend == "nvcc" and system.find_tool("nvcc") is None:
        raise Refusal("backend", "nvcc is not installed here: compile with the nvrtc backend")
    if not timeout > 0:
        raise Refusal("options", f"the time limit must be positive, not {timeout}")
    name = Path(filename).name
    if not name or name in (".", "..") or any(c in filename for c in "\0\r\n"):
        raise Refusal("input", f"{filename!r} is not a usable file name")
    problem = source_problem(source, filename)
    if problem:
        raise Refusal("input", problem)
    if folder is None:
        return name, None
    absolute = Path(os.path.abspath(folder))
    if not absolute.is_dir():
        raise Refusal("input", f"the kernel's folder {absolute} does not exist")
    return name, absolute


def _checked_options(arch: str, options: Sequence[str], folder: Path | None) -> list[str]:
    """The options as the compiler gets them, or Refusal naming the refused one."""
    if isinstance(options, str):
        raise Refusal("options", "options must be a list of strings, not one string")
    try:
        check_arch(arch)
        return check_options(list(options), folder)
    except OptionError as error:
        raise Refusal("options", str(error)) from error


def _checked_headers(source: str, filename: str, folder: Path | None,
                     options: list[str]) -> list[includes.Header]:
    """The local headers the source may include, or Refusal marking the refused #include."""
    extra = [Path(o[2:]) for o in options if o.startswith("-I")]
    try:
        return includes.scan(source, filename, folder, extra)
    except OptionError as error:
        mark = Diagnostic(error.file or filename, error.line, None, Severity.ERROR,
                          f"{error.option} is refused: {error.reason}", str(error))
        raise Refusal("includes", str(error), [mark]) from error


def _checked_entries(wanted: Sequence[str]) -> list[str]:
    """The template entries to instantiate (plain names need nothing), or Refusal naming one
    that is not a function name or a template instantiation."""
    if isinstance(wanted, str):
        raise Refusal("options", "entries must be a list of names, not one string")
    templates = entries.template_entries(wanted)
    if templates:
        from app.spec.model import entry_problem  # NumPy and the spec: only when needed

        for entry in templates:
            problem = entry_problem(entry)
            if problem:
                raise Refusal("options", f"entry {problem}")
    return templates


def plan(source: str, filename: str, folder: Path | None, arch: str, options: Sequence[str],
         backend: str, timeout: float, wanted: Sequence[str] = ()) -> Plan:
    """Check everything about a compile request and compute its cache key (Refusal if bad).
    `wanted`: the entries the caller will look up; template ones are instantiated."""
    name, folder = _check_inputs(source, filename, folder, backend, timeout)
    normalized = _checked_options(arch, options, folder)
    headers = _checked_headers(source, filename, folder, normalized)
    templates = _checked_entries(wanted)
    parts: list[str | bytes] = [CACHE_FORMAT, backend, compiler_identity(backend), arch,
                                *includes.include_identity(), "\0".join(normalized),
                                str(folder or ""), filename, source, "\0".join(templates)]
    for header in headers:
        parts += [str(header.path), header.data]
    request = {"op": "compile", "backend": backend, "source": source, "program_name": name,
               "cwd": str(folder or service.neutral_folder()), "folder": str(folder or ""),
               "options": normalized, "arch": arch, "timeout": timeout,
               "cuda_include_dirs": [str(d) for d in includes.cuda_include_dirs()],
               "entries": templates}
    if backend == "nvcc" and folder is not None:
        request["headers"] = _header_copies(headers, folder)
    return Plan(name, filename, source, folder, arch, backend, normalized,
                cache.make_key(parts), request, templates)


def _header_copies(headers: list[includes.Header], folder: Path) -> dict[str, str]:
    """The local headers the scan allowed, by path relative to the folder (base64): nvcc gets
    these copies in its private folder, never the user's folder path."""
    return {str(h.path.relative_to(folder)): base64.b64encode(h.data).decode()
            for h in headers}


def compile_source(source: str, *, filename: str, folder: Path | None, arch: str | None = None,
                   options: Sequence[str] = (), backend: str = "nvrtc", timeout: float = 30.0,
                   use_cache: bool = True, memory_mb: int = service.DEFAULT_MEMORY_MB,
                   file_mb: int = service.DEFAULT_FILE_MB,
                   entries: Sequence[str] = ()) -> CompileResult:
    """Compile CUDA `source` for `arch` (default: this machine's GPU, else sm_90) to a cubin and
    PTX with line information; never raises for bad input, bad options or a failed compile:
    the result says what happened (`ok`, `stage`, `message`, `diagnostics`).

    `entries`: the kernels the caller will look up (a spec's entries). A template
    instantiation among them (`scale<float, 4>`) is instantiated, and `result.lowered` (so
    kernel_symbol) gives its symbol: NVRTC's name expressions, or for nvcc a line taking its
    address and the demangled kernel names (app.compile.entries).

    `folder` is the kernel's folder: its headers may be included and -I options must stay in
    it. The compile runs in a child process limited to `timeout` seconds, `memory_mb` MiB of
    memory and files of `file_mb` MiB (nvcc and its tools inherit both caps).
    """
    started = time.perf_counter()
    arch = arch or default_arch()
    try:
        checked = plan(source, filename, folder, arch, options, backend, timeout, entries)
    except Refusal as refusal:
        return failure(refusal.stage, refusal.message, arch=arch, backend=backend,
                       filename=filename, diagnostics=refusal.diagnostics,
                       seconds=time.perf_counter() - started)
    result = cache.load(checked.key) if use_cache else None
    if result is not None:
        result.cached = True
    else:
        reply = service.SERVICE.run(checked.request, timeout, memory_mb, file_mb)
        result = describe(reply, checked, timeout, memory_mb)
        if use_cache and result.stage in (None, "compile"):
            cache.store(checked.key, result)
    result.filename = filename
    result.seconds = time.perf_counter() - started
    return result


def compile_file(path: str | Path, *, folder: Path | None = None, arch: str | None = None,
                 options: Sequence[str] = (), backend: str = "nvrtc", timeout: float = 30.0,
                 use_cache: bool = True, memory_mb: int = service.DEFAULT_MEMORY_MB,
                 file_mb: int = service.DEFAULT_FILE_MB,
                 entries: Sequence[str] = ()) -> CompileResult:
    """compile_source on a file; its folder is the kernel's folder unless `folder` is given;
    `entries` as compile_source's."""
    path = Path(path)
    text = read_source(path)
    if isinstance(text, CompileResult):
        text.arch = arch or default_arch()
        text.backend = backend
        return text
    return compile_source(text, filename=path.name, folder=folder or path.parent, arch=arch,
                          options=options, backend=backend, timeout=timeout,
                          use_cache=use_cache, memory_mb=memory_mb, file_mb=file_mb,
                          entries=entries)


def read_source(path: Path) -> str | CompileResult:
    """The file's text, or a failed result (stage "input") saying why it cannot be read."""
    def refuse(message: str) -> CompileResult:
        return failure("input", message, arch="", backend="", filename=path.name)
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            return refuse(too_large(path.name, size))
        data = read_regular(path, MAX_SOURCE_BYTES)
    except NotAFile as error:
        return refuse(f"{error}; a kernel source is a text file of at most "
                      f"{MAX_SOURCE_BYTES} bytes")
    except OSError as error:
        return refuse(f"cannot read {path}: {error.strerror or error}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return refuse(f"{path.name} is not UTF-8 text: byte 0x{data[error.start]:02x} at line "
                      f"{line}, column {column}. Save the file as UTF-8")


def describe(reply: dict[str, Any], checked: Plan, timeout: float,
             memory_mb: int) -> CompileResult:
    """The CompileResult for the child's reply."""
    log = str(reply.get("log") or "")
    context = LogContext(aliases={checked.name: checked.filename,
                                  str(reply.get("source_path") or checked.name): checked.filename},
                         sources={checked.name: checked.source},
                         folder=str(checked.folder or ""))
    result = CompileResult(ok=False, arch=checked.arch, backend=checked.backend, log=log,
                           diagnostics=parse_log(log, context), filename=checked.filename,
                           compiler=str(reply.get("compiler") or ""),
                           source_path=str(reply.get("source_path") or ""),
                           options=tuple(checked.options))
    _on_entries(result, checked.entries)
    _hint_missing_cuda_headers(result)
    host_code = _hint_host_code(result)
    status = reply.get("status")
    if status == "ok":
        return _lowered(_succeeded(result, reply), reply, checked.entries)
    result.stage = status if status in ("compile", "timeout", "memory", "crash", "options") \
        else "backend"
    result.message = _failure_message(result, reply, timeout, memory_mb)
    if host_code:
        result.message += f". {HOST_CODE_HINT}"
    return result


def _on_entries(result: CompileResult, wanted: list[str]) -> None:
    """Put the compiler's messages about the lines that instantiate the entries (NVRTC's name
    map, nvcc's appended lines) on the user's file, saying which entry they are about."""
    for index, diagnostic in enumerate(result.diagnostics):
        entry = _entry_of(diagnostic, wanted)
        if entry is not None:
            result.diagnostics[index] = Diagnostic(
                result.filename, 0, None, diagnostic.severity,
                f"the entry {entry!r} cannot be instantiated: {diagnostic.message}",
                diagnostic.raw)


def _entry_of(diagnostic: Diagnostic, wanted: list[str]) -> str | None:
    """The entry a message on an instantiating line is about, None for the user's lines."""
    if diagnostic.file == entries.ENTRIES_FILE:
        return entries.entry_of_line(wanted, diagnostic.line) or "?"
    if diagnostic.file != entries.NVRTC_NAME_MAP:
        return None
    found = re.search(r"nv_mangled_name\s+(.+)$", diagnostic.raw, re.M)
    return found.group(1).strip() if found else "?"


def _lowered(result: CompileResult, reply: dict[str, Any], wanted: list[str]) -> CompileResult:
    """Record each template entry's symbol: NVRTC's lowered names, else (nvcc) the kernel its
    demangled name matches; a warning for an entry none matches, naming the instances."""
    if not result.ok or not wanted:
        return result
    lowered = {str(k): str(v) for k, v in dict(reply.get("lowered") or {}).items()}
    demangled = {str(k): str(v) for k, v in dict(reply.get("demangled") or {}).items()}
    if not lowered and demangled:
        lowered = entries.match_entries(wanted, demangled)
    result.lowered = {e: s for e, s in lowered.items() if result.kernel(s) is not None}
    for entry in wanted:
        if entry not in result.lowered:
            result.diagnostics.append(Diagnostic(result.filename, 0, None, Severity.WARNING,
                                                 _unmatched(entry, demangled), ""))
    return result


def _unmatched(entry: str, demangled: dict[str, str]) -> str:
    """Why a template entry has no kernel after a compile that succeeded."""
    if not demangled:
        return (f"the entry {entry!r} was instantiated, but its kernel cannot be told apart: "
                "no demangler could run here (install binutils' c++filt)")
    built = entries.instances(entry, demangled)
    if not built:
        return f"the entry {entry!r} was instantiated, but no kernel of its template is here"
    return (f"the entry {entry!r} matches none of the instances the compiler built, or "
            f"several: write it as one of {', '.join(built)}")


def _hint_host_code(result: CompileResult) -> bool:
    """After NVRTC refused host code (a launcher, main, a helper without __device__), say how to
    build the file anyway; True when it did."""
    if result.backend != "nvrtc":
        return False
    for error in result.errors:
        if _HOST_CODE in error.message:
            result.diagnostics.append(Diagnostic(error.file, error.line, error.column,
                                                 Severity.NOTE, HOST_CODE_HINT, ""))
            return True
    return False


def _hint_missing_cuda_headers(result: CompileResult) -> None:
    """After a failed angle-bracket include on a machine with no CUDA headers, say where they
    come from (NVRTC alone ships none of cuda_fp16.h and friends)."""
    if includes.cuda_include_dirs():
        return
    for error in result.errors:
        missing = _MISSING_HEADER.search(error.message)
        if missing and missing.group(1).startswith(CUDA_HEADER_PREFIXES):
            result.diagnostics.append(Diagnostic(
                error.file, error.line, error.column, Severity.NOTE,
                "no CUDA headers were found on this machine: install the CUDA toolkit (or set "
                "CUDA_HOME), or the nvidia-cuda-runtime and nvidia-cuda-cccl wheels", ""))
            return


def _succeeded(result: CompileResult, reply: dict[str, Any]) -> CompileResult:
    """Fill a successful result: binaries and per-kernel resources."""
    result.cubin = base64.b64decode(reply["cubin"])
    result.ptx = reply.get("ptx")
    try:
        result.kernels = kernel_resources(result.cubin, result.log, result.arch)
    except CubinError as error:
        result.stage, result.message = "backend", f"the compiler's cubin is unreadable: {error}"
        return result
    result.ok = True
    if not result.kernels:
        result.message = (f"{result.filename} compiled, but it has no __global__ function: "
                          "there is no kernel to run or inspect")
        result.diagnostics.append(Diagnostic(result.filename, 0, None, Severity.WARNING,
                                             result.message, ""))
    return result


def _failure_message(result: CompileResult, reply: dict[str, Any], timeout: float,
                     memory_mb: int) -> str:
    """What to tell the user about a compile that produced no code."""
    name = result.filename
    if result.stage == "compile":
        errors = result.errors
        if not errors:
            return f"the compiler failed on {name}; its log says why"
        plural = "s" if len(errors) != 1 else ""
        return f"{len(errors)} error{plural} in {name}; first: {errors[0].format()}"
    if result.stage == "timeout":
        return (f"compiling {name} took longer than the {timeout:g} s limit and was stopped. "
                "A template that instantiates without end, or a very large file, does this: "
                "simplify it, or allow more time (--timeout)")
    if result.stage == "memory":
        return (f"compiling {name} needed more than its {memory_mb} MiB memory cap and was "
                "stopped. A runaway template does this: simplify it, or raise the cap")
    if result.stage == "crash":
        return f"the compiler process ended while compiling {name}: {reply.get('message')}"
    return str(reply.get("message") or "the compiler could not run")
