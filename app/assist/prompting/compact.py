"""The compact propose prompt that adapters are taught with, and the one form of kernel they
learn to answer in.

A small model taught on one short prompt does far better when it is asked in that same prompt
than in the long one of the untaught model (skills, examples, the reference): so training and
proposing with an adapter share these functions, and the adapter's card names the style.
"""

from __future__ import annotations

import re

from app.assist.model.adapters import CARD_KEY as CARD_KEY
from app.assist.prompting.candidates import answer_prefix
from app.assist.prompting.per_element import hints
from app.spec.model import Spec

STYLE = "compact-v1"
# The same prompt, and in later rounds the failed answer with the verifier's feedback after it
# (retry_messages): the style of an adapter that `teach rl` taught over feedback rounds.
FEEDBACK_STYLE = "compact-v1-feedback"
# The tables that say what to write: the entry, the arguments and the launch. Checks, the
# reference and the benchmark stay out: the model writes the same kernel without them.
KEPT_TABLES = ("[kernel]", "[[arg]]", "[launch]")
ASK = "Write the CUDA kernel for this task.\n{description}\nSpec:\n```toml\n{spec}\n```"
RETRY = ("The verifier rejected that kernel:\n{feedback}\nWrite the whole kernel again, "
         "fixed.")
_HEADER = re.compile(r"^\s*\[")
_SIGNATURE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+\w+\s*\(')
_ALLOWED_BEFORE = re.compile(r"#include <cuda_(fp16|bf16)\.h>|//.*|")


def spec_core(text: str) -> str:
    """The spec's [kernel], [[arg]] and [launch] tables without comments or blank lines."""
    kept, keep = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if _HEADER.match(line):
            keep = stripped in KEPT_TABLES
        if keep and stripped and not stripped.startswith("#"):
            kept.append(stripped)
    return "\n".join(kept)


def is_compact(style: str) -> bool:
    """Whether a prompt style is one of the compact ones (an adapter taught here)."""
    return style in (STYLE, FEEDBACK_STYLE)


def messages(description: str, spec_text: str) -> list[dict[str, str]]:
    """The compact propose prompt as chat messages (no system turn: the model's own default)."""
    told = "\n".join([description.strip(), *hints(description)])
    ask = ASK.format(description=told, spec=spec_core(spec_text))
    return [{"role": "user", "content": ask}]


def retry_messages(description: str, spec_text: str, answer_text: str,
                   feedback: str) -> list[dict[str, str]]:
    """A later round's prompt in the compact style: the first prompt, the answer that failed and
    what the verifier said of it (the refine loop's feedback), then the ask to write it again."""
    return [*messages(description, spec_text), {"role": "assistant", "content": answer_text},
            {"role": "user", "content": RETRY.format(feedback=feedback.strip())}]


def answer(kernel: str) -> str:
    """The assistant's turn for a kernel in canonical form."""
    return f"```cuda\n{kernel.rstrip()}\n```"


def opening_length(answer_text: str) -> int:
    """Characters of an answer up to and including its kernel's opening brace line: the part a
    proposal is given (candidates.answer_prefix); 0 when there is none."""
    brace = answer_text.find("\n{\n")
    return brace + 3 if brace >= 0 else 0


def _body(kernel: str) -> tuple[str, str] | None:
    """(what precedes the kernel's signature, the body between its braces), or None when the
    source is not one kernel function."""
    found = _SIGNATURE.search(kernel)
    if found is None:
        return None
    opening = kernel.find("{", found.end())
    closing = kernel.rstrip().rfind("}")
    if opening < 0 or closing <= opening or kernel[closing + 1:].strip():
        return None
    return kernel[:found.start()], kernel[opening + 1:closing].strip("\n")


def canonical_kernel(spec: Spec, kernel: str) -> str | None:
    """The kernel rewritten to start exactly as a proposal's answer does (the headers the types
    need, then the signature the spec implies), or None when it cannot be: helpers or other
    headers before the kernel. The caller verifies the result: it is a different file."""
    parts = _body(kernel)
    if parts is None:
        return None
    before, body = parts
    if not all(_ALLOWED_BEFORE.fullmatch(line.strip()) for line in before.splitlines()):
        return None
    prefix = answer_prefix(spec).removeprefix("```cuda\n")
    return f"{prefix}{body}\n}}\n"
