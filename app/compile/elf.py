"""Just enough of a cubin (a 64-bit little-endian ELF file) to list its kernels and read the
facts ptxas does not print: user constant memory and `__launch_bounds__` limits.

The attribute layout (.nv.info records: format byte, attribute byte, then a 16-bit value or a
16-bit size and that many bytes) is the one cuobjdump and nvdisasm decode; tests compare what
this module reads with cuobjdump's own report.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

STO_CUDA_ENTRY = 0x10  # st_other flag that marks a __global__ function
STT_FUNC = 2
EIFMT_SVAL = 0x04  # record carries a 16-bit size and a payload
EIATTR_MAX_THREADS = 0x05  # __launch_bounds__ max threads (x, y, z)
EIATTR_REQNTID = 0x10  # .reqntid: the exact block shape (x, y, z)
EIATTR_REGCOUNT = 0x2F  # in .nv.info: symbol index, registers
EIATTR_FRAME_SIZE = 0x11  # in .nv.info: symbol index, stack frame bytes


class CubinError(ValueError):
    """The bytes are not a cubin this module can read."""


@dataclass(frozen=True)
class Section:
    """One ELF section header."""

    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int


@dataclass
class CubinInfo:
    """What the cubin says about its kernels."""

    kernels: list[str] = field(default_factory=list)
    registers: dict[str, int] = field(default_factory=dict)
    frame_size: dict[str, int] = field(default_factory=dict)
    max_threads: dict[str, int] = field(default_factory=dict)
    user_constant_bytes: int = 0


def _sections(data: bytes) -> list[Section]:
    """Every section header, named."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise CubinError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]
    return [Section(_cstring(data, names_at + r[0]), r[1], r[4], r[5], r[6], r[7]) for r in raw]


def _cstring(data: bytes, start: int) -> str:
    """The NUL-terminated string at `start`."""
    end = data.index(b"\0", start)
    return data[start:end].decode("utf-8", "replace")


def _symbols(data: bytes, sections: list[Section]) -> list[tuple[str, int, int]]:
    """(name, st_info, st_other) of every symbol, in symbol-table order."""
    table = next((s for s in sections if s.name == ".symtab"), None)
    if table is None:
        return []
    strings = sections[table.link].offset
    found = []
    for at in range(table.offset, table.offset + table.size, 24):
        name, info, other = struct.unpack_from("<IBB", data, at)
        found.append((_cstring(data, strings + name), info, other))
    return found


def _records(blob: bytes) -> list[tuple[int, bytes]]:
    """(attribute, payload) of every .nv.info record; non-SVAL payloads are the 16-bit value."""
    records, at = [], 0
    while at + 4 <= len(blob):
        fmt, attr, value = struct.unpack_from("<BBH", blob, at)
        if fmt == EIFMT_SVAL:
            records.append((attr, blob[at + 4:at + 4 + value]))
            at += 4 + value
        else:
            records.append((attr, blob[at + 2:at + 4]))
            at += 4
    return records


def _global_info(info: CubinInfo, blob: bytes, symbols: list[tuple[str, int, int]]) -> None:
    """Registers and frame sizes from the module-wide .nv.info section."""
    for attr, payload in _records(blob):
        if attr not in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) or len(payload) != 8:
            continue
        index, value = struct.unpack("<II", payload)
        if index < len(symbols):
            target = info.registers if attr == EIATTR_REGCOUNT else info.frame_size
            target[symbols[index][0]] = value


def _kernel_info(info: CubinInfo, kernel: str, blob: bytes) -> None:
    """The launch-bounds limit from a kernel's own .nv.info.<kernel> section."""
    for attr, payload in _records(blob):
        if attr in (EIATTR_MAX_THREADS, EIATTR_REQNTID) and len(payload) == 12:
            x, y, z = struct.unpack("<III", payload)
            info.max_threads[kernel] = x * y * z


def read_cubin(data: bytes) -> CubinInfo:
    """Kernels, registers, frame sizes, launch bounds and user constant bytes of a cubin."""
    try:
        sections = _sections(data)
        symbols = _symbols(data, sections)
    except (struct.error, IndexError, ValueError) as error:
        raise CubinError(f"unreadable cubin: {error}") from error
    info = CubinInfo()
    info.kernels = [name for name, st_info, other in symbols
                    if st_info & 0xF == STT_FUNC and other & STO_CUDA_ENTRY]
    for section in sections:
        blob = data[section.offset:section.offset + section.size]
        if section.name == ".nv.info":
            _global_info(info, blob, symbols)
        elif section.name.startswith(".nv.info."):
            _kernel_info(info, section.name[len(".nv.info."):], blob)
        elif _is_user_constant_bank(section.name):
            info.user_constant_bytes += section.size
    return info


def _is_user_constant_bank(name: str) -> bool:
    """`.nv.constantN` without a kernel suffix: module-wide constant memory (`__constant__`);
    `.nv.constant0.<kernel>` holds a kernel's parameters and is not counted."""
    prefix = ".nv.constant"
    return name.startswith(prefix) and name[len(prefix):].isdigit()
