"""Template instantiations as entries (`scale<float, 4>`): which entries need instantiating,
how each compiler is made to instantiate them, and how the kernel each one names is found.

NVRTC does both itself (name expressions: nvrtcAddNameExpression before the compile,
nvrtcGetLoweredName after). nvcc has no such interface: the unit gets one host-side line per
entry that takes the entry's address (which instantiates the kernel for the device too, as a
`<<<>>>` launch would), and the kernel is found by demangling the cubin's kernel names and
comparing them with the entry as written. Nothing here imports the spec or NumPy: the compile
child loads this module.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence

from app.base import system

# The file name nvcc's messages give the lines that instantiate the entries: one line per
# entry, in order, so a message's line number says which entry it is about.
ENTRIES_FILE = "kernel_studio_entries"
# The file name NVRTC's messages give its name expressions (one `#pragma nv_mangled_name`
# line each, from line 2).
NVRTC_NAME_MAP = "__nv_name_map"
DEMANGLE_TIMEOUT = 20.0
# An integer template argument as a demangler writes it (`3u`, `4ul`); users write `3`.
_INTEGER_SUFFIX = re.compile(r"(?<![\w.])(\d+)(?:ull|llu|ul|lu|ll|u|l)\b", re.IGNORECASE)


def is_template(entry: str) -> bool:
    """Whether an entry names a template instantiation rather than a function."""
    return "<" in entry


def template_entries(entries: Iterable[str]) -> list[str]:
    """The distinct template entries among `entries`, stripped, in their first order."""
    return list(dict.fromkeys(e.strip() for e in entries if is_template(e)))


def nvcc_instantiations(entries: Sequence[str]) -> str:
    """What follows the user's source in nvcc's unit: a #line directive, then one line per
    entry taking its address in host code. Host code is not in the cubin, so the module holds
    only the user's kernels, as NVRTC's does."""
    if not entries:
        return ""
    lines = [f"static void* const kernel_studio_entry_{index} = (void*)&{entry};"
             for index, entry in enumerate(entries)]
    return f'\n#line 1 "{ENTRIES_FILE}"\n' + "\n".join(lines) + "\n"


def entry_of_line(entries: Sequence[str], line: int) -> str | None:
    """The entry a message on `line` of ENTRIES_FILE is about."""
    return entries[line - 1] if 0 < line <= len(entries) else None


# -- demangling ----------------------------------------------------------------------------


def demangle(names: Sequence[str]) -> dict[str, str]:
    """Each mangled name's demangled text (a name that is not mangled maps to itself): with
    the toolkit's cu++filt or binutils' c++filt when one is installed, else libstdc++'s
    __cxa_demangle. Empty when none can run."""
    mangled = [n for n in names if n.startswith("_Z")]
    if not mangled:
        return {n: n for n in names}
    found = _with_tool(mangled) or _with_libstdcxx(mangled)
    return {n: found.get(n, n) for n in names} if found else {}


def _with_tool(names: list[str]) -> dict[str, str]:
    """Demangled names from cu++filt or c++filt (one name a line in, one a line out)."""
    tool = system.find_tool("cu++filt") or shutil.which("c++filt")
    if tool is None:
        return {}
    try:
        done = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True,
                              text=True, timeout=DEMANGLE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != len(names):
        return {}
    return dict(zip(names, lines, strict=True))


def _with_libstdcxx(names: list[str]) -> dict[str, str]:
    """Demangled names from libstdc++'s __cxa_demangle (the names it cannot read: absent)."""
    try:
        library = ctypes.CDLL("libstdc++.so.6")
    except OSError:
        return {}
    function = library.__cxa_demangle
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    free = ctypes.CDLL(None).free
    free.argtypes = [ctypes.c_void_p]
    found = {}
    for name in names:
        status = ctypes.c_int()
        pointer = function(name.encode(), None, None, ctypes.byref(status))
        if pointer and status.value == 0:
            found[name] = ctypes.string_at(pointer).decode("utf-8", "replace")
        if pointer:
            free(pointer)
    return found


# -- finding an entry's kernel -------------------------------------------------------------


def function_name(demangled: str) -> str:
    """The function a demangled kernel name names, as a template-id: `scale<float, 4>` of
    `void scale<float, 4>(float*, float const*, float, int)` (a template's name carries its
    return type; a kernel's is void)."""
    text = demangled.strip()
    if text.endswith(")"):
        depth = 0
        for index in range(len(text) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(text[index], 0)
            if depth == 0:
                text = text[:index]
                break
    return text[5:] if text.startswith("void ") else text


def normalized(name: str) -> str:
    """A template-id with no spaces, no leading `::` and no integer suffixes, so that
    `scale<float,4>` and `flags<3, true>` compare equal to a demangler's `scale<float, 4>`
    and `flags<3u, true>`."""
    return _INTEGER_SUFFIX.sub(r"\1", "".join(name.split())).removeprefix("::")


def _template_name(name: str) -> str:
    """The template's qualified name in a template-id (`ns::scale` of `ns::scale<float>`)."""
    return normalized(name).split("<", 1)[0]


def match_entries(entries: Sequence[str], demangled: dict[str, str]) -> dict[str, str]:
    """The kernel symbol of each entry that names one: the kernel whose demangled name is the
    entry as written (spaces and integer suffixes aside); else the only instance of that
    template that no other entry took (an entry may spell a type by an alias, `uint32_t`
    for `unsigned int`). Entries with no such kernel are left out."""
    names = {symbol: normalized(function_name(text)) for symbol, text in demangled.items()}
    exact = {}
    for entry in entries:
        found = [s for s, n in names.items() if n == normalized(entry)]
        if len(found) == 1:
            exact[entry] = found[0]
    lowered = dict(exact)
    taken = set(exact.values())
    for entry in entries:
        if entry in exact:
            continue
        same = [s for s, n in names.items()
                if n.split("<", 1)[0] == _template_name(entry) and s not in taken]
        if len(same) == 1:
            lowered[entry] = same[0]
    return lowered


def instances(entry: str, demangled: dict[str, str]) -> list[str]:
    """The demangled instances of the entry's template among the kernels (for messages)."""
    wanted = _template_name(entry)
    return sorted(function_name(t) for t in demangled.values()
                  if normalized(function_name(t)).split("<", 1)[0] == wanted)
