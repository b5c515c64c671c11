"""CUDA source handling for the CPU backend: the few rewrites the host compiler needs, and the
scan that names constructs the emulation cannot run (before anything is compiled).

The rewrites keep every line where it was, so the host compiler's messages point at the user's
own lines. The scan runs on the preprocessed source (comments gone, `#if` branches decided,
macros expanded), restricted to the user's files, so a construct in a disabled `#if` branch or
in a comment is never reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A construct the emulation cannot run, and how to recognise it in preprocessed code.
UNSUPPORTED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern)) for name, pattern in (
        ("inline assembly (asm)", r"\b(?:asm|__asm__|__asm)\b"),
        ("tensor-core matrix operations (wmma / mma)",
         r"\b(?:wmma|nvcuda)\s*::|\b__(?:hmma|imma|bmma)_\w+|\bmma_sync\b"),
        ("grid-wide synchronisation (cooperative_groups::this_grid, grid_group)",
         r"\bthis_grid\s*\(|\bgrid_group\b"),
        ("thread block clusters (this_cluster, __cluster_dims__)",
         r"\bthis_cluster\s*\(|\bcluster_group\b|\b__cluster_dims__\b|\bmap_shared_rank\b"),
        ("textures", r"\btex(?:1D|2D|3D|Cubemap)\w*\s*[<(]|\btexture\s*<|\bcudaTextureObject_t\b"),
        ("surfaces", r"\bsurf(?:1D|2D|3D|Cubemap)\w*\s*[<(]|\bsurface\s*<|\bcudaSurfaceObject_t\b"),
        ("kernel launches in the source (<<<...>>>: host code or dynamic parallelism)", r"<<<"),
        ("asynchronous copies (memcpy_async, cuda::pipeline)", r"\bmemcpy_async\b"),
        ("libcu++ (the cuda:: namespace)", r"\bcuda\s*::"),
        ("FP8 types (__nv_fp8_*)", r"\b__nv_fp8\w*"),
        ("the CUDA runtime API in device code",
         r"\bcuda(?:Malloc\w*|Free\w*|Memcpy\w*|Memset\w*|DeviceSynchronize|LaunchKernel|"
         r"GetLastError|Stream\w+|Event\w+)\s*\("),
        ("address-space intrinsics (__cvta_*, __isGlobal, __isShared, ...)",
         r"\b__cvta_\w+|\b__is(?:Global|Shared|Constant|Local|GridConstant)\s*\("),
        ("tensor memory accelerator descriptors (CUtensorMap)", r"\bCUtensorMap\w*"),
    ))

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_LINEMARKER = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"(.*)$')
# Declarations are found by a forward scan (rewrite): a regex from every `extern` to its `;`
# read the rest of the text once per `extern` when no `;` followed (a `#if 0` block of them).
_EXTERN = re.compile(r"\bextern\b")
_SHARED = re.compile(r"\b__shared__\b")
_STATEMENT_END = re.compile(r"[;{}]")
_DECORATION = re.compile(r"\b__shared__\b|\b__align__\s*\(\s*\w+\s*\)|\balignas\s*\([^()]*\)|"
                         r"\b__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
# Words (qualified names whole) and single marks: what comes before a `{` says whose it is.
_SCOPE_TOKEN = re.compile(r"[\w:]+|[^\s\w:]")
_WORD = re.compile(r"[\w:]+")
# How much of a declaration a message repeats.
_SHOWN = 80


class SourceError(ValueError):
    """A construct the CPU backend cannot emulate (its message names it)."""


@dataclass(frozen=True)
class Finding:
    """One unsupported construct and the first place it appears."""

    construct: str
    file: str
    line: int

    def describe(self) -> str:
        """'not supported by the CPU backend: <construct> (<file>:<line>)'."""
        return f"not supported by the CPU backend: {self.construct} ({self.file}:{self.line})"


def mask(text: str) -> str:
    """The text with comments, string and character literals blanked out (newlines kept), so
    that offsets and line numbers still match the original."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif text[i] in "\"'":
            end = _literal_end(text, i)
        else:
            i += 1
            continue
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        i = end
    return "".join(out)


def _literal_end(text: str, start: int) -> int:
    """The offset just past the string or character literal that starts at `start`."""
    quote, i = text[start], start + 1
    while i < len(text) and text[i] not in (quote, "\n"):
        i += 2 if text[i] == "\\" else 1
    return min(i + 1, len(text))


def _function_scopes(masked: str, positions: list[int]) -> list[bool]:
    """For each of `positions` (ascending), whether it lies inside a function (or class) body
    rather than at namespace scope: some enclosing brace is not the brace of a namespace or of
    an extern "C" block (whose "C" the mask blanked). One pass over the text for all of them."""
    scopes: list[bool] = []
    stack: list[bool] = []
    functions = 0  # entries of `stack` that are True
    before = ("", "")  # the two tokens before the current one
    index = 0
    for token in _SCOPE_TOKEN.finditer(masked):
        while index < len(positions) and positions[index] <= token.start():
            scopes.append(functions > 0)
            index += 1
        if index == len(positions):
            break
        mark = token.group()
        if mark == "{":
            opener = before[1] in ("namespace", "extern") or (
                before[0] == "namespace" and _WORD.fullmatch(before[1]) is not None)
            stack.append(not opener)
            functions += not opener
        elif mark == "}" and stack:
            functions -= stack.pop()
        before = (before[1], mark)
    return scopes + [functions > 0] * (len(positions) - len(scopes))


