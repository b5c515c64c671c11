"""SASS listings with source lines: nvdisasm (from NVIDIA's pip wheel, or a toolkit) reads the
cubin's line table (-g), so each instruction names the file and line it came from. Without
nvdisasm, cuobjdump gives the instructions without lines. PTX of one kernel is cut from the
module's PTX."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from app.base import system
from app.compile.model import CompileResult, SassLine

_SECTION = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^,\s]+)")
_FILE_LINE = re.compile(r'//## File "(?P<file>[^"]+)", line (?P<line>\d+)')
_INSTRUCTION = re.compile(r"^\s*/\*(?P<offset>[0-9a-fA-F]{4,})\*/\s+(?P<text>.*?)\s*(?:/\*.*)?$")
_LABEL = re.compile(r"^(?P<label>\.L_\w+):\s*$")
_CACHE: OrderedDict[tuple[str, str], str] = OrderedDict()
_CACHE_SIZE = 16


class SassError(RuntimeError):
    """No SASS could be produced (no tool, a failed compile, an unknown kernel)."""


def _wheel_tool(name: str) -> str | None:
    """A CUDA tool shipped in NVIDIA's pip wheels (nvidia/cu13/bin, nvidia/cuda_*/bin)."""
    for entry in sys.path:
        base = Path(entry) / "nvidia"
        if base.is_dir():
            for candidate in sorted(base.glob(f"*/bin/{name}")):
                if os.access(candidate, os.X_OK):
                    return str(candidate)
    return None


@functools.cache
def find_disassembler() -> tuple[str, str] | None:
    """("nvdisasm", path) or ("cuobjdump", path): the wheel's first, then a toolkit's."""
    for name in ("nvdisasm", "cuobjdump"):
        path = _wheel_tool(name) or system.find_tool(name)
        if path:
            return name, path
    return None


def _disassemble(cubin: bytes) -> str:
    """The disassembly of a whole cubin (cached by content: the GUI asks per kernel)."""
    tool = find_disassembler()
    if tool is None:
        raise SassError("neither nvdisasm nor cuobjdump is installed (pip wheels "
                        "nvidia-cuda-nvdisasm, nvidia-cuda-cuobjdump)")
    key = (hashlib.sha256(cubin).hexdigest(), tool[0])
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    with tempfile.TemporaryDirectory(prefix="kernel-studio-sass-") as work:
        image = Path(work) / "kernel.cubin"
        image.write_bytes(cubin)
        command = ([tool[1], "-c", "-g", str(image)] if tool[0] == "nvdisasm"
                   else [tool[1], "-sass", str(image)])
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise SassError(f"{tool[0]} failed: {done.stderr.strip()[:400]}")
    _CACHE[key] = done.stdout
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return done.stdout


def _function_lines(listing: str, symbol: str) -> list[str]:
    """The listing lines of one function's code section."""
    inside, found = False, []
    for line in listing.splitlines():
        section = _SECTION.match(line)
        if section or line.startswith("\t\tFunction : ") or line.startswith("        Function : "):
            name = section.group("name") if section else line.split(":", 1)[1].strip()
            inside = name == symbol
            continue
        if inside:
            found.append(line)
    return found


def parse_listing(lines: list[str], display: Callable[[str], str]) -> list[SassLine]:
    """SassLines from listing lines: instructions with the last file/line comment seen, and
    labels (at the offset of the instruction that follows them)."""
    out: list[SassLine] = []
    pending: list[str] = []
    file: str | None = None
    number: int | None = None
    for line in lines:
        if (where := _FILE_LINE.search(line)):
            file, number = display(where.group("file")), int(where.group("line"))
        elif (label := _LABEL.match(line.strip())):
            pending.append(label.group("label") + ":")
        elif (instruction := _INSTRUCTION.match(line)):
            offset = int(instruction.group("offset"), 16)
            out += [SassLine(offset, text, None, None) for text in pending]
            pending = []
            out.append(SassLine(offset, instruction.group("text"), file, number))
    return out


def _display_names(result: CompileResult) -> Callable[[str], str]:
    """Names in the line table -> names the user knows: the main file as `filename`, headers
    in the kernel's folder relative to it."""
    main = {result.source_path, Path(result.source_path).name} - {""}
    folder = str(Path(result.source_path).parent) if Path(result.source_path).is_absolute() \
        else ""

    def display(name: str) -> str:
        if name in main:
            return result.filename
        if folder and name.startswith(folder + "/"):
            return name[len(folder) + 1:]
        return name
    return display


def sass_listing(result: CompileResult, kernel_symbol: str) -> list[SassLine]:
    """The SASS of one kernel (its lowered name), each instruction with its source line."""
    if not result.ok or not result.cubin:
        raise SassError("there is no cubin: the compile did not succeed")
    if result.kernel(kernel_symbol) is None:
        names = ", ".join(k.name for k in result.kernels) or "none"
        raise SassError(f"no kernel {kernel_symbol!r} in this cubin (kernels: {names})")
    lines = _function_lines(_disassemble(result.cubin), kernel_symbol)
    return parse_listing(lines, _display_names(result))


def ptx_function(result: CompileResult, kernel_symbol: str) -> str | None:
    """The PTX of one kernel (from `.entry` to its closing brace), None when absent."""
    ptx = result.ptx or ""
    match = re.search(rf"\.entry\s+{re.escape(kernel_symbol)}\s*\(", ptx)
    if not match:
        return None
    start = ptx.rfind("\n", 0, match.start()) + 1
    depth, at = 0, ptx.find("{", match.end())
    while 0 <= at < len(ptx):
        depth += {"{": 1, "}": -1}.get(ptx[at], 0)
        if depth == 0:
            return ptx[start:at + 1]
        at += 1
    return ptx[start:]
