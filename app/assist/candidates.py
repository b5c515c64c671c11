"""Propose: ask the model for K candidate kernels for a spec, write each beside a copy of the
spec, and verify each with the same engine as any other kernel. Nothing here runs a candidate
unless asked to verify (the CLI's propose verifies by default; --no-verify only writes)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.assist.answer import Answer
from app.assist.prompts import Prompt, PromptContext, build_prompt
from app.assist.session import GenerationOptions, ModelSession
from app.dtypes import lookup
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.fsutil import atomic_write_text
from app.spec import Spec

# The first candidate is greedy (the model's single best guess); the others are sampled at this
# temperature, each with its own seed, so K candidates differ.
SAMPLING_TEMPERATURE = 0.8


@dataclass(frozen=True)
class Candidate:
    """One proposed kernel and its verdict.

    status is a verdict status ('passed', 'mismatch', 'compile_error', 'unverified', ...), or
    'no_code' when the answer held no kernel, 'not_verified' when verification was not asked
    for, 'stopped' when the user stopped the answer."""

    index: int
    folder: Path
    spec_path: Path | None
    answer: Answer
    status: str
    message: str

    @property
    def passed(self) -> bool:
        """Whether this candidate passed verification."""
        return self.status == "passed"

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready description."""
        return {"index": self.index, "folder": str(self.folder),
                "spec": str(self.spec_path) if self.spec_path else None, "status": self.status,
                "message": self.message, "new_tokens": self.answer.new_tokens,
                "seconds": round(self.answer.seconds, 3)}


def propose_context(spec: Spec, description: str, include_source: bool = False) -> PromptContext:
    """The spec's text and reference, the user's description, and (when asked) the current
    source, which the model may otherwise just copy."""
    def read(path: Path | None) -> str:
        """A file's text, or '' when it is missing."""
        try:
            return path.read_text(encoding="utf-8") if path else ""
        except (OSError, UnicodeDecodeError):
            return ""

    return PromptContext(description=description, spec=read(spec.path),
                         reference=read(spec.reference_path),
                         source=read(spec.source_path) if include_source else "")


def kernel_signature(spec: Spec) -> str:
    """The kernel's declaration as the spec implies it: entry name, argument order and types
    (inputs as const pointers, outputs as pointers, scalars by value)."""
    params = []
    for arg in spec.args:
        c_type = lookup(arg.dtype).c_type
        if arg.kind == "scalar":
            params.append(f"{c_type} {arg.name}")
        elif arg.kind == "in":
            params.append(f"const {c_type}* __restrict__ {arg.name}")
        else:
            params.append(f"{c_type}* __restrict__ {arg.name}")
    return f'extern "C" __global__ void {spec.entry}({", ".join(params)})'


def answer_prefix(spec: Spec) -> str:
    """How a proposal's answer starts: an open CUDA block with the headers the types need and
    the kernel's signature, so that even a small model keeps the launch contract."""
    headers = {"float16": "#include <cuda_fp16.h>\n", "bfloat16": "#include <cuda_bf16.h>\n"}
    includes = "".join(sorted({headers[a.dtype] for a in spec.args if a.dtype in headers}))
    return f"```cuda\n{includes}{kernel_signature(spec)}\n{{\n"


def write_candidate(spec: Spec, code: str, folder: Path, answer_text: str) -> Path:
    """A self-contained folder: the spec file unchanged, its reference, the candidate source
    under the spec's source name, and the full answer; returns the candidate's spec path."""
    assert spec.path is not None, "a spec loaded from a file knows its path"
    folder.mkdir(parents=True, exist_ok=True)
    spec_copy = folder / spec.path.name
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


def _options(index: int) -> GenerationOptions:
    """Greedy for the first candidate, seeded sampling for the others."""
    if index == 0:
        return GenerationOptions()
    return GenerationOptions(temperature=SAMPLING_TEMPERATURE, seed=index)


@dataclass
class ProposeRun:
    """The settings of one propose run."""

    session: ModelSession
    spec: Spec
    out_dir: Path
    count: int = 1
    max_new_tokens: int = 512
    verify: bool = True
    backend: str = "auto"
    on_token: Callable[[str], None] | None = None
    on_candidate: Callable[[Candidate], None] | None = None
    stop: threading.Event | None = None
    include_source: bool = False


def _one(run: ProposeRun, prompt: Prompt, index: int, engine: Any) -> Candidate:
    """Generate, write and (when asked) verify candidate number `index`."""
    folder = run.out_dir / f"candidate-{index + 1}"
    answer = run.session.generate(prompt.messages, run.max_new_tokens, run.on_token, run.stop,
                                  _options(index), answer_prefix(run.spec))
    code = answer.parsed.code
    if answer.stopped:
        return Candidate(index + 1, folder, None, answer, "stopped", "stopped by the user")
    if not code or "__global__" not in code:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / "answer.md", answer.text)
        return Candidate(index + 1, folder, None, answer, "no_code",
                         "the answer held no CUDA kernel (__global__ function)")
    spec_path = write_candidate(run.spec, code, folder, answer.text)
    if not run.verify:
        return Candidate(index + 1, folder, spec_path, answer, "not_verified",
                         "written; verification was not asked for")
    status, message = verify_candidate(spec_path, run.backend, engine, run.stop)
    return Candidate(index + 1, folder, spec_path, answer, status, message)


def propose_prompt(run: ProposeRun, description: str) -> Prompt:
    """The one prompt all candidates answer (its budget report says what was cut)."""
    context = propose_context(run.spec, description, run.include_source)
    return build_prompt("propose", context, run.session, run.max_new_tokens)


def propose(run: ProposeRun, prompt: Prompt) -> list[Candidate]:
    """Make run.count candidates for `prompt`, stopping early on Stop."""
    candidates: list[Candidate] = []
    engine = _engine() if run.verify else None
    try:
        for index in range(run.count):
            candidate = _one(run, prompt, index, engine)
            candidates.append(candidate)
            if run.on_candidate:
                run.on_candidate(candidate)
            if candidate.status == "stopped":
                break
    finally:
        if engine is not None:
            engine.close()
    return candidates


def _engine() -> Any:
    """One verification engine (worker processes) shared by all candidates."""
    return Engine()
