"""Keeping held-out tasks out of training data: a candidate is refused when it names a held-out
task, carries its description (or nearly), or its kernel is a near copy of a held-out task's
kernel once comments, spacing and the names of variables are set aside (alike in shape and
computing with the same calls, operators and numbers). KernelBench's problems are kept out the
same way, so that it stays a fair measure (app.assist.teach.kbguard)."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from app.assist.tasks.suite import HeldOut, Suite, Task
from app.assist.teach.kbguard import KernelBenchGuard
from app.base.paths import ROOT

# Kernels written for the tasks (by the test suite); held-out ones are compared against.
TASK_KERNELS = ROOT / "tests" / "assist" / "task_kernels"
# At or above this similarity (difflib's ratio over normalized tokens) a kernel is a near copy.
NEAR = 0.9
_NAME = re.compile(r"v\d+")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TOKENS = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d*)?f?|\S")
# Names kept as they are: they say what a kernel does, not what its author called things.
KEEP = frozenset("""extern C __global__ __device__ __shared__ __restrict__ const void int float
double unsigned long size_t char short bool if else for while return auto __half __nv_bfloat16
blockIdx threadIdx blockDim gridDim INFINITY INT_MIN INT_MAX include""".split())


def normalize(source: str) -> list[str]:
    """A kernel's tokens without comments, each name (the entry's included) replaced by its
    order of first use; calls, members and the words in KEEP stay."""
    tokens = _TOKENS.findall(_COMMENTS.sub(" ", source))
    names: dict[str, str] = {}
    out = []
    for index, token in enumerate(tokens):
        called = index + 1 < len(tokens) and tokens[index + 1] == "("
        before = tokens[index - 1] if index else ""
        # A member (blockIdx.x) and a call (expf) keep their names; the entry does not.
        member = before in (".", "->")
        if (token[0].isalpha() or token[0] == "_") and token not in KEEP and not member and (
                before == "void" or not called):
            token = names.setdefault(token, f"v{len(names)}")
        out.append(token)
    return out


def operations(tokens: list[str] | tuple[str, ...]) -> Counter[str]:
    """What a normalized kernel computes with: its calls, operators, numbers and types (names
    and brackets left out). Two kernels alike in shape but not in these compute different
    things: relu and tanh over one input, say."""
    return Counter(t for t in tokens if not _NAME.fullmatch(t) and t not in "()[]{};,")


def _words(text: str) -> str:
    """Text in lower case with single spaces."""
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class Guard:
    """What the held-out tasks look like: their traces and the normalized kernels known."""

    tasks: tuple[Task, ...]
    kernels: tuple[tuple[str, tuple[str, ...]], ...]
    heldout: HeldOut
    kernelbench: KernelBenchGuard = field(default_factory=KernelBenchGuard.shipped)

    @classmethod
    def of(cls, suite: Suite, kernels: Path = TASK_KERNELS) -> Guard:
        """The guard for a suite's held-out tasks (their kernels where a file is found) and
        KernelBench's problems."""
        held = tuple(t for t in suite.tasks if t.heldout)
        found = []
        for task in held:
            for path in (task.spec_path.parent / f"{task.name}.cu", kernels / f"{task.name}.cu"):
                if path.is_file():
                    found.append((task.name, tuple(normalize(path.read_text(encoding="utf-8")))))
        return cls(held, tuple(found), suite.heldout())

    def refuse(self, entry: str, description: str, kernel: str, spec_text: str = "",
               folder: Path | None = None) -> str:
        """Why this example may not be used ('' when it may): the held-out task or the
        KernelBench problem it copies."""
        return self._heldout(entry, description, kernel) or self.kernelbench.refuse(
            entry, description, spec_text, folder)

    def _heldout(self, entry: str, description: str, kernel: str) -> str:
        """The held-out task this example copies ('' when none)."""
        leaks = self.heldout.leaks(f"{entry} {description}")
        if leaks:
            return f"shows the held-out task {leaks[0]}"
        said = _words(description)
        for task in self.tasks:
            if difflib.SequenceMatcher(None, said, _words(task.description)).ratio() >= NEAR:
                return f"describes the held-out task {task.name}"
        tokens = normalize(kernel)
        for name, held in self.kernels:
            if operations(tokens) == operations(held) and difflib.SequenceMatcher(
                    None, tokens, held, autojunk=False).ratio() >= NEAR:
                return f"its kernel is a near copy of the held-out task {name}"
        return ""
