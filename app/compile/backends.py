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

from app import system

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


def make_reply(status: str, **fields: Any) -> dict[str, Any]:
    """A reply with every field present."""
    base = {"status": status, "cubin": None, "ptx": None, "log": "", "compiler": "",
            "message": "", "source_path": ""}
    return {**base, **fields}


def _out_of_memory(log: str) -> bool:
    """Whether the compiler said it ran out of memory."""
    return "out of memory" in log.lower() or "std::bad_alloc" in log


def _include_flags(request: dict[str, Any]) -> list[str]:
    """-I for the kernel's folder (first: its headers win), then the CUDA headers."""
    flags = [f"-I{request['folder']}"] if request.get("folder") else []
    return flags + [f"-I{d}" for d in request.get("cuda_include_dirs", [])]


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
    name = request["program_name"]
    err, program = nvrtc.nvrtcCreateProgram(request["source"].encode(), name.encode(), 0, [], [])
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return make_reply("backend", compiler=compiler, message=f"nvrtcCreateProgram: {err.name}")
    try:
        return _nvrtc_run(nvrtc, program, options, compiler,
                          str(Path(request["cwd"]) / name))
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _nvrtc_options(request: dict[str, Any]) -> list[str]:
    """NVRTC's arguments: the kernel's folder and the user's -I folders first (their headers
    win), our cuda.h, the CUDA headers, then our C/C++ library headers and the prelude."""
    user = [o for o in request["options"] if o not in NVCC_ONLY]
    folder = [f"-I{request['folder']}"] if request.get("folder") else []
    cuda = [f"-I{d}" for d in request.get("cuda_include_dirs", [])]
    return [f"-arch={request['arch']}", *ALWAYS, *folder, *user, f"-I{NVRTC_DRIVER_HEADERS}",
            *cuda, f"-I{NVRTC_HEADERS}", f"--pre-include={NVRTC_PRELUDE}"]


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
    """Compile with nvcc in a private folder. The source is written there after a `#line 1`
    directive, so every line number and file name nvcc reports is the user's own."""
    nvcc = system.find_tool("nvcc")
    if nvcc is None:
        return make_reply("backend", message="nvcc is not installed here: use the nvrtc backend")
    compiler = f"nvcc {system.nvcc_version() or '?'}"
    name = request["program_name"]
    with tempfile.TemporaryDirectory(prefix="kernel-studio-nvcc-") as work:
        source = Path(work) / name
        quoted = name.replace("\\", "\\\\").replace('"', '\\"')
        source.write_text(f'#line 1 "{quoted}"\n' + request["source"], encoding="utf-8")
        command = [nvcc, "-cubin", f"-arch={request['arch']}", *ALWAYS,
                   *_include_flags(request), *request["options"], "--keep", "--keep-dir", work,
                   "-o", str(Path(work) / "out.cubin"), str(source)]
        return _nvcc_run(command, work, source, compiler, float(request["timeout"]))


def _nvcc_run(command: list[str], work: str, source: Path, compiler: str,
              timeout: float) -> dict[str, Any]:
    """Run nvcc and collect the cubin and the PTX it kept."""
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return make_reply("timeout", compiler=compiler)
    log = (done.stdout + done.stderr).replace(str(source), source.name)
    # The line table names the private copy; SASS listings map it back to the user's name.
    common = {"compiler": compiler, "log": log, "source_path": str(source)}
    if done.returncode != 0:
        return make_reply("memory" if _out_of_memory(log) else "compile", **common)
    cubin = (Path(work) / "out.cubin").read_bytes()
    ptx_file = source.with_suffix(".ptx")
    ptx = ptx_file.read_text("utf-8", "replace") if ptx_file.is_file() else None
    return make_reply("ok", cubin=base64.b64encode(cubin).decode(), ptx=ptx, **common)
