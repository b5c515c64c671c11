"""Compiler options from an allowlist. Options may come from a model or a stranger's spec, so
anything that runs host tools, writes files, reads headers from elsewhere or changes what the
compiler produces is refused with a message that names the option and says why."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from app.compile.model import OptionError

ARCH = re.compile(r"^sm_(\d{2,3})([af]?)$")
DEFAULT_ARCH = "sm_90"

# Flags without a value, every spelling mapped to the one passed to the compiler.
FLAGS = {
    "-G": "-G", "--device-debug": "-G",
    "-lineinfo": "-lineinfo", "--generate-line-info": "-lineinfo",
    "-use_fast_math": "--use_fast_math", "--use_fast_math": "--use_fast_math",
    "-w": "-w", "--disable-warnings": "-w",
    "-restrict": "--restrict", "--restrict": "--restrict",
    "-extra-device-vectorization": "--extra-device-vectorization",
    "--extra-device-vectorization": "--extra-device-vectorization",
    "--display-error-number": "--display-error-number",
    "--no-display-error-number": "--no-display-error-number",
    "-Werror=all-warnings": "-Werror=all-warnings",
    "--Werror=all-warnings": "-Werror=all-warnings",
    # Language switches that public kernels rely on (PyTorch's extension builds pass both).
    "-expt-relaxed-constexpr": "--expt-relaxed-constexpr",
    "--expt-relaxed-constexpr": "--expt-relaxed-constexpr",
    "-extended-lambda": "--extended-lambda", "--extended-lambda": "--extended-lambda",
    "--expt-extended-lambda": "--extended-lambda",
}
# Options with a value: name -> (spelling passed on, pattern the value must match).
VALUED = {
    "ftz": ("--ftz", r"true|false"),
    "prec-div": ("--prec-div", r"true|false"),
    "prec-sqrt": ("--prec-sqrt", r"true|false"),
    "fmad": ("--fmad", r"true|false"),
    "maxrregcount": ("--maxrregcount", r"\d{1,3}"),
    "std": ("-std", r"c\+\+(11|14|17|20)"),
    "diag-suppress": ("--diag-suppress", r"\d{1,5}(,\d{1,5})*"),
    "diag-error": ("--diag-error", r"\d{1,5}(,\d{1,5})*"),
    "diag-warn": ("--diag-warn", r"\d{1,5}(,\d{1,5})*"),
}
PTXAS_ALLOWED = re.compile(
    r"^(-v|--verbose|-O[0-3]|--warn-on-spills|-warn-spills|--warn-on-local-memory-usage"
    r"|-warn-lmem-usage|--warn-on-double-precision-use|-warn-double-usage"
    r"|--allow-expensive-optimizations=(true|false))$")
MACRO_NAME = re.compile(r"^[A-Za-z_]\w*$", re.ASCII)
# A -D value is one token: an identifier, or a number as C writes it (1, -2, 0x1F, 1.5e-3f, 256u).
# nvcc hands every -D to its preprocessor through a shell, inside double quotes, so anything
# else ($, `, ", \, spaces, parentheses) could run commands; a compile never needs it.
MACRO_VALUE = re.compile(r"^(|[A-Za-z_]\w*|[-+]?(\d|\.\d)[\w.]*([eEpP][-+]\d+[\w.]*)?)$",
                         re.ASCII)

_WRITES = "it writes files outside Kernel Studio's control"
_HOST = "it runs or configures host tools, which a kernel never needs"
_OUTPUT = "it changes what the compiler produces; Kernel Studio needs one loadable cubin"
_ARCH = "choose the architecture with --arch (the `arch` argument), not as an option"
_HEADERS = ("it reads headers from outside the kernel's folder; #include the header from "
            "the kernel's folder instead")
REFUSED = {
    **dict.fromkeys(("arch", "gpu-architecture", "code", "gpu-code", "gencode",
                     "generate-code"), _ARCH),
    **dict.fromkeys(("o", "output-file", "odir", "output-directory", "keep", "keep-dir",
                     "save-temps", "M", "MD", "MM", "MMD", "MF", "MT", "MP", "time",
                     "fdevice-time-trace", "dependency-output", "generate-dependencies",
                     "optf", "options-file", "objdir-as-tempdir"), _WRITES),
    **dict.fromkeys(("ccbin", "compiler-bindir", "Xcompiler", "compiler-options", "Xlinker",
                     "linker-options", "Xnvlink", "nvlink-options", "Xarchive",
                     "archive-options", "l", "L", "library", "library-path", "run",
                     "run-args", "ldir", "libdevice-directory", "allow-unsupported-compiler",
                     "Xfatbin", "fatbin-options", "cudart", "cudadevrt"), _HOST),
    **dict.fromkeys(("include", "pre-include", "isystem", "system-include", "idirafter",
                     "iquote"), _HEADERS),
    **dict.fromkeys(("rdc", "relocatable-device-code", "dc", "device-c", "dw", "device-w",
                     "dlto", "dlink-time-opt", "lto", "fdevice-syntax-only", "optix-ir",
                     "gen-opt-lto", "ptx", "cubin", "fatbin", "E", "preprocess", "c",
                     "compile", "link", "lib", "dlink", "device-link", "x", "language"),
                    _OUTPUT),
}
_SPLIT = re.compile(r"^(--?)([A-Za-z][\w+-]*)(?:=(.*))?$", re.DOTALL)


def check_arch(arch: str) -> str:
    """`arch` when it names a real architecture (sm_90, sm_90a, sm_100f), else OptionError."""
    if not ARCH.match(arch):
        hint = (f"use sm_{arch.split('_', 1)[1]}" if arch.startswith("compute_")
                else "write it as sm_<major><minor>, e.g. sm_90")
        raise OptionError(arch, f"not a real GPU architecture; Kernel Studio needs one to "
                                f"produce a cubin: {hint}")
    return arch


def check_options(options: Sequence[str], folder: Path | None) -> list[str]:
    """The options as they go to the compiler, or OptionError naming the first refused one.

    `folder` is the kernel's folder: -I paths must stay inside it.
    """
    normalized: list[str] = []
    for option in options:
        for item in _check_one(option, folder):
            if item not in normalized:
                normalized.append(item)
    return normalized


def _check_one(option: str, folder: Path | None) -> list[str]:
    """The compiler arguments for one allowed option."""
    if not isinstance(option, str) or not option or option != option.strip():
        raise OptionError(str(option), "options are single words without spaces around them")
    if option in FLAGS:
        return [FLAGS[option]]
    short = _short_form(option, folder)
    if short is not None:
        return short
    match = _SPLIT.match(option)
    if not match:
        raise OptionError(option, _unknown_reason(option))
    _dashes, name, value = match.groups()
    if name in REFUSED:
        raise OptionError(option, REFUSED[name])
    if name in VALUED:
        return [_valued(option, name, value)]
    if name in ("Xptxas", "ptxas-options"):
        return _ptxas(option, value)
    if name in ("define-macro", "undefine-macro", "include-path"):
        letter = {"define-macro": "-D", "undefine-macro": "-U", "include-path": "-I"}[name]
        return _short_form(letter + (value or ""), folder) or []
    raise OptionError(option, _unknown_reason(option))


def _unknown_reason(option: str) -> str:
    """Why an option outside the allowlist is refused, naming the danger when it is known
    (glued forms such as -o/tmp/x or -L/usr/lib included)."""
    if not option.startswith("-"):
        return "not a compiler option (options start with - or --)"
    word = re.match(r"^--?([A-Za-z][\w+-]*)", option)
    name = word.group(1) if word else ""
    for candidate in (name, name[:1]):
        if candidate and candidate in REFUSED:
            return REFUSED[candidate]
    return ("it is not in Kernel Studio's allowlist of compiler options "
            "(see `kernel-studio compile --help`)")


def _short_form(option: str, folder: Path | None) -> list[str] | None:
    """-D, -U, -I and -O options (value glued to the letter); None for anything else."""
    letter, value = option[:2], option[2:]
    if letter in ("-D", "-U"):
        return [_macro(option, letter, value)]
    if letter == "-I":
        return ["-I" + str(include_dir(option, value, folder))]
    if re.fullmatch(r"-O[0-3]", option):
        return [f"-Xptxas={option}"]  # NVRTC has no -O; the device optimisation level is ptxas'
    return None


def _macro(option: str, letter: str, value: str) -> str:
    """-DNAME, -DNAME=VALUE or -UNAME after checking the name and the value."""
    name, has_value, macro_value = value.partition("=")
    if not MACRO_NAME.match(name) or (letter == "-U" and has_value):
        raise OptionError(option, f"write {letter}NAME" + ("=VALUE" if letter == "-D" else "")
                          + " in one argument, NAME a C identifier")
    if has_value and not MACRO_VALUE.match(macro_value):
        raise OptionError(option, "a macro's value must be one identifier or number "
                                  "(-DN=256, -DSCALE=0.5f, -DMODE=fast): other characters "
                                  "($, quotes, spaces, parentheses) are refused because nvcc "
                                  "passes -D values through a shell. Put longer definitions "
                                  "in a header in the kernel's folder")
    return option


def include_dir(option: str, value: str, folder: Path | None) -> Path:
    """The absolute folder an -I option names, refused unless it lies inside `folder`."""
    if not value:
        raise OptionError(option, "write -I<folder> in one argument")
    if folder is None:
        raise OptionError(option, "there is no kernel folder for include paths to be inside")
    candidate = Path(value)
    if candidate.is_absolute():
        raise OptionError(option, "include paths are relative to the kernel's folder; "
                                  "absolute paths are refused")
    base = folder.resolve()
    resolved = (base / candidate).resolve()
    if resolved != base and base not in resolved.parents:
        raise OptionError(option, "it leads outside the kernel's folder")
    return resolved


def _valued(option: str, name: str, value: str | None) -> str:
    """`--name=value` after checking the value."""
    spelling, pattern = VALUED[name]
    if value is None or not re.fullmatch(pattern, value):
        raise OptionError(option, f"{spelling} needs a value matching {pattern!r} "
                                  f"in the same argument, e.g. {spelling}=...")
    if name == "maxrregcount" and not 16 <= int(value) <= 255:
        raise OptionError(option, "--maxrregcount must be between 16 and 255")
    return f"{spelling}={value}"


def _ptxas(option: str, value: str | None) -> list[str]:
    """-Xptxas=<opt>[,<opt>...], each from the ptxas allowlist."""
    if not value:
        raise OptionError(option, "write -Xptxas=<option> in one argument")
    parts = value.split(",")
    for part in parts:
        if not PTXAS_ALLOWED.match(part):
            raise OptionError(option, f"the ptxas option {part!r} is not allowed "
                                      "(allowed: -v, -O0..-O3, --warn-on-spills, "
                                      "--warn-on-local-memory-usage, "
                                      "--warn-on-double-precision-use)")
    return [f"-Xptxas={part}" for part in parts]


ALLOWED_HELP = (
    "allowed options: -O0..-O3 (device), -G, -lineinfo, --use_fast_math, --ftz=, "
    "--prec-div=, --prec-sqrt=, --fmad= (true|false), --maxrregcount=N, -std=c++11|14|17|20, "
    "-DNAME[=VALUE], -UNAME, -I<folder inside the kernel's folder>, -w, --restrict, "
    "--extra-device-vectorization, --diag-suppress=N, --diag-error=N, --diag-warn=N, "
    "-Werror=all-warnings, --display-error-number, --expt-relaxed-constexpr, --extended-lambda, "
    "-Xptxas=<-v|-O0..3|--warn-on-spills|...>")
