"""A diff of two SASS listings by instruction (no Qt): the PTX / SASS pane's diff view.

Two builds of one kernel (for two architectures, or two variants of it) differ in addresses and
in which registers the allocator picked even where the code is the same, so instructions are
compared with those normalised away: offsets, register numbers, constant-bank addresses, branch
targets and register-reuse hints. Labels and the NOPs that pad a function's end are not
instructions of the kernel and are left out. The alignment is difflib's.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from app.compile.assembly import SassRow, opcode
from app.compile.listing import instruction_text

SUMMARY = "{added} instruction{plural} added, {removed} removed, {unchanged} unchanged"

_OFFSET = re.compile(r"^\s*/\*[0-9a-fA-F]+\*/\s*")
_TRAILING_COMMENT = re.compile(r"\s*/\*.*?\*/\s*$")
# Numbered registers: general (R), uniform (UR), predicates (P, UP), convergence barriers (B).
# RZ, URZ, PT and UPT carry no number and stay as they are.
_REGISTER = re.compile(r"\b(U?R|U?P|B)\d+\b")
_REUSE = re.compile(r"\.reuse\b")
_CONSTANT = re.compile(r"\bc\[0x[0-9a-fA-F]+\]\[0x[0-9a-fA-F]+\]")
_LABEL_REF = re.compile(r"\.L_x_\d+")
_BRANCHES = ("BRA", "BRX", "JMP", "JMX", "CALL", "BSSY", "BREAK", "BMOV", "WARPSYNC")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_SPACES = re.compile(r"\s+")


class Mark(StrEnum):
    """What a line of the diff is: in both listings, only in the left, only in the right."""

    SAME = " "
    REMOVED = "-"
    ADDED = "+"


@dataclass(frozen=True)
class DiffLine:
    """One printed line of the diff: the instruction as its listing shows it (with its offset),
    and its row in the left and the right listing (-1 where it is not in that one)."""

    mark: Mark
    text: str
    left: int
    right: int

    @property
    def printed(self) -> str:
        """'- /*00d0*/  FADD R9, R4, R3 ;'."""
        return f"{self.mark.value} {self.text}"


@dataclass(frozen=True)
class SassDiff:
    """Two listings aligned instruction by instruction, with names for the two sides."""

    left_name: str
    right_name: str
    lines: tuple[DiffLine, ...]

    def count(self, mark: Mark) -> int:
        """How many lines carry a mark."""
        return sum(1 for line in self.lines if line.mark == mark)

    @property
    def added(self) -> int:
        """Instructions only in the right listing."""
        return self.count(Mark.ADDED)

    @property
    def removed(self) -> int:
        """Instructions only in the left listing."""
        return self.count(Mark.REMOVED)

    @property
    def unchanged(self) -> int:
        """Instructions in both (after normalising)."""
        return self.count(Mark.SAME)

    def summary(self) -> str:
        """'3 instructions added, 2 removed, 14 unchanged'."""
        return SUMMARY.format(added=self.added, plural="" if self.added == 1 else "s",
                              removed=self.removed, unchanged=self.unchanged)

    def printed(self) -> list[str]:
        """The unified listing, one string per line."""
        return [line.printed for line in self.lines]


def normalise(text: str) -> str:
    """An instruction with what differs between equal code taken out: 'IMAD.WIDE R2, R6.reuse,
    R7, c[0x0][0x160] ;' -> 'IMAD.WIDE R#, R#, R#, c[#][#] ;'."""
    text = _TRAILING_COMMENT.sub("", _OFFSET.sub("", text))
    branch = opcode(text) in _BRANCHES  # before the predicate's number goes
    text = _REUSE.sub("", text)
    text = _CONSTANT.sub("c[#][#]", text)
    text = _LABEL_REF.sub(".L#", text)
    text = _REGISTER.sub(lambda match: match.group(1) + "#", text)
    if branch:
        # cuobjdump prints branch targets as addresses where nvdisasm prints labels.
        text = _HEX.sub("0x#", text)
    return _SPACES.sub(" ", text).strip()


def is_instruction(row: SassRow) -> bool:
    """Whether a row is an instruction (a label such as '.L_x_1:' is not)."""
    text = row.text.strip()
    return bool(text) and not text.endswith(":")


def instruction_rows(rows: Sequence[SassRow]) -> list[int]:
    """The indices of a listing's instructions, without labels and without the NOPs (and the
    branch-to-self before them) that pad the function after its last EXIT."""
    indices = [i for i, row in enumerate(rows) if is_instruction(row)]
    while indices and opcode(rows[indices[-1]].text) == "NOP":
        indices.pop()
    last = indices[-1] if indices else -1
    if last >= 0 and opcode(rows[last].text) == "BRA" and _is_self_loop(rows, last):
        indices.pop()
    return indices


def _is_self_loop(rows: Sequence[SassRow], index: int) -> bool:
    """Whether the branch at `index` jumps to the label just before it (the compiler's
    end-of-function trap, which follows the last EXIT)."""
    target = re.search(r"\(?(\.L_x_\d+)\)?", rows[index].text)
    before = rows[index - 1].text.strip() if index > 0 else ""
    return target is not None and before == f"{target.group(1)}:"


def diff_sass(left: Sequence[SassRow], right: Sequence[SassRow], left_name: str = "left",
              right_name: str = "right") -> SassDiff:
    """Align two SASS listings by normalised instruction; a changed instruction shows as the
    left's removed and the right's added."""
    left_rows, right_rows = instruction_rows(left), instruction_rows(right)
    left_keys = [normalise(left[i].text) for i in left_rows]
    right_keys = [normalise(right[i].text) for i in right_rows]
    # autojunk off: the heuristic treats frequent lines (NOPs, IMADs) as junk in long listings.
    matcher = difflib.SequenceMatcher(None, left_keys, right_keys, autojunk=False)
    lines: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += [DiffLine(Mark.SAME, instruction_text(left[a]), a, b)
                      for a, b in zip(left_rows[i1:i2], right_rows[j1:j2], strict=True)]
            continue
        lines += [DiffLine(Mark.REMOVED, instruction_text(left[a]), a, -1)
                  for a in left_rows[i1:i2]]
        lines += [DiffLine(Mark.ADDED, instruction_text(right[b]), -1, b)
                  for b in right_rows[j1:j2]]
    return SassDiff(left_name, right_name, tuple(lines))


def pick_kernel(names: Sequence[str], wanted: str) -> str:
    """The kernel of another build to compare with `wanted`: the same name when it has one,
    else its only or first kernel ('' when it has none)."""
    if wanted in names:
        return wanted
    return names[0] if names else ""
