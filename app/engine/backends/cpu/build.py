"""Building one kernel for the CPU backend: rewrite, wrap with the emulation header and a
launcher, preprocess, refuse unsupported constructs, compile (or reuse the cached library).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from app.engine.backends.base import BackendError
from app.engine.backends.cpu import source, toolchain
from app.engine.backends.cpu.toolchain import Toolchain

# Files whose lines are never the user's, when scanning preprocessed code.
SYSTEM_PREFIXES = ("/usr/", "/lib/", "/opt/", "/Library/", "/Applications/")

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
                     kernel_studio_tls_anchor, {name}, error, error_size);
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


def wrapper(text: str, source_path: str, entry: str) -> str:
    """The translation unit handed to the host compiler: the emulation header, the rewritten
    source (its lines numbered as in the user's file), then the launcher for `entry`."""
    try:
        body = source.rewrite(text)
    except source.SourceError as error:
        raise BackendError("unsupported", str(error)) from None
    if not body.endswith("\n"):
        body += "\n"
    return (f'#include "{toolchain.HEADER}"\n'
            f"#line 1 {_c_string(source_path)}\n{body}"
            f"#line 1 {_c_string(toolchain.LAUNCHER_FILE)}\n"
            + LAUNCHER.format(entry=entry, name=_c_string(entry)))


def _own_files() -> tuple[str, ...]:
    """Paths the preprocessor reports for the emulation's own headers."""
    return tuple(str(p) for p in toolchain.NATIVE.rglob("*.h")) + (toolchain.LAUNCHER_FILE,)


def refuse_unsupported(preprocessed: str) -> None:
    """Raise "unsupported" naming the first construct the emulation cannot run."""
    own = _own_files()
    lines = source.user_lines(preprocessed, own, SYSTEM_PREFIXES + (str(toolchain.NATIVE),))
    findings = source.scan(lines)
    if findings:
        extra = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise BackendError("unsupported", findings[0].describe() + extra)


def build(compiler: Toolchain, text: str, source_path: str, source_dir: str | None,
          options: list[str], entry: str) -> BuiltKernel:
    """The kernel's library, built or taken from the cache; BackendError when it cannot be."""
    flags = toolchain.host_options(options, source_dir)
    preprocessed, problem = toolchain.preprocess(compiler, wrapper(text, source_path, entry),
                                                 source_dir, flags)
    if problem:
        raise toolchain.explain_failure(problem, entry)
    refuse_unsupported(preprocessed)
    library, problem = toolchain.kernel_library(compiler, preprocessed, flags)
    if problem:
        raise toolchain.explain_failure(problem, entry)
    return BuiltKernel(library, entry, source.launch_bounds(text, entry))
