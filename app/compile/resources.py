"""Per-kernel resources: ptxas' own report (`-Xptxas=-v`, always requested) for registers,
shared memory, stack frame and spills, and the cubin for what ptxas does not print (which
functions are kernels, user constant memory, __launch_bounds__)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.compile.elf import read_cubin
from app.compile.model import KernelResources
from app.compile.occupancy import max_threads_per_block

_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_PROPERTIES = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(r"(?P<frame>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
                    r"(?P<loads>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<registers>\d+) registers")
_BARRIERS = re.compile(r"used (?P<n>\d+) barriers")
_MEMORY = re.compile(r"(?P<n>\d+) bytes (?P<kind>smem|lmem)\b")


@dataclass
class PtxasReport:
    """What ptxas -v said about one function."""

    registers: int | None = None
    barriers: int = 0
    smem: int = 0
    lmem: int = 0
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0


def parse_ptxas(log: str) -> dict[str, PtxasReport]:
    """Reports by function name from ptxas' verbose output (NVRTC's or nvcc's spelling)."""
    reports: dict[str, PtxasReport] = {}
    entry: str | None = None
    described: str | None = None
    for line in log.splitlines():
        if (match := _ENTRY.search(line)):
            entry = match.group("name")
            reports.setdefault(entry, PtxasReport())
        elif (match := _PROPERTIES.search(line)):
            described = match.group("name")
        elif (match := _FRAME.search(line)) and described:
            report = reports.setdefault(described, PtxasReport())
            report.stack_frame = int(match.group("frame"))
            report.spill_stores = int(match.group("stores"))
            report.spill_loads = int(match.group("loads"))
        elif (match := _USED.search(line)) and entry:
            _read_used(reports[entry], line, int(match.group("registers")))
    return reports


def _read_used(report: PtxasReport, text: str, registers: int) -> None:
    """Fill a report from a 'Used N registers, ...' line."""
    report.registers = registers
    if (barriers := _BARRIERS.search(text)):
        report.barriers = int(barriers.group("n"))
    for match in _MEMORY.finditer(text):
        setattr(report, match.group("kind"), int(match.group("n")))


def kernel_resources(cubin: bytes, log: str, arch: str) -> list[KernelResources]:
    """One record per kernel in the cubin, in the cubin's order."""
    info = read_cubin(cubin)
    reports = parse_ptxas(log)
    found = []
    for name in info.kernels:
        report = reports.get(name, PtxasReport())
        registers = report.registers if report.registers is not None else (
            info.registers.get(name, 0))
        frame = report.stack_frame or info.frame_size.get(name, 0)
        found.append(KernelResources(
            name=name, registers=registers, shared_static_bytes=report.smem,
            constant_bytes=info.user_constant_bytes, local_bytes=report.lmem,
            stack_frame_bytes=frame, spill_stores_bytes=report.spill_stores,
            spill_loads_bytes=report.spill_loads,
            max_threads_per_block=max_threads_per_block(registers, info.max_threads.get(name),
                                                        arch),
            barriers=report.barriers))
    return found
