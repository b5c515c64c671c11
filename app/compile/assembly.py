"""PTX and SASS as data for the assembly view: source lines per instruction, instruction mix.

No Qt: the view asks these functions which rows belong to a source line and back.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

CATEGORIES = ("memory", "arithmetic", "control", "other")

_SASS_MEMORY = ("LD", "ST", "ATOM", "RED", "CCTL", "MEMBAR", "ERRBAR", "UTMA", "UBLKCP")
_SASS_CONTROL = ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "BAR",
                 "WARPSYNC", "BPT", "KILL", "YIELD", "SYNCS", "BREAK", "NANOSLEEP", "VOTE")
_SASS_OTHER = ("MOV", "S2R", "S2UR", "CS2R", "NOP", "SHFL", "PRMT", "R2UR", "UMOV", "ULDC",
               "P2R", "R2P", "PLOP3", "DEPBAR", "SEL", "B2R")
_PTX_MEMORY = ("ld", "st", "atom", "red", "cp", "prefetch", "membar", "fence", "tex", "suld",
               "sust", "ldmatrix", "stmatrix", "cvta")
_PTX_CONTROL = ("bra", "ret", "exit", "call", "bar", "barrier", "vote", "trap", "brkpt")
_PTX_OTHER = ("mov", "shfl", "prmt", "selp")
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r"^\s*\.file\s+(\d+)\s+\"([^\"]*)\"")
_PREDICATE = re.compile(r"^@!?\w+\s+")


@dataclass(frozen=True)
class SassRow:
    """One SASS instruction with the source line it came from (0 when unknown)."""

    offset: int
    text: str
    file: str
    line: int


def sass_rows(items: Iterable[dict[str, Any]]) -> list[SassRow]:
    """SassRow values from the JSON a compile job returns."""
    return [SassRow(int(i.get("offset") or 0), str(i.get("text") or ""),
                    str(i.get("file") or ""), int(i.get("line") or 0)) for i in items]


def same_file(listed: str, source: str) -> bool:
    """Whether a file named in debug info is the edited source (no name counts as a match)."""
    return not listed or not source or PurePath(listed).name == PurePath(source).name


def sass_rows_for_line(rows: Sequence[SassRow], line: int, source: str = "") -> list[int]:
    """Indices of rows generated from a source line."""
    return [i for i, row in enumerate(rows) if row.line == line and same_file(row.file, source)]


def ptx_files(ptx: str) -> dict[str, str]:
    """The `.file` table of a PTX module: file number to path (module-level directives, which
    one kernel's PTX cut out of the module does not carry)."""
    return {m.group(1): m.group(2) for m in map(_FILE.match, ptx.splitlines()) if m}


def ptx_source_lines(ptx: str, source: str = "", files: dict[str, str] | None = None) -> list[int]:
    """For each PTX line, the source line of the last `.loc` before it (0 when none); `files`
    is the module's `.file` table when `ptx` is one kernel's part of it."""
    table = {**(files or {}), **ptx_files(ptx)}
    current = 0
    lines = []
    for text in ptx.splitlines():
        if match := _LOC.match(text):
            name = table.get(match.group(1), "")
            current = int(match.group(2)) if same_file(name, source) else 0
        lines.append(current)
    return lines


def opcode(instruction: str) -> str:
    """The opcode of an instruction without predicate or modifiers: '@!P0 LDG.E.64 R2' -> LDG."""
    text = _PREDICATE.sub("", instruction.strip().lstrip("{").strip())
    text = re.sub(r"^/\*[0-9a-fA-F]+\*/\s*", "", text)
    return text.split(" ", 1)[0].split(".", 1)[0].rstrip(";")


def _sass_category(name: str) -> str:
    """Category of a SASS opcode."""
    if name.startswith(_SASS_MEMORY) or name in ("LDGSTS", "LDSM"):
        return "memory"
    if name.startswith(_SASS_CONTROL):
        return "control"
    if name in _SASS_OTHER or not name:
        return "other"
    return "arithmetic"


def _ptx_category(name: str) -> str:
    """Category of a PTX opcode (directives and labels are not instructions)."""
    if name in _PTX_MEMORY:
        return "memory"
    if name in _PTX_CONTROL:
        return "control"
    if name in _PTX_OTHER:
        return "other"
    return "arithmetic"


def sass_mix(rows: Sequence[SassRow]) -> Counter[str]:
    """How many SASS instructions fall in each category."""
    return Counter(_sass_category(opcode(row.text)) for row in rows if row.text.strip())


def _ptx_instruction(text: str) -> str | None:
    """The opcode of a PTX instruction line, or None for directives, labels and braces."""
    stripped = text.strip()
    if not stripped or stripped.startswith((".", "//", "{", "}", ")", "(")) or \
            stripped.endswith(":"):
        return None
    name = opcode(stripped)
    return name if name and name[0].isalpha() else None


def ptx_mix(ptx: str) -> Counter[str]:
    """How many PTX instructions fall in each category."""
    names = (_ptx_instruction(line) for line in ptx.splitlines())
    return Counter(_ptx_category(name) for name in names if name)


def mix_text(mix: Counter[str]) -> str:
    """'memory 12 (20%) · arithmetic 40 (66%) · ...'."""
    total = sum(mix.values())
    if not total:
        return "no instructions"
    return " \u00b7 ".join(f"{name} {mix[name]} ({100 * mix[name] / total:.0f}%)"
                           for name in CATEGORIES if mix[name])
