"""Includes: a kernel may include the CUDA headers and files in its own folder, nothing else.

The source is scanned before the compiler sees it (after joining continued lines and removing
comments, as the preprocessor does): absolute names, names that climb out of the folder,
symbolic links that lead out of it, and computed `#include MACRO` are refused. The headers found
inside the folder are returned so that the cache key covers their contents.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from app import system
from app.compile.model import OptionError

# Comments, and string or character literals (kept: a comment marker inside one is not one).
_LEXEMES = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                      re.DOTALL)
_DIRECTIVE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*(include_next|include|import)\b[ \t]*(.*?)[ \t]*$",
                        re.MULTILINE)
_OPERAND = re.compile(r'^(?:"([^"\n]*)"|<([^>\n]*)>)$')
MAX_HEADERS = 256


@dataclass(frozen=True)
class Header:
    """A header inside the kernel's folder that the source may include."""

    path: Path
    data: bytes


def _splice(text: str) -> str:
    """Join lines continued with a backslash, keeping the line count: the joined line is
    followed by as many empty lines as it swallowed, so line numbers stay the user's."""
    if "\\\n" not in text:
        return text
    out, pending = [], 0
    for piece in text.split("\n"):
        if piece.endswith("\\"):
            out.append(piece[:-1])
            pending += 1
            continue
        out.append(piece + "\n" + "\n" * pending)
        pending = 0
    return "".join(out)[:-1]


def _strip_comments(text: str) -> str:
    """Comments replaced by the newlines they contained (string literals kept)."""
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token[0] in "\"'" else " " + "\n" * token.count("\n")
    return _LEXEMES.sub(replace, text)


def directives(text: str) -> list[tuple[int, str]]:
    """(line, operand) of every #include / #include_next / #import in `text`."""
    if "#" not in text and "%:" not in text:  # no directive at all (splices can split words)
        return []
    clean = _strip_comments(_splice(text))
    return [(clean.count("\n", 0, m.start()) + 1, m.group(2)) for m in _DIRECTIVE.finditer(clean)]


@dataclass
class _Scan:
    """The state of one scan: the folder, the search paths, and what was found."""

    folder: Path | None
    extra_dirs: list[Path]
    found: dict[Path, Header]

    def refuse(self, where: str, line: int, operand: str, reason: str) -> OptionError:
        """An OptionError naming the directive and where it is."""
        return OptionError(f"#include {operand}", reason, where, line)

    def visit(self, text: str, where: str, including_dir: Path | None) -> None:
        """Check every include of `text` and follow the ones that land in the folder."""
        for line, operand in directives(text):
            parsed = _OPERAND.match(operand)
            if not parsed:
                raise self.refuse(where, line, operand, "computed includes are refused: write "
                                  "the header's name in quotes or angle brackets")
            name, quoted = (parsed.group(1), True) if parsed.group(1) is not None else (
                parsed.group(2), False)
            self._check_name(name, where, line, operand, including_dir)
            target = self._resolve(name, quoted, including_dir)
            if target is not None and target not in self.found:
                self._follow(target, where, line, operand)

    def _check_name(self, name: str, where: str, line: int, operand: str,
                    including_dir: Path | None) -> None:
        """Refuse absolute names and names that climb out of the kernel's folder."""
        if not name:
            raise self.refuse(where, line, operand, "an empty header name")
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or "\\" in name:
            raise self.refuse(where, line, operand, "absolute header paths are refused: "
                              "put the header in the kernel's folder")
        if ".." in Path(name).parts:
            base = including_dir or self.folder
            if base is None or not _inside(_lexical(base / name), self.folder):
                raise self.refuse(where, line, operand, "it climbs out of the kernel's folder")

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

    def _follow(self, target: Path, where: str, line: int, operand: str) -> None:
        """Read a header in the folder (refusing links that leave it) and scan it in turn."""
        if self.folder is None or not _inside(target.resolve(), self.folder.resolve()):
            raise self.refuse(where, line, operand, "a symbolic link that leads outside the "
                              "kernel's folder")
        if len(self.found) >= MAX_HEADERS:
            raise self.refuse(where, line, operand, f"more than {MAX_HEADERS} local headers")
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
