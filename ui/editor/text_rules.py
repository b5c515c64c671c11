"""Text rules behind editor commands (comment toggling, indentation), kept free of Qt to test."""

from __future__ import annotations

COMMENT = "//"


def _indent_of(line: str) -> int:
    """Count of leading blanks (spaces and tabs) of a line."""
    return len(line) - len(line.lstrip(" \t"))


def is_commented(line: str) -> bool:
    """Whether a line starts (after its indentation) with a line comment."""
    return line.lstrip(" \t").startswith(COMMENT)


def toggle_comment(lines: list[str]) -> list[str]:
    """Comment out `lines` with '// ' at their common indentation, or uncomment them.

    Lines are uncommented only when every non-blank line is already commented, as in most
    editors; blank lines are left alone either way so toggling twice restores the text.
    """
    content = [line for line in lines if line.strip()]
    if not content:
        return list(lines)
    if all(is_commented(line) for line in content):
        return [_uncomment(line) for line in lines]
    column = min(_indent_of(line) for line in content)
    return [line[:column] + COMMENT + " " + line[column:] if line.strip() else line
            for line in lines]


def _uncomment(line: str) -> str:
    """Remove the first '//' (and one space after it) from a commented line."""
    if not is_commented(line):
        return line
    column = _indent_of(line)
    rest = line[column + len(COMMENT):]
    if rest.startswith(" "):
        rest = rest[1:]
    return line[:column] + rest


def indent_after(previous_line: str, width: int) -> int:
    """Indentation (in columns) for a new line typed after `previous_line`.

    Keeps the previous indentation and adds one level after an opening brace or a
    parenthesis left open, which is what a kernel author expects in C-like code.
    """
    expanded = previous_line.expandtabs(width)
    base = _indent_of(expanded)
    code = expanded.split(COMMENT, 1)[0].rstrip()
    if code.endswith(("{", "(", "[")):
        return base + width
    return base
