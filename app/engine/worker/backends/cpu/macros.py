"""The predefined macros a kernel sees: those NVRTC defines for device code, never the host
compiler's.

A kernel that tests `__CUDACC_VER_MAJOR__` or `__GNUC__` must take the same branch here as on
the GPU. So the CUDA macros (`__CUDA_ARCH__`, `__CUDACC_VER_MAJOR__`, ...) get the values the
installed NVRTC gives them, asked of NVRTC itself; and a macro the host compiler predefines
that NVRTC does not (or defines differently) cannot be hidden from the system headers, so a
kernel that names one is refused, naming it. What was found is kept in the cache folder, so a
worker builds with exactly the flags its parent chose.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import subprocess
from pathlib import Path

from app.base.fsutil import atomic_write_text
from app.engine.worker.backends.cpu.toolchain import COMMON_FLAGS, Toolchain, cache_folder

# The architecture the emulation stands for (describe(): "sm_90 semantics").
ARCH = "sm_90"
# Macros NVRTC defines for device code (or with some options) that the host compiler does not.
CUDA_NAMES = ("__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__", "__CUDA_ARCH_LIST__",
              "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__",
              "__CUDA_API_VER_MAJOR__", "__CUDA_API_VER_MINOR__", "__CUDA_PREC_DIV",
              "__CUDA_FTZ", "__CUDA_PREC_SQRT", "__NVCC_DIAG_PRAGMA_SUPPORT__", "__EDG__",
              "__EDG_VERSION__", "__NVCC__", "__CUDACC_RDC__", "__CUDACC_DEBUG__")
# Defined by the emulation header itself (same meaning as on the GPU).
EMULATED = frozenset({"__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__"})
_DEFINE = re.compile(r"^#define (\w+)(?: (.*))?$", re.M)
# NVRTC's log repeats the pragma's source line after the message; only the message counts.
_REPORT = re.compile(r'#pragma message: "KSMACRO (\w+)=(.*)"$', re.M)


def host_macros(compiler: Toolchain) -> dict[str, str]:
    """Every macro the host compiler predefines with the flags kernels are built with (-O2
    defines __OPTIMIZE__, -fPIC __PIC__), with its value."""
    done = subprocess.run([compiler.path, *COMMON_FLAGS, "-dM", "-E", "-x", "c++", "-"],
                          input="", capture_output=True, text=True, timeout=60, check=False)
    return {m.group(1): (m.group(2) or "").strip() for m in _DEFINE.finditer(done.stdout)}


def nvrtc_macros(names: list[str]) -> dict[str, str] | None:
    """Which of `names` NVRTC defines for device code of ARCH, and their values; None when
    NVRTC cannot be loaded here."""
    lines = ["#define KS_STR(x) #x", "#define KS_VAL(x) KS_STR(x)"]
    for name in names:
        lines += [f"#ifdef {name}", f'#pragma message("KSMACRO {name}=" KS_VAL({name}))',
                  "#endif"]
    try:
        from cuda.bindings import nvrtc
        _, program = nvrtc.nvrtcCreateProgram("\n".join(lines).encode(), b"probe.cu", 0, [], [])
        options = [f"-arch={ARCH}".encode(), b"-std=c++17"]
        nvrtc.nvrtcCompileProgram(program, len(options), options)
        _, size = nvrtc.nvrtcGetProgramLogSize(program)
        log = b" " * int(size)
        nvrtc.nvrtcGetProgramLog(program, log)
        nvrtc.nvrtcDestroyProgram(program)
    except Exception:  # noqa: BLE001 - no NVRTC here: reported as "unknown", never guessed
        return None
    found = {m.group(1): m.group(2) for m in _REPORT.finditer(log.decode("utf-8", "replace"))}
    return found if "__CUDACC_RTC__" in found else None


def _record_path(compiler: Toolchain) -> Path:
    """Where the macro record for this compiler is kept."""
    key = hashlib.sha256("\0".join([compiler.version, ARCH, *COMMON_FLAGS]).encode())
    return cache_folder() / f"macros-{key.hexdigest()[:16]}.json"


def survey(compiler: Toolchain, write: bool) -> dict[str, dict[str, str]]:
    """{"defines": NAME -> value to pass, "refused": NAME -> why}. The parent (`write`) works
    it out once per process (NVRTC may have been upgraded) and records it; a worker reads the
    record, so that it builds with the flags its parent chose."""
    if write:
        return _surveyed(compiler)
    try:
        data = json.loads(_record_path(compiler).read_text())
        if isinstance(data, dict) and set(data) == {"defines", "refused"}:
            return {k: {str(n): str(v) for n, v in data[k].items()} for k in data}
    except (OSError, ValueError, AttributeError):
        pass
    return _work_out(compiler)


@functools.cache
def _surveyed(compiler: Toolchain) -> dict[str, dict[str, str]]:
    """The survey, worked out and recorded (once per process)."""
    result = _work_out(compiler)
    if result["defines"] or result["refused"]:
        atomic_write_text(_record_path(compiler), json.dumps(result, indent=1, sort_keys=True))
    return result


def _work_out(compiler: Toolchain) -> dict[str, dict[str, str]]:
    """Ask the host compiler and NVRTC which macros each predefines."""
    host = host_macros(compiler)
    device = nvrtc_macros(sorted(set(host) | set(CUDA_NAMES)))
    defines: dict[str, str] = {}
    refused: dict[str, str] = {}
    if device is None:
        for name in CUDA_NAMES:
            if name not in EMULATED:
                refused[name] = "NVRTC cannot be loaded here, so its value is unknown"
    else:
        defines = {n: v for n, v in device.items() if n not in host and n not in EMULATED}
        for name, value in host.items():
            if name not in device:
                refused[name] = "the host compiler defines it, NVRTC does not"
            elif device[name] != value:
                refused[name] = (f"the host compiler defines it as {value}, NVRTC as "
                                 f"{device[name]}")
    return {"defines": defines, "refused": refused}


def defines(survey_result: dict[str, dict[str, str]]) -> str:
    """The #define lines that give the CUDA macros NVRTC's values. They go after the emulation
    header, so that the system headers never see them (some test __EDG__ or __NVCC__)."""
    return "".join(f"#define {n} {v}\n" for n, v in sorted(survey_result["defines"].items()))


def find_refused(text: str, refused: dict[str, str]) -> tuple[str, str, int] | None:
    """(name, why, line) of the first refused macro named in `text` (comments and strings
    already blanked), or None."""
    for match in re.finditer(r"\b[A-Za-z_]\w*\b", text):
        if match.group() in refused:
            line = text.count("\n", 0, match.start()) + 1
            return match.group(), refused[match.group()], line
    return None
