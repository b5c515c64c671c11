"""What the GUI tests' stand-in models share (a module of its own, importing nothing of the
tests: readme_shots.py runs outside pytest and imports a test module that uses it)."""

from __future__ import annotations


class WordTokens:
    """What the prompt builder asks of a stand-in model: words as tokens, the whole prompt's
    words, and a context of `window` tokens (generous unless a test sets it)."""

    window = 100_000

    def count_tokens(self, text: str) -> int:
        """Words, as a rough tokenizer."""
        return len(text.split())

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        """Tokens of the whole prompt."""
        return sum(self.count_tokens(m["content"]) for m in messages)

    def context_window(self) -> int:
        """The context this stand-in pretends to have."""
        return self.window
