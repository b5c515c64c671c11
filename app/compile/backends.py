"""The two compilers, as run inside the compile child process: NVRTC in-process through
cuda-python, and nvcc as a program. Each takes one request and returns one reply dict:
status ("ok", "compile", "options", "memory", "backend"), cubin (base64), ptx, log, compiler,
message."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from app.base import system
from app.compile import elf, entries, limits

# Line info maps SASS to source lines; ptxas' verbose report gives the resources.
ALWAYS = ["-lineinfo", "-Xptxas=-v"]
# Our small C and C++ library headers for NVRTC (see its README): searched last, and the prelude
# pre-included, so that device code nvcc accepts (INFINITY, <cfloat>, std::min) compiles here.
NVRTC_HEADERS = Path(__file__).resolve().parent / "nvrtc_include"
NVRTC_PRELUDE = NVRTC_HEADERS / "kernel_studio_prelude.h"
NVRTC_DRIVER_HEADERS = NVRTC_HEADERS / "driver"
# nvcc's switches for what host code may call; NVRTC has no host code, and no such options.
NVCC_ONLY = ("--expt-relaxed-constexpr", "--extended-lambda")
# CCCL's <cuda/std/cmath> (CUB includes it) defines INFINITY and NAN its own way after our
# prelude did: the same float, so the warning says nothing about the user's code.
_OWN_REDEFINITION = re.compile(r'^.*: warning #47-D: incompatible redefinition of macro "\w+" '
                               r'\(declared at line \d+ of ' + re.escape(str(NVRTC_HEADERS)) + "/")
_REMARK = "Remark: The warnings can be suppressed"
# nvcc runs cicc, ptxas and the rest through `sh -c` with each argument in double quotes, where
# these characters still act (seen: -DX=$(touch F) and a file named n$(touch F).cu ran touch).
_SHELL_ACTIVE = re.compile(r'[$`"\\\n\r\0]')
NVCC_SOURCE = "kernel_studio_source.cu"
# A file name the compilers misread: a leading `-` is taken for an option (NVRTC passes the
# program name on its own command line), a quote or backslash ends up in the PTX `.file`
# directive and ptxas rejects it, and control characters break both.
_UNSAFE_NAME = re.compile(r'^-|["\\\x00-\x1f\x7f]')
# The name the compilers see instead of such a name; the log is mapped back to the user's.
SAFE_NAME = "kernel_studio_main.cu"
UNSAFE_TEMP = ("the temporary folder's path holds characters a shell would act on, and nvcc "
               "runs its tools through a shell: set TMPDIR to a plain path such as /tmp")


def make_reply(status: str, **fields: Any) -> dict[str, Any]:
    """A reply with every field present."""
    base: dict[str, Any] = {"status": status, "cubin": None, "ptx": None, "log": "",
                            "compiler": "", "message": "", "source_path": "", "lowered": {},
                            "demangled": {}}
    return {**base, **fields}


def _out_of_memory(log: str) -> bool:
    """Whether the compiler said it ran out of memory."""
    return "out of memory" in log.lower() or "std::bad_alloc" in log


# -- NVRTC ----------------------------------------------------------------------------------


def nvrtc_hello() -> dict[str, Any]:
    """NVRTC's version and architectures, or why it cannot load."""
    try:
        from cuda.bindings import nvrtc
        _, major, minor = nvrtc.nvrtcVersion()
        _, archs = nvrtc.nvrtcGetSupportedArchs()
    except Exception as error:  # noqa: BLE001 - a missing or broken library is reported, not raised
        return {"nvrtc": None, "nvrtc_error": f"{type(error).__name__}: {error}"}
    return {"nvrtc": f"{major}.{minor}", "archs": [int(a) for a in archs]}


def _nvrtc_bytes(getter_size: Any, getter: Any, program: Any) -> bytes:
    """A buffer NVRTC fills in two calls (size, then data), exactly as filled."""
    _, size = getter_size(program)
    buffer = b" " * int(size)
    getter(program, buffer)
    return buffer


def _nvrtc_text(getter_size: Any, getter: Any, program: Any) -> str:
    """A NUL-terminated text NVRTC fills (the log, the PTX)."""
    data = _nvrtc_bytes(getter_size, getter, program)
    return data.split(b"\0", 1)[0].decode("utf-8", "replace")


def nvrtc_compile(request: dict[str, Any], hello: dict[str, Any]) -> dict[str, Any]:
    """Compile with NVRTC; the working directory is the kernel's folder, so the main file's
    quoted includes and the line information name it."""
    from cuda.bindings import nvrtc

    compiler = f"NVRTC {hello['nvrtc']}"
    arch = request["arch"]
    number = int(arch[3:].rstrip("af"))
    if number not in hello["archs"]:
        supported = ", ".join(f"sm_{a}" for a in hello["archs"])
        return make_reply("options", compiler=compiler,
                      message=f"{arch} is not supported by {compiler}; supported: {supported}")
    options = _nvrtc_options(request)
    os.chdir(request["cwd"])
    name = compiler_name(request["program_name"])
    err, program = nvrtc.nvrtcCreateProgram(request["source"].encode(), name.encode(), 0, [], [])
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return make_reply("backend", compiler=compiler, message=f"nvrtcCreateProgram: {err.name}")
    try:
        wanted = [str(e) for e in request.get("entries", [])]
        for entry in wanted:  # each must be added before the compile, lowered after it
            err, = nvrtc.nvrtcAddNameExpression(program, entry.encode())
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                return make_reply("backend", compiler=compiler,
                                  message=f"nvrtcAddNameExpression({entry!r}): {err.name}")
        reply = _nvrtc_run(nvrtc, program, options, compiler,
                           str(Path(request["cwd"]) / name))
        if reply["status"] == "ok":
            reply["lowered"] = _nvrtc_lowered(nvrtc, program, wanted)
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return users_names(reply, name, request["program_name"])


