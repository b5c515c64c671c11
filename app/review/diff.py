"""Line differences between two kernel sources, for side-by-side views: rows that pair the two
sides, and the line numbers that changed on each."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class DiffRow:
    """One row of a side-by-side diff: `tag` is equal, replace, delete (left only) or insert
    (right only); line numbers are 1-based, 0 where a side has no line."""

    tag: str
    left_line: int
    left: str
    right_line: int
    right: str


def _pairs(tag: str, left: list[str], right: list[str], i1: int, i2: int, j1: int,
           j2: int) -> list[DiffRow]:
    """The rows of one opcode of the matcher."""
    rows = []
    for k in range(max(i2 - i1, j2 - j1)):
        li, rj = i1 + k, j1 + k
        has_left, has_right = li < i2, rj < j2
        kind = tag if has_left and has_right else ("delete" if has_left else "insert")
        rows.append(DiffRow(kind, li + 1 if has_left else 0, left[li] if has_left else "",
                            rj + 1 if has_right else 0, right[rj] if has_right else ""))
    return rows


def side_by_side(left_text: str, right_text: str) -> list[DiffRow]:
    """Every line of both texts, paired where they match."""
    left, right = left_text.splitlines(), right_text.splitlines()
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        rows += _pairs(tag, left, right, i1, i2, j1, j2)
    return rows


def changed_lines(base_text: str, other_text: str) -> tuple[set[int], set[int]]:
    """The 1-based lines of each text that are not in the other (changed, added or removed)."""
    base: set[int] = set()
    other: set[int] = set()
    for row in side_by_side(base_text, other_text):
        if row.tag != "equal":
            if row.left_line:
                base.add(row.left_line)
            if row.right_line:
                other.add(row.right_line)
    return base, other


def counts(rows: list[DiffRow]) -> tuple[int, int]:
    """Lines removed from the left and added on the right."""
    removed = sum(1 for r in rows if r.tag != "equal" and r.left_line)
    added = sum(1 for r in rows if r.tag != "equal" and r.right_line)
    return removed, added
