"""Includes: a kernel may include the CUDA headers and files in its own folder, nothing else.

The source is scanned before the compiler sees it, as the preprocessor would read it
(app.compile.pptext: line breaks of every kind, trigraphs, splices, comments, literals and
header names, in each way a compiler might read them): absolute names, names that climb out
of the folder, symbolic links that lead out of it, and computed `#include MACRO` are refused,
and so are `__has_include` / `__has_include_next` / `__has_embed` probes and
`#pragma GCC dependency` naming anything outside the folder. The headers found inside the folder
are returned so that the cache key covers their contents.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from app.base import system
from app.compile.model import OptionError
from app.compile.pptext import HeaderNames, logical_text, readings

# Possessive spaces, and the operand taken to the line's end and stripped in Python: a lazy
# operand between two runs of optional spaces retried every split of a long run of spaces.
_WS = r"[ \t\f\v]*+"
_SPACES = " \t\f\v"
# Directives that read a file: (line, kind, operand). `embed` reads data, never a header.
_DIRECTIVE = re.compile(r"^" + _WS + r"(?:#|%:)" + _WS +
                        r"(include_next|include|import|embed|pragma[ \t\f\v]+GCC[ \t\f\v]+"
                        r"dependency)\b" + _WS + r"(.*)$", re.MULTILINE)
# The operand of a probe is read by pptext.HeaderNames (a regex for it scanned to the line's end
# once per probe when no `>` closed it).
_PROBE = re.compile(r"(?<![\w$])(__has_include_next|__has_include|__has_embed)\b" + _WS +
                    r"(\()?" + _WS)
_PRAGMA_DEPENDENCY = re.compile(r"_Pragma\s*\(\s*(?:L|u8|u|U)?\"[^\"\n]*\bdependency\b")
_OPERAND = re.compile(r'^(?:"([^"\n]*)"|<([^>\n]*)>)$')
_FIRST_OPERAND = re.compile(r'^("[^"\n]*"|<[^>\n]*>)')
_HINTS = ("#", "%:", "??=", "__has_", "_Pragma")
MAX_HEADERS = 256


@dataclass(frozen=True)
class Header:
    """A header inside the kernel's folder that the source may include."""

    path: Path
    data: bytes


@dataclass(frozen=True)
class Use:
    """One place where the source names a file: a directive or a probe."""

    line: int
    kind: str  # include, include_next, import, embed, dependency, or a probe's name
    operand: str  # as written: "name", <name>, or anything else (computed)

    @property
    def follows(self) -> bool:
        """Whether the compiler reads the file as source (so it must be scanned too)."""
        return self.kind in ("include", "include_next", "import")

    def describe(self) -> str:
        """The use as the user wrote it, for messages."""
        if self.kind.startswith("__has"):
            return f"{self.kind}({self.operand})"
        return f"#{'pragma GCC ' if self.kind == 'dependency' else ''}{self.kind} {self.operand}"


def uses(text: str) -> list[Use]:
    """Every directive and probe in `text` that names a file, in every reading of it."""
    if not any(hint in text for hint in _HINTS):
        return []
    found: set[Use] = set()
    for reading in readings(text):
        found |= _uses_in(logical_text(text, reading))
    return sorted(found, key=lambda u: (u.line, u.kind, u.operand))


def _uses_in(clean: str) -> set[Use]:
    """The uses in one logical text."""
    starts = [0] + [m.end() for m in re.finditer("\n", clean)]

    def line_of(offset: int) -> int:
        # by bisection: counting line breaks from the start for every use was quadratic
        return bisect.bisect_right(starts, offset)
    found = set()
    for match in _DIRECTIVE.finditer(clean):
        kind = match.group(1).split()[-1]
        operand = match.group(2).rstrip(_SPACES)
        if kind == "dependency":  # a message may follow the file's name
            first = _FIRST_OPERAND.match(operand)
            operand = first.group(1) if first else operand
        found.add(Use(line_of(match.start()), kind, operand))
    names = HeaderNames(clean)
    for match in _PROBE.finditer(clean):
        if match.group(2):  # `defined(__has_include)` asks about the operator itself
            end = names.end(match.end())
            operand = clean[match.end():end] if end is not None else ""
            found.add(Use(line_of(match.start()), match.group(1), operand))
    for match in _PRAGMA_DEPENDENCY.finditer(clean):
        found.add(Use(line_of(match.start()), "_Pragma", "GCC dependency"))
    return found


def directives(text: str) -> list[tuple[int, str]]:
    """(line, operand) of every #include / #include_next / #import in `text`."""
    return [(u.line, u.operand) for u in uses(text) if u.follows]


