"""What the PTX / SASS views print (no Qt): SASS with the source lines it came from set between
the instructions, and PTX whose `.loc` directives quote their source line.

A listing is a list of lines; each knows the SASS row it prints (-1 for a source line), so the
view can go from a row to its block and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.compile.assembly import SassRow, same_file

SOURCE_MARK = "//"  # source lines in the SASS listing start with this (the highlighter knows)
QUOTE_LIMIT = 90  # characters of a source line quoted after a .loc directive


@dataclass(frozen=True)
class ListingLine:
    """One printed line: an instruction (`row` >= 0) or a quoted source line (`row` == -1)."""

    text: str
    row: int
    line: int


def instruction_text(row: SassRow) -> str:
    """/*0070*/  @P0 EXIT ;"""
    return f"/*{row.offset:04x}*/  {row.text}"


def source_text(number: int, lines: Sequence[str]) -> str:
    """'//   19 | c[i] = a[i] + b[i];' for a 1-based source line."""
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return f"{SOURCE_MARK} {number:4d} | {text}"


def sass_listing(rows: Sequence[SassRow], source: str, source_name: str,
                 interleave: bool = True) -> list[ListingLine]:
    """The SASS rows, each run of rows from a new line of the edited source preceded (when
    `interleave`) by that line's text."""
    lines = source.splitlines()
    listing: list[ListingLine] = []
    previous = 0
    for index, row in enumerate(rows):
        line = row.line if same_file(row.file, source_name) else 0
        if interleave and lines and line and line != previous:
            listing.append(ListingLine(source_text(line, lines), -1, line))
        previous = line or previous
        listing.append(ListingLine(instruction_text(row), index, row.line))
    return listing


def quote_locs(ptx: str, source_lines: Sequence[int], source: str) -> str:
    """The PTX with each `.loc` of the edited source followed by a comment quoting its line
    (`source_lines` holds each PTX line's source line, as model.ptx_source_lines gives)."""
    lines = source.splitlines()
    out = []
    for text, number in zip(ptx.splitlines(), source_lines, strict=False):
        if number and text.lstrip().startswith(".loc") and 0 < number <= len(lines):
            quoted = lines[number - 1].strip()[:QUOTE_LIMIT]
            text = f"{text}\t// {quoted}" if quoted else text
        out.append(text)
    return "\n".join(out)
