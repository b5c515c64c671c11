"""What the model said: the generation result, and its parse into code and explanation."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


class FinishReason(StrEnum):
    """Why a generation ended: the model's end-of-sequence token, the token limit, the user's
    Stop, or the close of the kernel that the answer's prefix opened (app.assist.model.batch)."""

    EOS = "eos"
    LENGTH = "length"
    STOPPED = "stopped"
    KERNEL_END = "kernel_end"


FINISH_REASONS = tuple(FinishReason)
_CODE_START = re.compile(r"^(#include|#define|#pragma|extern\b|template\b|__global__|__device__|"
                         r"typedef\b|struct\b|static\b|namespace\b)", re.MULTILINE)
CUDA_LANGUAGES = ("cuda", "cu", "cpp", "c++", "cxx", "c", "")


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer split into its code (None when it has none) and the words around it.

    `complete` is False when the code block was still open where the text ended (the answer was
    stopped or ran out of tokens mid-code).
    """

    code: str | None
    language: str
    explanation: str
    complete: bool = True


@dataclass(frozen=True)
class _Block:
    """One fenced block found in the text."""

    language: str
    code: str
    start: int
    end: int
    closed: bool


def _blocks(text: str) -> list[_Block]:
    """Every fenced code block, in order; a block still open at the end counts, unclosed."""
    found: list[_Block] = []
    lines = text.splitlines(keepends=True)
    offset, opened, language = 0, -1, ""
    body: list[str] = []
    for line in lines:
        fence = line.strip().startswith("```")
        if fence and opened < 0:
            opened, language, body = offset, line.strip()[3:].strip().split(" ")[0].lower(), []
        elif fence:
            found.append(_Block(language, "".join(body).rstrip("\n"), opened,
                                offset + len(line), True))
            opened = -1
        elif opened >= 0:
            body.append(line)
        offset += len(line)
    if opened >= 0:
        found.append(_Block(language, "".join(body).rstrip("\n"), opened, len(text), False))
    return found


def _best(blocks: list[_Block]) -> _Block | None:
    """The kernel block: one with __global__ if any, the longest CUDA/C++ one otherwise."""
    kernels = [b for b in blocks if "__global__" in b.code]
    cuda = [b for b in blocks if b.language in CUDA_LANGUAGES]
    pool = kernels or cuda
    return max(pool, key=lambda b: len(b.code)) if pool else None


def _unfenced(text: str) -> ParsedAnswer:
    """An answer without fences: code from the first line that looks like C++, when a kernel
    follows; everything is explanation otherwise."""
    match = _CODE_START.search(text)
    if "__global__" not in text or not match:
        return ParsedAnswer(None, "", text.strip())
    return ParsedAnswer(text[match.start():].strip() + "\n", "cuda",
                        text[:match.start()].strip())


def parse_answer(text: str) -> ParsedAnswer:
    """Split a model's answer into code and explanation."""
    block = _best(_blocks(text))
    if block is None:
        return _unfenced(text)
    explanation = (text[:block.start] + text[block.end:]).strip()
    return ParsedAnswer(block.code + "\n", block.language or "cuda", explanation, block.closed)


@dataclass(frozen=True)
class Answer:
    """One generation: the text, why it ended, and how long it took."""

    text: str
    finish_reason: FinishReason
    prompt_tokens: int
    new_tokens: int
    seconds: float
    first_token_s: float | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def stopped(self) -> bool:
        """Whether the user stopped this answer."""
        return self.finish_reason == FinishReason.STOPPED

    @property
    def tokens_per_s(self) -> float:
        """Generated tokens per second after the first (decode speed, prefill excluded)."""
        if self.first_token_s is None or self.new_tokens < 2:
            return 0.0
        decode = self.seconds - self.first_token_s
        return (self.new_tokens - 1) / decode if decode > 0 else 0.0

    @property
    def parsed(self) -> ParsedAnswer:
        """The text split into code and explanation."""
        return parse_answer(self.text)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready description (the CLI's --json)."""
        parsed = self.parsed
        return {"text": self.text, "finish_reason": self.finish_reason,
                "prompt_tokens": self.prompt_tokens, "new_tokens": self.new_tokens,
                "seconds": round(self.seconds, 4),
                "first_token_s": None if self.first_token_s is None
                else round(self.first_token_s, 4),
                "tokens_per_s": round(self.tokens_per_s, 2), "warnings": list(self.warnings),
                "code": parsed.code, "explanation": parsed.explanation,
                "code_complete": parsed.complete}