def _array_declarator(body: str) -> tuple[str, str] | None:
    """(type, name) of `T name[]` (decorations already removed), or None. Read from the end by
    hand: a regex with a lazy type before optional spaces was quadratic in a long body."""
    text = body.strip()
    if not text.endswith("]"):
        return None
    text = text[:-1].rstrip()
    if not text.endswith("["):
        return None
    text = text[:-1].rstrip()
    start = len(text)
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    name, kind = text[start:], text[:start].strip()
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")) or \
            not kind:
        return None
    return " ".join(kind.split()), name


def _dynamic_shared_replacement(body: str, function_scope: bool) -> str:
    """The C++ that stands for one `extern __shared__ T name[];` declaration."""
    declarator = _array_declarator(_DECORATION.sub(" ", body))
    if declarator is None:
        shown = " ".join(body[:4 * _SHOWN].split())
        shown = shown if len(shown) <= _SHOWN else shown[:_SHOWN - 3] + "..."
        raise SourceError("not supported by the CPU backend: this form of extern __shared__ "
                          f"declaration ({shown}); write it as extern __shared__ T name[];")
    kind, name = declarator
    if function_scope:
        return (f"{kind}* const {name} = reinterpret_cast<{kind}*>"
                f"(ks_self()->block->dynamic_shared);")
    return f"static const ks_dynamic_shared<{kind}> {name}{{}};"


def rewrite(text: str) -> str:
    """The source as the host compiler needs it, line for line: `extern __shared__` arrays
    become views of the block's dynamic shared memory, and `__noinline__` becomes the GNU
    attribute (as a macro it would break the standard library's own use of the word)."""
    masked = mask(text)
    declarations = _extern_shared(masked)
    scopes = _function_scopes(masked, [start for start, _ in declarations])
    edits: list[tuple[int, int, str]] = []
    for (start, end), scope in zip(declarations, scopes, strict=True):
        body = text[start + len("extern"):end - 1]
        # the line breaks of a declaration over several lines stay, so later lines keep
        # their numbers
        replacement = _dynamic_shared_replacement(body, scope) + "\n" * body.count("\n")
        edits.append((start, end, replacement))
    for match in re.finditer(r"\b__noinline__\b", masked):
        edits.append((match.start(), match.end(), "__attribute__((noinline))"))
    return _applied(text, edits)


def _extern_shared(masked: str) -> list[tuple[int, int]]:
    """(start, end) of every `extern ... __shared__ ... ;` in the masked text: from an `extern`
    to the first `;` with no brace between. Each stretch between `;`, `{` and `}` is read once."""
    found: list[tuple[int, int]] = []
    done = 0
    for extern in _EXTERN.finditer(masked):
        if extern.start() < done:
            continue  # a later `extern` of a statement already read
        close = _STATEMENT_END.search(masked, extern.end())
        done = close.end() if close else len(masked)
        if close and close.group() == ";" and _SHARED.search(masked, extern.end(),
                                                               close.start()):
            found.append((extern.start(), close.end()))
    return found


def _applied(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, replacement) made, joined once (slicing the whole text
    per edit was quadratic); an edit inside an earlier one is dropped."""
    pieces: list[str] = []
    at = 0
    for start, end, replacement in sorted(edits):
        if start < at:
            continue
        pieces += [text[at:start], replacement]
        at = end
    return "".join(pieces) + text[at:]


def user_lines(preprocessed: str, own_files: tuple[str, ...],
               system_prefixes: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """(file, line, text) for every line of preprocessed output that comes from the user's
    files: not from the emulation's own headers, system headers or the compiler itself."""
    lines: list[tuple[str, int, str]] = []
    current, number, keep = "", 0, False
    for raw in preprocessed.splitlines():
        marker = _LINEMARKER.match(raw)
        if marker:
            number, current = int(marker.group(1)), marker.group(2)
            flags = marker.group(3).split()
            keep = not (current.startswith("<") or "3" in flags or current in own_files
                        or current.startswith(system_prefixes))
            continue
        if keep and raw.strip():
            lines.append((current, number, raw))
        number += 1
    return lines


def included_files(preprocessed: str, skip_prefixes: tuple[str, ...]) -> set[str]:
    """Every file the preprocessor read apart from system headers, the compiler's own
    pseudo-files and paths under `skip_prefixes`, including headers that produced no lines."""
    files: set[str] = set()
    for raw in preprocessed.splitlines():
        marker = _LINEMARKER.match(raw) if raw.startswith("#") else None
        if marker and not marker.group(2).startswith("<") and "3" not in marker.group(3).split():
            if not marker.group(2).startswith(skip_prefixes):
                files.add(marker.group(2))
    return files


def scan(lines: list[tuple[str, int, str]]) -> list[Finding]:
    """The unsupported constructs in these lines, each once, at its first appearance."""
    findings: dict[str, Finding] = {}
    for file, number, text in lines:
        code = _STRING.sub('""', text)
        for construct, pattern in UNSUPPORTED:
            if construct not in findings and pattern.search(code):
                findings[construct] = Finding(construct, file, number)
    return list(findings.values())


def kernel_count(text: str) -> int:
    """How many `__global__` functions the source declares (outside comments and strings)."""
    return len(re.findall(r"\b__global__\b", mask(text)))


def launch_bounds(text: str, entry: str) -> int | None:
    """The max-threads value of `__launch_bounds__(N)` on the entry's definition, when it is a
    literal number (a GPU refuses a launch with a larger block)."""
    masked = mask(text)
    plain = re.escape(entry.split("<")[0].split("::")[-1])
    # `[^()]*`, not `[^)]*`: with no `)`, each `__launch_bounds__(` read to the text's end
    pattern = re.compile(r"__launch_bounds__\s*\(\s*(\d+)[^()]*\)[^;{}()]*?\b" + plain +
                         r"\s*\(")
    match = pattern.search(masked)
    return int(match.group(1)) if match else None