def compiler_name(name: str) -> str:
    """The name the compilers get for the user's file: the name itself when they read it as
    a file name, else SAFE_NAME."""
    return SAFE_NAME if _UNSAFE_NAME.search(name) else name


def users_names(reply: dict[str, Any], used: str, name: str) -> dict[str, Any]:
    """The reply with the compiler's name for the file (`used`) turned back into the user's
    in the log and message, so diagnostics name the file the user has. source_path keeps
    the compiler's name: the cubin's line table holds that one."""
    if used == name:
        return reply
    for key in ("log", "message"):
        if isinstance(reply.get(key), str):
            reply[key] = reply[key].replace(used, name)
    return reply


def _nvrtc_options(request: dict[str, Any]) -> list[str]:
    """NVRTC's arguments: the kernel's folder and the user's -I folders first (their headers
    win), our cuda.h, the CUDA headers, then our C/C++ library headers and the prelude."""
    user = [o for o in request["options"] if o not in NVCC_ONLY]
    folder = [f"-I{request['folder']}"] if request.get("folder") else []
    cuda = [f"-I{d}" for d in request.get("cuda_include_dirs", [])]
    return [f"-arch={request['arch']}", *ALWAYS, *folder, *user, f"-I{NVRTC_DRIVER_HEADERS}",
            *cuda, f"-I{NVRTC_HEADERS}", f"--pre-include={NVRTC_PRELUDE}"]


def _nvrtc_lowered(nvrtc: Any, program: Any, wanted: list[str]) -> dict[str, str]:
    """The lowered (mangled) name of each name expression, after a successful compile."""
    lowered = {}
    for entry in wanted:
        err, name = nvrtc.nvrtcGetLoweredName(program, entry.encode())
        if err == nvrtc.nvrtcResult.NVRTC_SUCCESS and name:
            lowered[entry] = name.decode() if isinstance(name, bytes) else str(name)
    return lowered


def drop_own_redefinitions(log: str) -> str:
    """`log` without the warnings about CUDA headers redefining a macro of our prelude (and the
    remark that follows a first warning, when no other warning is left)."""
    if "#47-D" not in log:
        return log
    blocks = [b for b in log.split("\n\n") if not _OWN_REDEFINITION.match(b)]
    if not any("warning" in b for b in blocks if not b.startswith(_REMARK)):
        blocks = [b for b in blocks if not b.startswith(_REMARK)]
    return "\n\n".join(blocks)


def _nvrtc_run(nvrtc: Any, program: Any, options: list[str], compiler: str,
               source_path: str) -> dict[str, Any]:
    """nvrtcCompileProgram and the outputs it left."""
    err, = nvrtc.nvrtcCompileProgram(program, len(options), [o.encode() for o in options])
    log = drop_own_redefinitions(
        _nvrtc_text(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, program))
    result = nvrtc.nvrtcResult
    common = {"compiler": compiler, "log": log, "source_path": source_path}
    if err == result.NVRTC_ERROR_OUT_OF_MEMORY or (err != result.NVRTC_SUCCESS
                                                    and _out_of_memory(log)):
        return make_reply("memory", **common)
    if err == result.NVRTC_ERROR_INVALID_OPTION:
        return make_reply("options", message=log.strip() or "NVRTC refused an option", **common)
    if err == result.NVRTC_ERROR_COMPILATION:
        return make_reply("compile", **common)
    if err != result.NVRTC_SUCCESS:
        return make_reply("backend", message=f"nvrtcCompileProgram: {err.name}", **common)
    cubin = _nvrtc_bytes(nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN, program)
    ptx = _nvrtc_text(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, program)
    return make_reply("ok", cubin=base64.b64encode(cubin).decode(), ptx=ptx, **common)


# -- nvcc -----------------------------------------------------------------------------------


