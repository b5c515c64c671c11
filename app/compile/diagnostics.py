"""Compiler logs (NVRTC's and nvcc's front end, both EDG; ptxas; the drivers) read into
Diagnostic records on the user's own lines and columns."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.compile.model import Diagnostic, Severity

_HEADER = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<kind>catastrophic error|fatal error|"
                     r"error|warning|remark|note)(?: #(?P<number>[\w-]+))?: (?P<message>.*)$")
# One leading space, then a lazy `what` (stripped later): `\s+` before it tried every split of
# a long run of leading spaces, each reading the rest of the line.
_CONTEXT = re.compile(r"^\s(?P<what>.*?) at line (?P<line>\d+)"
                      r"(?: of (?:\"(?P<qfile>[^\"]+)\"|(?P<file>\S+)))?\s*$")
_TOOL = re.compile(r"^(?P<tool>nvrtc|nvcc|ptxas|nvlink|Command-line)\s*(?P<kind>error|fatal|"
                   r"warning)\s*:\s*(?P<message>.*)$", re.IGNORECASE)
# nvcc preprocesses with the host compiler first, which reports in GCC's form.
_GCC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<column>\d+):)? "
                  r"(?P<kind>fatal error|error|warning|note): (?P<message>.*)$")
_CARET = re.compile(r"^[ \t]*\^\s*$")
_SEVERITY = {"catastrophic error": Severity.ERROR, "fatal error": Severity.ERROR,
             "error": Severity.ERROR, "fatal": Severity.ERROR, "warning": Severity.WARNING,
             "remark": Severity.NOTE, "note": Severity.NOTE}
_TOKEN = re.compile(r"\w+|\S")


@dataclass
class LogContext:
    """How to put a log's names and columns on the user's coordinates.

    `aliases` maps a name the compiler used to the name the user knows (a temporary file, the
    program name); `sources` holds the text of files whose columns should be exact.
    """

    aliases: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    folder: str = ""
    # each source split into lines once, not once per diagnostic
    split: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def source_line(self, name: str, line: int) -> str | None:
        """Line `line` (1-based) of the source the compiler called `name`, None when
        unknown."""
        source = self.sources.get(name)
        if source is None or line < 1:
            return None
        if name not in self.split:
            self.split[name] = source.split("\n")
        lines = self.split[name]
        return lines[line - 1].rstrip("\r") if line <= len(lines) else None

    def display(self, name: str) -> str:
        """The name to show for a file the compiler named."""
        if name in self.aliases:
            return self.aliases[name]
        if self.folder and name.startswith(self.folder.rstrip("/") + "/"):
            return name[len(self.folder.rstrip("/")) + 1:]
        return name


def parse_log(log: str, context: LogContext) -> list[Diagnostic]:
    """Every error, warning and note in a compiler log, in the order the compiler gave them."""
    lines = log.replace("\r\n", "\n").replace("\0", "").split("\n")
    found: list[Diagnostic] = []
    at = 0
    while at < len(lines):
        header = _HEADER.match(lines[at])
        if header:
            at = _located(lines, at, header, context, found)
            continue
        gcc = _GCC.match(lines[at])
        tool = _TOOL.match(lines[at].strip())
        if gcc:
            found.append(_gcc_message(gcc, lines[at], context))
        elif tool:
            found.append(_tool_message(tool, lines[at]))
        at += 1
    return found


def _gcc_message(match: re.Match[str], raw: str, context: LogContext) -> Diagnostic:
    """A message in GCC's `file:line:column: kind: message` form."""
    column = match.group("column")
    return Diagnostic(context.display(match.group("file")), int(match.group("line")),
                      int(column) if column else None, _SEVERITY[match.group("kind")],
                      match.group("message").strip(), raw.strip())


def _tool_message(match: re.Match[str], raw: str) -> Diagnostic:
    """A message from a tool (nvrtc, nvcc, ptxas) that names no source line."""
    severity = _SEVERITY[match.group("kind").lower()]
    tool = match.group("tool")
    message = match.group("message").strip()
    return Diagnostic("", 0, None, severity, f"{tool}: {message}", raw.strip())


def _located(lines: list[str], at: int, header: re.Match[str], context: LogContext,
             found: list[Diagnostic]) -> int:
    """Read one located diagnostic (header, echoed line, caret, instantiation context) starting
    at `lines[at]`; append it and its notes; return the index after it."""
    reported = header.group("file")
    file = context.display(reported)
    line = int(header.group("line"))
    raw = [lines[at]]
    column = None
    end = at + 1
    if end + 1 < len(lines) and _CARET.match(lines[end + 1]):
        column = _column(lines[end], lines[end + 1], context.source_line(reported, line))
        raw += lines[end:end + 2]
        end += 2
    notes = []
    while end < len(lines) and lines[end].startswith("  ") and lines[end].strip():
        raw.append(lines[end])
        note = _context_note(lines[end], file, context)
        if note:
            notes.append(note)
        end += 1
    severity = _SEVERITY[header.group("kind")]
    found.append(Diagnostic(file, line, column, severity, header.group("message").strip(),
                            "\n".join(raw)))
    found.extend(notes)
    return end


def _context_note(text: str, file: str, context: LogContext) -> Diagnostic | None:
    """A note for one line of instantiation context ("... at line 7 [of "x.cuh"]")."""
    match = _CONTEXT.match(text)
    if not match:
        return None
    what = match.group("what").strip()
    if not what.startswith("detected during"):
        what = "detected during " + what
    named = match.group("qfile") or match.group("file")
    where = context.display(named) if named else file
    return Diagnostic(where, int(match.group("line")), None, Severity.NOTE, what, text.strip())


def _column(echo: str, caret: str, user_line: str | None) -> int | None:
    """The 1-based character column the caret points at.

    EDG echoes the line after two spaces and puts the caret under the byte it means. When the
    echo is not the user's line (nvcc echoes it after macro expansion), the token under the
    caret is looked up in the user's line (`user_line`, None when unknown) instead; None
    when it cannot be found there.
    """
    echoed = echo[2:] if echo.startswith("  ") else echo
    index = caret.index("^") - (2 if caret.startswith("  ") else 0)
    data = echoed.encode("utf-8", "replace")
    if index < 0 or index > len(data):
        return None
    if user_line is None or user_line == echoed:
        return len(data[:index].decode("utf-8", "ignore")) + 1
    before = data[:index].decode("utf-8", "ignore")
    token = _TOKEN.match(echoed, len(before))
    if not token:
        return None
    nth = echoed[:len(before)].count(token.group(0))
    spots = [m.start() for m in re.finditer(re.escape(token.group(0)), user_line)]
    if not spots:
        return None
    return spots[min(nth, len(spots) - 1)] + 1

