"""Source text as the C preprocessor sees it when directives run (translation phases 1 to 3):
line breaks, trigraphs, line splices, comments, literals and header names. Compilers differ
in the details (EDG, inside NVRTC and nvcc, takes a lone carriage return for a space; GCC,
which nvcc runs first, for a line break; GCC joins a backslash, spaces and a line break, and
reads trigraphs in its ISO modes), so the include scanner reads the text in every way one of
them might (`readings`) and checks the directives of each.

`logical_text` keeps the line count: a line break that a splice or a comment removes is put
back after the line it ended in, so a directive's line is the line its `#` is on.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

SPACE = " \t\f\v"
_TRIGRAPH = re.compile(r"\?\?([=/'()!<>-])")
_TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}",
              "-": "~"}
_STRICT_SPLICE = re.compile(r"\\\n")
_LOOSE_SPLICE = re.compile(r"\\[ \t\f\v]*\n")
# Spaces and comments, as they may stand between the tokens of a directive. Possessive: no
# token that follows starts with a space or `/`, so giving back is never needed, and a nested
# `+` inside a backtracking `*` tried every split of a run of spaces (2**n steps for n spaces).
_GAP = r"(?:[ \t\f\v]++|/\*.*?\*/)*+"
_INCLUDE_NAME = re.compile(_GAP + r"(include_next|include|import|embed)\b" + _GAP + r"[<\"]",
                           re.DOTALL)
_PROBE_OPEN = re.compile(_GAP + r"\(" + _GAP + r"[<\"]", re.DOTALL)
# A header name is one token: no escapes in "...", no comments in either form. Matched by
# `_Closings` rather than a regex: `<[^>\n]*>` scans to the line's end when no `>` follows, and
# one probe after another on a long line made that quadratic.
_PROBE = re.compile(r"(?<![\w$])__has_(?:include_next|include|embed)\b")
# Tokens that need nothing: everything up to a line break, a literal, a `#`, a comment or a
# probe (spaces included, except at the start of a line, where they keep it a line start).
_BORING = re.compile(r"(?:(?!__has_|//|/\*|%:)[^\n\"'#])+")
_SPACES = re.compile(r"[ \t\f\v]+")
_STRING = re.compile(r"\"(?:\\.|[^\"\\\n])*\"?")
_CHAR = re.compile(r"'(?:\\.|[^'\\\n])*'?")
_RAW_OPEN = re.compile(r"([^ ()\\\t\v\f\n]{0,16})\(")
_RAW_CLOSE = re.compile(r"\)([^ ()\\\t\v\f\n]{0,16})\"")
_RAW_PREFIX = re.compile(r"(?:^|(?<=[^\w$]))(?:u8|[uUL])?R$")
_NOT_WORD = re.compile(r"[^\w$.]")
_NUMBER_START = re.compile(r"\.?\d")


@dataclass(frozen=True)
class Reading:
    """One way a compiler may read the bytes of a source."""

    cr_is_newline: bool  # GCC; EDG takes a lone carriage return for a space
    trigraphs: bool  # GCC in -std=c++11/14/17 (ISO) modes; EDG warns and ignores them
    loose_splice: bool  # GCC: a backslash, then spaces, then a line break, still splices


def readings(text: str) -> list[Reading]:
    """The readings that can differ for `text` (one when it has none of the ambiguities)."""
    crs = (True, False) if "\r" in text.replace("\r\n", "") else (True,)
    trigraphs = (False, True) if _TRIGRAPH.search(text) else (False,)
    loose = (False, True) if _LOOSE_SPLICE.search(text.replace("\r", "\n")) else (False,)
    return [Reading(c, t, s) for c in crs for t in trigraphs for s in loose]


def logical_text(text: str, reading: Reading) -> str:
    """`text` after phases 1 to 3 as `reading` does them: line breaks as \\n, splices joined,
    comments replaced by a space; literals and header names kept; the line count kept."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    text = text.replace("\r", "\n" if reading.cr_is_newline else " ")
    if reading.trigraphs:
        text = _TRIGRAPH.sub(lambda m: _TRIGRAPHS[m.group(1)], text)
    splice = _LOOSE_SPLICE if reading.loose_splice else _STRICT_SPLICE
    out = _Lines()
    at = 0
    for match in splice.finditer(text):
        out.add(text[at:match.start()])
        out.defer(1)
        at = match.end()
    out.add(text[at:])
    return _Lexer(out.text()).run()


class HeaderNames:
    """Finds header names (`<...>` or `"..."`, ending on their line) in one text in linear
    time overall: the next closing character and line break are remembered, so scanning
    forward from many openings reads the text once (as the lexer and the scanner do)."""

    def __init__(self, text: str) -> None:
        """Nothing found yet."""
        self.text = text
        self.known: dict[str, tuple[int, int]] = {}  # char: (searched from, found at or -1)

    def _next(self, char: str, at: int) -> int:
        """The first `char` at or after `at`, or -1."""
        known = self.known.get(char)
        if known is not None and known[0] <= at and (known[1] < 0 or known[1] >= at):
            return known[1]
        found = self.text.find(char, at)
        self.known[char] = (at, found)
        return found

    def end(self, at: int) -> int | None:
        """Where the header name that opens at `at` ends (just past its `>` or `"`), or None
        when `at` opens none (another character, or no closing before the line ends)."""
        if at >= len(self.text) or self.text[at] not in '<"':
            return None
        close = self._next(">" if self.text[at] == "<" else '"', at + 1)
        line = self._next("\n", at + 1)
        if close < 0 or 0 <= line < close:
            return None
        return close + 1