def nvcc_compile(request: dict[str, Any]) -> dict[str, Any]:
    """Compile with nvcc in a private folder that holds the source (under a fixed, harmless
    name, after a `#line 1` directive naming the user's file, so every line number and file
    name nvcc reports is the user's own) and copies of the local headers the scan allowed.
    nvcc runs its tools through a shell, so no argument may hold what a shell interprets."""
    nvcc = system.find_tool("nvcc")
    if nvcc is None:
        return make_reply("backend", message="nvcc is not installed here: use the nvrtc backend")
    compiler = f"nvcc {system.nvcc_version() or '?'}"
    base = _safe_temp_base()
    if base is None:
        return make_reply("backend", compiler=compiler, message=UNSAFE_TEMP)
    with tempfile.TemporaryDirectory(prefix="kernel-studio-nvcc-", dir=base) as work:
        problem = _write_inputs(Path(work), request)
        command = [nvcc, "-cubin", f"-arch={request['arch']}", *ALWAYS, f"-I{work}",
                   *[f"-I{d}" for d in request.get("cuda_include_dirs", [])],
                   *_nvcc_options(request, work), "--keep", "--keep-dir", work,
                   "-o", str(Path(work) / "out.cubin"), str(Path(work) / NVCC_SOURCE)]
        problem = problem or _shell_active(command)
        if problem:
            return make_reply("options", compiler=compiler, message=problem)
        name = compiler_name(request["program_name"])
        reply = _nvcc_run(command, Path(work), name, compiler, float(request["timeout"]))
        if reply["status"] == "ok" and request.get("entries"):
            reply["demangled"] = _demangled_kernels(reply["cubin"])
        return users_names(reply, name, request["program_name"])


def _demangled_kernels(cubin: str) -> dict[str, str]:
    """The cubin's kernel names, demangled (here, in the sandboxed child: a demangler reads
    names the user's code chose); empty when the cubin or the demangler cannot be read."""
    try:
        names = elf.read_cubin(base64.b64decode(cubin)).kernels
    except elf.CubinError:
        return {}
    return entries.demangle(names)


def _safe_temp_base() -> str | None:
    """The temporary folder, when its path holds nothing a shell interprets (else /tmp)."""
    for candidate in (tempfile.gettempdir(), "/tmp"):
        if not _SHELL_ACTIVE.search(candidate) and os.path.isdir(candidate):
            return candidate
    return None


def _write_inputs(work: Path, request: dict[str, Any]) -> str | None:
    """Write the source and the header copies into `work`; why not, when a header's name
    would leave it or take the source's place."""
    # nvcc copies the #line name into the PTX, where ptxas cannot take every name.
    name = compiler_name(request["program_name"])
    wanted = [str(e) for e in request.get("entries", [])]
    (work / NVCC_SOURCE).write_text(f'#line 1 "{name}"\n' + request["source"]
                                    + entries.nvcc_instantiations(wanted), encoding="utf-8")
    for relative, data in request.get("headers", {}).items():
        path = Path(relative)
        if path.is_absolute() or ".." in path.parts or relative == NVCC_SOURCE:
            return f"the header {relative!r} cannot be copied for nvcc"
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(base64.b64decode(data))
    return None


def _nvcc_options(request: dict[str, Any], work: str) -> list[str]:
    """The user's options, with -I folders inside the kernel's folder moved to their copies."""
    folder = Path(request["folder"]).resolve() if request.get("folder") else None
    out = []
    for option in request["options"]:
        if option.startswith("-I") and folder is not None:
            inside = Path(option[2:]).resolve()
            if inside == folder or folder in inside.parents:
                option = f"-I{Path(work) / inside.relative_to(folder)}"
        out.append(option)
    return out


def _shell_active(command: list[str]) -> str | None:
    """Why `command` must not run: an argument with a character nvcc's shell would act on."""
    for argument in command:
        if _SHELL_ACTIVE.search(argument):
            return (f"{argument!r} holds a character that nvcc would hand to a shell "
                    "($, `, \", \\ or a line break): it is refused")
    return None


def _nvcc_run(command: list[str], work: Path, name: str, compiler: str,
              timeout: float) -> dict[str, Any]:
    """Run nvcc (its temporary files in `work` too) and collect the cubin and the PTX."""
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True,
                              timeout=timeout, check=False,
                              env={**os.environ, "TMPDIR": str(work)})
    except subprocess.TimeoutExpired:
        return make_reply("timeout", compiler=compiler)
    log = (done.stdout + done.stderr).replace(str(work / NVCC_SOURCE), name)
    # The line table names the user's file in the private folder (the #line directive); SASS
    # listings map it back to the user's name, and headers to their names in the folder.
    common = {"compiler": compiler, "log": log, "source_path": str(work / name)}
    if done.returncode != 0:
        return _nvcc_failed(log, done.returncode, common)
    cubin = (work / "out.cubin").read_bytes()
    ptx_file = (work / NVCC_SOURCE).with_suffix(".ptx")
    ptx = ptx_file.read_text("utf-8", "replace") if ptx_file.is_file() else None
    return make_reply("ok", cubin=base64.b64encode(cubin).decode(), ptx=ptx, **common)


def _nvcc_failed(log: str, returncode: int, common: dict[str, Any]) -> dict[str, Any]:
    """The reply for a failed nvcc: a cap on memory or file size (inherited from this process)
    that stopped one of its tools, or the user's compile errors."""
    hit = limits.limit_hit(log, returncode)
    if hit == "file":
        memory_mb, file_mb = limits.current_mb()
        return make_reply("crash", message=limits.explain("file", memory_mb, file_mb,
                                                          "a step of nvcc"), **common)
    return make_reply("memory" if hit == "memory" else "compile", **common)
