"""The token budget of a prompt: count it, fit it to the model's context, and say what was cut.

Parts are cut lowest priority first: a part is first trimmed (by lines, keeping its start, or its
start and end), then dropped if that is not enough. Parts of priority MUST_KEEP are never cut;
when they alone do not fit, PromptTooLong says so. Every cut is recorded in the report, so no
prompt is ever shortened silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from app.assist.errors import PromptTooLong

Message = dict[str, str]
MUST_KEEP = 100
# Below this, a trimmed part says too little to be worth its marker: drop it instead.
MIN_KEPT_TOKENS = 48
# Tokens do not add up exactly across joins and fences: trim a little more than the excess, so
# one trim is enough and a part is not dropped for a few tokens.
SLACK_TOKENS = 16


class TokenCounter(Protocol):
    """What the budget needs from a tokenizer (ModelSession provides it)."""

    def count_tokens(self, text: str) -> int:
        """Tokens in plain text."""
        ...

    def count_messages(self, messages: list[Message]) -> int:
        """Tokens of a whole chat prompt, markup included."""
        ...

    def context_window(self) -> int:
        """Tokens the model can attend to."""
        ...


@dataclass
class Part:
    """One piece of a prompt that may be cut. `keep` is 'head', 'ends' or 'whole'."""

    name: str
    text: str
    priority: int
    keep: str = "head"
    state: str = "full"


@dataclass(frozen=True)
class Cut:
    """One thing removed from a prompt to make it fit."""

    part: str
    tokens_before: int
    tokens_after: int

    def __str__(self) -> str:
        """'source: trimmed from 3000 to 1200 tokens' or 'skill x: dropped (412 tokens)'."""
        if self.tokens_after == 0:
            return f"{self.part}: dropped ({self.tokens_before} tokens)"
        return f"{self.part}: trimmed from {self.tokens_before} to {self.tokens_after} tokens"


@dataclass(frozen=True)
class BudgetReport:
    """How a prompt fits the model's context."""

    window: int
    reserved_for_answer: int
    prompt_tokens: int
    parts: dict[str, int] = field(default_factory=dict)
    cuts: tuple[Cut, ...] = ()

    @property
    def limit(self) -> int:
        """Tokens the prompt may use."""
        return self.window - self.reserved_for_answer

    @property
    def cut(self) -> bool:
        """Whether anything was removed."""
        return bool(self.cuts)

    def summary(self) -> str:
        """One line for a status bar."""
        return (f"prompt {self.prompt_tokens} of {self.limit} tokens (context "
                f"{self.window}, {self.reserved_for_answer} kept for the answer)")

    def warnings(self) -> list[str]:
        """One line per cut, for the user to read before trusting the answer."""
        return [f"cut to fit the model's context: {c}" for c in self.cuts]

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready description."""
        return {"window": self.window, "reserved_for_answer": self.reserved_for_answer,
                "prompt_tokens": self.prompt_tokens, "limit": self.limit, "parts": self.parts,
                "cuts": [str(c) for c in self.cuts]}


def _marker(count: int) -> str:
    """The line that replaces cut lines, so the model (and the user) knows text is missing."""
    return f"[... {count} lines cut by Kernel Studio to fit the model's context ...]"


def _keep_lines(lines: list[str], kept: int, keep: str) -> str:
    """`kept` lines of `lines`, from the start or from both ends, with a marker for the rest."""
    cut = len(lines) - kept
    if cut <= 0:
        return "\n".join(lines)
    if keep == "ends":
        head = (kept + 1) // 2
        tail = lines[len(lines) - (kept - head):] if kept - head else []
        return "\n".join(lines[:head] + [_marker(cut)] + tail)
    return "\n".join(lines[:kept] + [_marker(cut)])


def trim_text(text: str, target: int, count: Callable[[str], int], keep: str) -> str:
    """The longest line-wise shortening of `text` that has at most `target` tokens ('' if none)."""
    lines = text.splitlines()
    if len(lines) == 1:  # one long line: cut on characters instead
        lines = [text[i:i + 80] for i in range(0, len(text), 80)]
    low, high = 0, len(lines) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if count(_keep_lines(lines, middle, keep)) <= target:
            low = middle
        else:
            high = middle - 1
    return _keep_lines(lines, low, keep) if low > 0 else ""


def _victim(parts: list[Part]) -> Part | None:
    """The next part to cut: the lowest priority one not yet dropped."""
    candidates = [p for p in parts if p.priority < MUST_KEEP and p.state != "dropped" and p.text]
    return min(candidates, key=lambda p: p.priority) if candidates else None


def _shorten(part: Part, excess: int, counter: TokenCounter) -> Cut:
    """Trim or drop one part by about `excess` tokens, and record it."""
    before = counter.count_tokens(part.text)
    target = before - excess - SLACK_TOKENS
    if part.keep != "whole" and part.state == "full" and target >= MIN_KEPT_TOKENS:
        part.text = trim_text(part.text, target, counter.count_tokens, part.keep)
        part.state = "trimmed" if part.text else "dropped"
    else:
        part.text, part.state = "", "dropped"
    return Cut(part.name, before, counter.count_tokens(part.text) if part.text else 0)


def _merge(cuts: list[Cut]) -> tuple[Cut, ...]:
    """One cut per part, from its original size to its final one."""
    first: dict[str, Cut] = {}
    for cut in cuts:
        origin = first.get(cut.part, cut)
        first[cut.part] = Cut(cut.part, origin.tokens_before, cut.tokens_after)
    return tuple(first.values())


def fit(parts: list[Part], render: Callable[[list[Part]], list[Message]],
        counter: TokenCounter, reserved_for_answer: int) -> tuple[list[Message], BudgetReport]:
    """Cut `parts` until the rendered messages fit the context; the messages and the report."""
    window = counter.context_window()
    limit = window - reserved_for_answer
    messages = render(parts)
    total = counter.count_messages(messages)
    cuts: list[Cut] = []
    while total > limit:
        victim = _victim(parts)
        if victim is None:
            raise PromptTooLong(
                f"the prompt needs {total} tokens but only {limit} fit (context {window}, "
                f"{reserved_for_answer} kept for the answer), even with everything optional cut",
                "shorten the question or the description, or ask for fewer new tokens")
        cuts.append(_shorten(victim, total - limit, counter))
        messages = render(parts)
        total = counter.count_messages(messages)
    sizes = {p.name: counter.count_tokens(p.text) for p in parts if p.text}
    return messages, BudgetReport(window, reserved_for_answer, total, sizes, _merge(cuts))
