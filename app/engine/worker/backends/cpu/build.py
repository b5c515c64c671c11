"""Building one kernel for the CPU backend: rewrite, wrap with the emulation header and a
launcher, preprocess, refuse unsupported constructs, compile (or reuse the cached library).

Two cache levels: the library itself is keyed by the preprocessed source (toolchain.py), and a
small record keyed by the unpreprocessed translation unit names that library together with the
hashes of the headers the unit read, so a warm load needs no compiler process at all. (A new
header that would shadow a recorded one earlier in the include path is not noticed; editing any
recorded file is.)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.base.fsutil import atomic_write_text
from app.engine.worker.backends.base import BackendError
from app.engine.worker.backends.cpu import imports, macros, sealed, source, toolchain
from app.engine.worker.backends.cpu.toolchain import Toolchain

# Files whose lines are never the user's, when scanning preprocessed code.
SYSTEM_PREFIXES = ("/usr/", "/lib/", "/opt/", "/Library/", "/Applications/")
# Headers larger than this are not hashed (nor, then, trusted from a record): no real one is.
HEADER_LIMIT = 64 << 20

LAUNCHER = """
static void ks_entry_invoke(void** args) {{ ks_invoke(&({entry}), args); }}
thread_local char ks_tls_anchor_byte;
extern "C" __attribute__((visibility("default"))) void* kernel_studio_tls_anchor(void) {{
    return &ks_tls_anchor_byte;
}}
extern "C" __attribute__((visibility("default")))
int kernel_studio_params(char* kinds, int* sizes, int capacity) {{
    return ks_describe_params(&({entry}), kinds, sizes, capacity);
}}
extern "C" __attribute__((visibility("default")))
int kernel_studio_launch(void** args, const unsigned int* grid, const unsigned int* block,
                         unsigned long long shared, int threads, char* error,
                         unsigned long long error_size) {{
    return ks_launch(ks_entry_invoke, args, grid, block, shared, threads,
                     kernel_studio_tls_anchor, {single}, {name}, error, error_size);
}}
"""


@dataclass(frozen=True)
class BuiltKernel:
    """A kernel library ready to load, and what the source says about launching it."""

    library: Path
    entry: str
    max_threads: int | None


def _c_string(text: str) -> str:
    """A C string literal for `text` (JSON's escapes are valid C for printable text)."""
    return json.dumps(text)


def wrapper(text: str, source_path: str, entry: str, defines: str = "") -> str:
    """The translation unit handed to the host compiler: the emulation header, the rewritten
    source (its lines numbered as in the user's file), then the launcher for `entry`."""
    try:
        body = source.rewrite(text)
    except source.SourceError as error:
        raise BackendError("unsupported", str(error)) from None
    if not body.endswith("\n"):
        body += "\n"
    return (f'#include "{toolchain.HEADER}"\n{defines}'
            f"#line 1 {_c_string(source_path)}\n{body}"
            f"#line 1 {_c_string(toolchain.LAUNCHER_FILE)}\n"
            + LAUNCHER.format(entry=entry, name=_c_string(entry),
                              single=int(source.kernel_count(text) == 1)))


def _own_files() -> tuple[str, ...]:
    """Paths the preprocessor reports for the emulation's own headers."""
    return tuple(str(p) for p in toolchain.NATIVE.rglob("*.h")) + (toolchain.LAUNCHER_FILE,)


def user_files(preprocessed: str) -> set[str]:
    """The files the preprocessed unit read, less the system's and the emulation's own."""
    return source.included_files(preprocessed, SYSTEM_PREFIXES + (str(toolchain.NATIVE),))


def refuse_host_macros(files: set[str], refused: dict[str, str]) -> None:
    """Raise "unsupported" when a user file (of `files`) names a macro whose value here cannot
    be NVRTC's (the host compiler's __GNUC__, __x86_64__, ...): it could take another #if branch
    than the GPU does. Files are scanned as written, comments and strings aside."""
    for file in sorted(files):
        try:
            text = Path(file).read_bytes()[:HEADER_LIMIT].decode("utf-8", "replace")
        except OSError:
            continue
        found = macros.find_refused(source.mask(text), refused)
        if found:
            name, why, line = found
            raise BackendError("unsupported", f"not supported by the CPU backend: the "
                               f"predefined macro {name} ({why}; the CPU build cannot give it "
                               f"the GPU's value) ({file}:{line})")


def refuse_unsupported(preprocessed: str) -> None:
    """Raise "unsupported" naming the first construct the emulation cannot run."""
    own = _own_files()
    lines = source.user_lines(preprocessed, own, SYSTEM_PREFIXES + (str(toolchain.NATIVE),))
    findings = source.scan(lines)
    if findings:
        extra = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise BackendError("unsupported", findings[0].describe() + extra)


def _digest(path: str) -> str | None:
    """A header's content hash, or None when it is not a readable regular file."""
    return sealed.digest(Path(path), HEADER_LIMIT, follow=True)


def _manifest(compiler: Toolchain, unit: str, flags: list[str], source_dir: str | None) -> Path:
    """Where the record of a previous build of this exact translation unit is kept."""
    key = hashlib.sha256("\0".join([compiler.version, toolchain.native_digest(), unit,
                                     " ".join(flags), source_dir or ""]).encode())
    return toolchain.cache_folder() / f"unit-{key.hexdigest()[:24]}.json"


def _recorded_library(manifest: Path) -> Path | None:
    """The library a previous build recorded, when every file it read is unchanged (so that a
    warm start skips even the preprocessor), and the library is one of the cache's own names
    with the content its record and its seal say. Anything else: None, and a fresh build."""
    try:
        record = json.loads(manifest.read_text())
        library = sealed.confined(toolchain.cache_folder(), record["library"])
        expected, files = record["sha256"], dict(record["files"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if library is None or not isinstance(expected, str) or not sealed.intact(library, expected):
        return None
    if any(_digest(str(f)) != d for f, d in files.items()):
        return None
    return library


def _record(manifest: Path, library: Path, files: set[str], source_path: str) -> None:
    """Remember which library this unit built, its digest, and the files (headers included)
    it read."""
    record = {"library": library.name, "sha256": sealed.digest(library),
              "files": {f: _digest(f) for f in sorted(files - {source_path})}}
    atomic_write_text(manifest, json.dumps(record, indent=1))


def build(compiler: Toolchain, text: str, source_path: str, source_dir: str | None,
          options: list[str], entry: str, record: bool = False) -> BuiltKernel:
    """The kernel's library, built or taken from the cache; BackendError when it cannot be.
    `record`: this is the parent, which may write the record of predefined macros."""
    flags = toolchain.host_options(options, source_dir)
    survey = macros.survey(compiler, record)
    unit = wrapper(text, source_path, entry, macros.defines(survey))
    manifest = _manifest(compiler, unit, flags, source_dir)
    library = _recorded_library(manifest)
    if library is None:
        preprocessed, problem = toolchain.preprocess(compiler, unit, source_dir, flags)
        if problem:
            raise toolchain.explain_failure(problem, entry)
        refuse_unsupported(preprocessed)
        files = user_files(preprocessed)
        refuse_host_macros(files, survey["refused"])
        library, problem = toolchain.kernel_library(compiler, preprocessed, flags)
        if problem:
            raise toolchain.explain_failure(problem, entry)
        _record(manifest, library, files, source_path)
    imports.check_imports(library)  # cached libraries too: they may predate the check
    return BuiltKernel(library, entry, source.launch_bounds(text, entry))


def prebuild(message: dict[str, Any]) -> None:
    """Build the library of a `load` request in the parent, before the worker sees it: the
    compilers run in their own sandboxes, and the cache is written only by this process, never
    by a worker that has loaded some kernel's code. BackendError when it cannot be built (the
    worker would report the same)."""
    source_path = message.get("source_path")
    if not source_path:
        return  # the worker says what is missing
    compiler = toolchain.find_toolchain()
    if compiler is None:
        raise BackendError("unsupported", toolchain.missing_compiler() or "no host compiler")
    try:
        text = Path(source_path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BackendError("bad_request", f"cannot read the kernel {source_path}: {error}") \
            from None
    toolchain.runtime_library(compiler)
    build(compiler, text, source_path, message.get("source_dir"),
          [str(o) for o in message.get("options", [])], str(message.get("entry", "")),
          record=True)
