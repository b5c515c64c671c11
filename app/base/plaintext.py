"""Text from outside (a bundle, a model's answer, a compiler quoting either) made safe to show:
control characters written as escapes, so no escape sequence reaches a terminal or a report.
`printable` escapes one value; `terminal_safe` escapes everything the command line writes."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import TextIO

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


# What may not reach a terminal as it is: C0 controls but tab and newline (carriage return
# included: it lets a later line overwrite an earlier one), DEL, C1 controls (0x9b is CSI on
# terminals that take 8-bit controls), and lone surrogates (a file name that is not UTF-8, which
# Python would write back as its raw bytes, 0x9b among them).
_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _terminal_escape(match: re.Match[str]) -> str:
    """One character's escape: C0 as \\x1b (as `printable` writes it); DEL and C1 as \\u009b,
    which is also a valid escape inside a JSON string, where C0 never appears unescaped; a byte
    that was not UTF-8 (a surrogate escape) as \\xNN of that byte."""
    code = ord(match.group(0))
    if code < 0x20:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """`text` with every character a terminal would act on, rather than show, escaped (tab and
    newline kept)."""
    return _TERMINAL.sub(_terminal_escape, text)


class TerminalStream(io.TextIOBase):
    """A text stream that escapes what it is given (terminal_text) before passing it on: the
    command line's stdout and stderr while a command runs (app.cli.entry), so no text that came from
    a file, a compiler, a reference, a model or the audit log reaches the terminal raw, whichever
    command printed it. The program's own control characters (the progress line's carriage
    returns) go through `rewrite_line` and `clear_line`."""

    def __init__(self, raw: TextIO) -> None:
        """Wrap `raw`."""
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        """Write `text` escaped; the length given, as a stream's write returns."""
        self.raw.write(terminal_text(text))
        return len(text)

    def write_controls(self, text: str) -> None:
        """Write text that holds the program's own control characters, unescaped."""
        self.raw.write(text)

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self.raw.flush()

    def isatty(self) -> bool:
        """Whether the wrapped stream is a terminal."""
        return self.raw.isatty()

    def fileno(self) -> int:
        """The wrapped stream's descriptor."""
        return self.raw.fileno()

    def writable(self) -> bool:
        """A stream to write to."""
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The wrapped stream's encoding."""
        return str(getattr(self.raw, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        """The wrapped stream's error handler."""
        return getattr(self.raw, "errors", None)


@contextlib.contextmanager
def terminal_safe() -> Iterator[None]:
    """sys.stdout and sys.stderr escaped (TerminalStream) for the duration, then put back."""
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalStream(saved[0])
    sys.stderr = TerminalStream(saved[1])
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = saved


def _write_controls(stream: TextIO, text: str) -> None:
    """Write the program's own control characters to `stream`, past its escaping if it has any."""
    if isinstance(stream, TerminalStream):
        stream.write_controls(text)
    else:
        stream.write(text)
    stream.flush()


def rewrite_line(text: str, width: int = 79, stream: TextIO | None = None) -> None:
    """Rewrite the terminal's current line with `text` (escaped, cut or padded to `width`): a
    progress line on stderr."""
    shown = terminal_text(text)[:width]
    _write_controls(stream or sys.stderr, "\r" + shown.ljust(width))


def clear_line(width: int = 79, stream: TextIO | None = None) -> None:
    """Blank the progress line and put the cursor back at its start."""
    _write_controls(stream or sys.stderr, "\r" + " " * width + "\r")
