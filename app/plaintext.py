"""Text from outside (a bundle, a model's answer, a compiler quoting either) made safe to show:
control characters written as escapes, so no escape sequence reaches a terminal or a report."""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls; the second leaves tab and newline, for text kept in lines.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(value: object, limit: int | None = None, lines: bool = False) -> str:
    """`value` as text with every control character (C0, DEL, C1; with `lines`, tab and newline
    aside) written as its escape (ESC as \\x1b); cut to `limit` characters when given, saying
    how many more there were."""
    pattern = _CONTROL_BUT_LINES if lines else _CONTROL
    text = pattern.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(value))
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    return text
