"""Candidates: what a proposal's prompt carries, how its answer starts (the kernel's signature, so
even a small model keeps the launch contract), and the self-contained folder each candidate is
written to, beside a copy of the spec and its reference. The refine loop (app.assist.refine.loop)
writes every attempt this way; nothing here runs a candidate unless asked to verify."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from app.assist.prompting.prompts import PromptContext
from app.base.fsutil import atomic_write_text
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file
from app.isolation.trust import kernel_files
from app.spec.dtypes import lookup
from app.spec.model import Spec


def propose_context(spec: Spec, description: str, include_source: bool = False) -> PromptContext:
    """The spec's text (as it was read) and reference, the user's description, and (when
    asked) the current source, which the model may otherwise just copy."""
    def read(path: Path | None) -> str:
        """A file's text, or '' when it is missing."""
        try:
            return path.read_text(encoding="utf-8") if path else ""
        except (OSError, UnicodeDecodeError):
            return ""

    return PromptContext(description=description, spec=spec.text or read(spec.path),
                         reference=read(spec.reference_path),
                         source=read(spec.source_path) if include_source else "")


class ArgLike(Protocol):
    """What a signature needs of an argument (a spec's, or one the teach generator makes)."""

    @property
    def name(self) -> str:
        """The parameter's name."""
        ...

    @property
    def kind(self) -> str:
        """in, out, inout or scalar."""
        ...

    @property
    def dtype(self) -> str:
        """The element type's name."""
        ...


def signature(entry: str, args: Iterable[ArgLike]) -> str:
    """A kernel's declaration from its entry name and arguments in order: inputs as const
    pointers, outputs as pointers, scalars by value."""
    params = []
    for arg in args:
        c_type = lookup(arg.dtype).c_type
        if arg.kind == "scalar":
            params.append(f"{c_type} {arg.name}")
        elif arg.kind == "in":
            params.append(f"const {c_type}* __restrict__ {arg.name}")
        else:
            params.append(f"{c_type}* __restrict__ {arg.name}")
    return f'extern "C" __global__ void {entry}({", ".join(params)})'


def kernel_signature(spec: Spec) -> str:
    """The kernel's declaration as the spec implies it: entry name, argument order and types."""
    return signature(spec.entry, spec.args)


def answer_prefix(spec: Spec) -> str:
    """How a proposal's answer starts: an open CUDA block with the headers the types need and
    the kernel's signature, so that even a small model keeps the launch contract."""
    headers = {"float16": "#include <cuda_fp16.h>\n", "bfloat16": "#include <cuda_bf16.h>\n"}
    includes = "".join(sorted({headers[a.dtype] for a in spec.args if a.dtype in headers}))
    return f"```cuda\n{includes}{kernel_signature(spec)}\n{{\n"


# Run folders that propose wrote beside specs before they moved to the data folder.
RUNS_FOLDER = "proposals"


def _task_files(spec: Spec, folder: Path) -> list[Path]:
    """The files of the spec's folder a candidate's folder needs beside its kernel: the spec,
    the reference and whatever they read (a KernelBench problem.py, headers, data files), as
    trust counts a kernel's files; never the kernel itself, nor the spec (written from the text
    already read), nor earlier run folders."""
    base = spec.base_dir.resolve()
    skip = {spec.source_path.resolve(), Path(spec.path or "").resolve()}
    found = []
    for path in kernel_files(base):
        relative = path.relative_to(base)
        if path in skip or relative.parts[0] == RUNS_FOLDER or path.is_relative_to(folder):
            continue
        found.append(relative)
    return found


def write_candidate(spec: Spec, code: str, folder: Path, answer_text: str) -> Path:
    """A self-contained folder: the spec's folder as it is (spec, reference and every file they
    read), the candidate source under the spec's source name, and the full answer; returns the
    candidate's spec path."""
    assert spec.path is not None, "a spec loaded from a file knows its path"
    folder.mkdir(parents=True, exist_ok=True)
    base = spec.base_dir.resolve()
    for relative in _task_files(spec, folder.resolve()):
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base / relative, folder / relative)
    spec_copy = folder / spec.path.name
    if spec.text:  # the text the spec was parsed from: the file unchanged, not read again
        spec_copy.write_bytes(spec.text.encode("utf-8"))
    else:
        shutil.copyfile(spec.path, spec_copy)
    reference = folder / spec.reference
    reference.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(spec.reference_path, reference)
    source = folder / spec.source
    source.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(source, code)
    atomic_write_text(folder / "answer.md", answer_text)
    return spec_copy


def verify_candidate(spec_path: Path, backend: str, engine: Any,
                     cancel: threading.Event | None) -> tuple[str, str]:
    """(status, message) from the verification engine."""
    verdict = verify_file(spec_path, VerifyOptions(backend=backend), engine, cancel)
    return verdict.status, verdict.message


