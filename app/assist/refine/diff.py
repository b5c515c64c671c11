"""The diff shown before a proposal is applied to the editor's buffer."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, old_name: str = "current", new_name: str = "proposed",
                 context: int = 3) -> str:
    """A unified diff from `old` to `new` ('' when they are equal)."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=old_name, tofile=new_name, n=context)
    # A last line without a newline would run into the next header: end every line.
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