class _Lines:
    """Text put together piece by piece, with removed line breaks deferred to the next one."""

    def __init__(self) -> None:
        """Nothing yet."""
        self.parts: list[str] = []
        self.pending = 0

    def add(self, piece: str) -> None:
        """Append `piece`, putting the deferred line breaks after its first one."""
        if self.pending and "\n" in piece:
            cut = piece.index("\n") + 1
            piece = piece[:cut] + "\n" * self.pending + piece[cut:]
            self.pending = 0
        self.parts.append(piece)

    def defer(self, count: int) -> None:
        """Remember `count` line breaks that were removed."""
        self.pending += count

    def text(self) -> str:
        """All of it, with any line breaks still deferred at the end."""
        return "".join(self.parts) + "\n" * self.pending


class _Lexer:
    """Phase 3 over spliced text: one pass, each step one token or a run of dull ones."""

    def __init__(self, text: str) -> None:
        """Index the raw-string closings once, so that unclosed openings cost nothing."""
        self.text = text
        self.out = _Lines()
        self.at = 0
        self.line_start = True  # only spaces and comments since the last line break
        self.number_end = -1  # where the number that the output ends with ends
        self.closings: dict[str, list[int]] = {}
        self.header_names = HeaderNames(text)
        if 'R"' in text:
            for match in _RAW_CLOSE.finditer(text):
                self.closings.setdefault(match.group(1), []).append(match.start())

    def run(self) -> str:
        """The logical text."""
        while self.at < len(self.text):
            self._step()
        return self.out.text()

    def _step(self) -> None:
        """Consume one token (or a run of tokens that need nothing)."""
        text, at = self.text, self.at
        char = text[at]
        if char == "\n":
            self._emit("\n", at + 1, line_start=True)
        elif self.line_start and char in SPACE:
            self._emit(" ", _SPACES.match(text, at).end(), line_start=True)  # type: ignore[union-attr]
        elif text.startswith("//", at):
            end = text.find("\n", at)
            self._emit(" ", len(text) if end < 0 else end, line_start=self.line_start)
        elif text.startswith("/*", at):
            self._comment(at)
        elif char == '"':
            self._string(at)
        elif char == "'":
            self._quote(at)
        elif char == "#" or text.startswith("%:", at):
            self._hash(at, 1 if char == "#" else 2)
        elif _PROBE.match(text, at):
            self._probe(at)
        else:
            boring = _BORING.match(text, at)
            self._run(at, boring.end() if boring else at + 1)

    def _run(self, start: int, end: int) -> None:
        """Put out a run of dull tokens, noting whether it ends in a number (for 1'000)."""
        run = self.text[start:end]
        continues = self.number_end == start
        self._emit(run, end)
        if continues and _NOT_WORD.search(run) is None:
            self.number_end = end
            return
        last = _NOT_WORD.search(run[::-1])
        tail = run[len(run) - last.start():] if last else run
        self.number_end = end if _NUMBER_START.match(tail) else -1

    def _emit(self, piece: str, end: int, line_start: bool = False) -> None:
        """Put out `piece` for the text up to `end` (no number ends there, unless _run says)."""
        self.out.add(piece)
        self.at = end
        self.line_start = line_start
        self.number_end = -1

    def _emit_verbatim(self, end: int) -> None:
        """Put out the text up to `end` as it is."""
        self._emit(self.text[self.at:end], end)

    def _comment(self, at: int) -> None:
        """A block comment: one space; its line breaks deferred (an unclosed one runs to the
        end, as it does for the compiler)."""
        end = self.text.find("*/", at + 2)
        end = len(self.text) if end < 0 else end + 2
        self.out.defer(self.text.count("\n", at, end))
        self._emit(" ", end, line_start=self.line_start)

    def _string(self, at: int) -> None:
        """A string literal, raw (R"delim(...)delim", line breaks and all) or plain."""
        if _RAW_PREFIX.search(self.text, max(0, at - 3), at):
            opening = _RAW_OPEN.match(self.text, at + 1)
            if opening:
                closes = self.closings.get(opening.group(1), [])
                index = bisect.bisect_left(closes, opening.end() - 1)
                if index < len(closes):
                    self._emit_verbatim(closes[index] + len(opening.group(1)) + 2)
                    return
        self._emit_verbatim(_STRING.match(self.text, at).end())  # type: ignore[union-attr]

    def _quote(self, at: int) -> None:
        """A digit separator inside a number (1'000'000), else a character literal."""
        if self.number_end == at:
            self._emit_verbatim(at + 1)
            self.number_end = at + 1
            return
        self._emit_verbatim(_CHAR.match(self.text, at).end())  # type: ignore[union-attr]

    def _hash(self, at: int, width: int) -> None:
        """`#` or `%:`: at the start of a line, a directive; an include's header name is kept
        whole (a `//` or `/*` inside it is no comment, a backslash no escape)."""
        if not self.line_start:
            self._emit_verbatim(at + width)
            return
        named = _INCLUDE_NAME.match(self.text, at + width)
        end = self.header_names.end(named.end() - 1) if named else None
        if not named or end is None:
            self._emit("#", at + width)
            return
        start = named.end() - 1
        self.out.defer(self.text.count("\n", at, start))
        self._emit(f"#{named.group(1)} {self.text[start:end]}", end)

    def _probe(self, at: int) -> None:
        """__has_include and its kin: a header name operand is kept whole."""
        name = _PROBE.match(self.text, at)
        assert name is not None
        opening = _PROBE_OPEN.match(self.text, name.end())
        end = self.header_names.end(opening.end() - 1) if opening else None
        if not opening or end is None:
            self._emit_verbatim(name.end())
            return
        start = opening.end() - 1
        self.out.defer(self.text.count("\n", at, start))
        self._emit(f"{name.group(0)}({self.text[start:end]}", end)