@dataclass
class _Scan:
    """The state of one scan: the folder, the search paths, and what was found."""

    folder: Path | None
    extra_dirs: list[Path]
    found: dict[Path, Header]

    def visit(self, text: str, where: str, including_dir: Path | None) -> None:
        """Check every use of a file in `text` and follow the includes that land in the
        folder."""
        for use in uses(text):
            if use.kind == "_Pragma":
                raise OptionError('_Pragma("GCC dependency ...")', "it makes the compiler "
                                  "look for a file; kernels never need it", where, use.line)
            parsed = _OPERAND.match(use.operand)
            if not parsed:
                what = "includes" if use.kind.startswith(("include", "import")) else "names"
                raise OptionError(use.describe(), f"computed {what} are refused: write the "
                                  "header's name in quotes or angle brackets", where, use.line)
            name, quoted = (parsed.group(1), True) if parsed.group(1) is not None else (
                parsed.group(2), False)
            self._check_name(name, where, use, including_dir)
            target = self._resolve(name, quoted, including_dir) if use.follows else None
            if target is not None and target not in self.found:
                self._follow(target, where, use)

    def _check_name(self, name: str, where: str, use: Use, including_dir: Path | None) -> None:
        """Refuse absolute names and names that climb out of the kernel's folder."""
        if not name:
            raise OptionError(use.describe(), "an empty header name", where, use.line)
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or "\\" in name:
            raise OptionError(use.describe(), "absolute header paths are refused: put the "
                              "header in the kernel's folder", where, use.line)
        if ".." in Path(name).parts:
            base = including_dir or self.folder
            if base is None or not _inside(_lexical(base / name), self.folder):
                raise OptionError(use.describe(), "it climbs out of the kernel's folder",
                                  where, use.line)

    def _resolve(self, name: str, quoted: bool, including_dir: Path | None) -> Path | None:
        """The file the compiler would open, when it lies in the kernel's folder; None when
        it is a CUDA header or missing (the compiler then reports it)."""
        dirs = ([including_dir] if quoted and including_dir else []) + (
            [self.folder] if self.folder else []) + self.extra_dirs
        for directory in dirs:
            candidate = _lexical(directory / name)
            if candidate.is_file():
                return candidate
        return None

    def _follow(self, target: Path, where: str, use: Use) -> None:
        """Read a header in the folder (refusing links that leave it) and scan it in turn."""
        if self.folder is None or not _inside(target.resolve(), self.folder.resolve()):
            raise OptionError(use.describe(), "a symbolic link that leads outside the "
                              "kernel's folder", where, use.line)
        if len(self.found) >= MAX_HEADERS:
            raise OptionError(use.describe(), f"more than {MAX_HEADERS} local headers", where,
                              use.line)
        data = target.read_bytes()
        self.found[target] = Header(target, data)
        folder = self.folder or target.parent
        self.visit(data.decode("utf-8", "replace"), str(target.relative_to(folder)),
                   target.parent)


def _lexical(path: Path) -> Path:
    """`path` with `.` and `..` removed without following links (as the preprocessor does)."""
    return Path(os.path.normpath(path))


def _inside(path: Path, folder: Path | None) -> bool:
    """Whether `path` is `folder` or below it, comparing the paths as written."""
    return folder is not None and (path == folder or folder in path.parents)


def scan(source: str, filename: str, folder: Path | None,
         extra_dirs: list[Path] | None = None) -> list[Header]:
    """The headers in `folder` that `source` may include, after refusing (OptionError) any
    include that reaches outside it."""
    base = Path(os.path.abspath(folder)) if folder is not None else None
    state = _Scan(base, list(extra_dirs or []), {})
    state.visit(source, filename, base)
    return list(state.found.values())


def _toolkit_roots() -> list[Path]:
    """CUDA toolkit folders: $CUDA_HOME, $CUDA_PATH, the one holding nvcc, /usr/local/cuda."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = system.find_tool("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots.append("/usr/local/cuda")
    return [Path(r) for r in roots if r]


def _wheel_include_dirs() -> list[Path]:
    """Header folders of NVIDIA's pip wheels (nvidia/cu13/include and the like)."""
    found = []
    for entry in sys.path:
        base = Path(entry) / "nvidia"
        if base.is_dir():
            found += sorted(p for p in base.glob("*/include") if (p / "cuda_fp16.h").is_file())
    return found


@functools.cache
def cuda_include_dirs() -> list[Path]:
    """Folders with the CUDA headers (cuda_fp16.h and friends, and CCCL's cuda/std) that every
    kernel may include, first found first; empty when neither a toolkit nor wheels have them."""
    dirs: list[Path] = []
    for include in [r / "include" for r in _toolkit_roots()] + _wheel_include_dirs():
        include = include.resolve()
        if (include / "cuda_fp16.h").is_file() and include not in dirs:
            dirs.append(include)
            if (include / "cccl").is_dir():
                dirs.append(include / "cccl")
    return dirs


def include_identity() -> list[str]:
    """What identifies the CUDA headers for the cache: each folder and its change time."""
    return [f"{d}:{d.stat().st_mtime_ns}" for d in cuda_include_dirs()]
