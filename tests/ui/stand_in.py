"""What the GUI tests' stand-in models share (a module of its own, importing nothing of the
tests: readme_shots.py runs outside pytest and uses it too)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from app.assist.model.answer import Answer


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


PROPOSED = """extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}
"""
ANSWER = f"""Here is a version with a grid-stride loop:

```cuda
{PROPOSED}```

Each thread starts at its global index and strides by the whole grid, so any grid size covers
all n elements; the loop condition `i < n` is the bounds check.
"""


class ScriptedSession(WordTokens):
    """A stand-in model: counts words as tokens, streams `text` in pieces from the model's
    thread, and records the prompt it was given."""

    def __init__(self, text: str, window: int) -> None:
        """Answer with `text`; `window` tokens of context."""
        self.text, self.window = text, window
        self.messages: list[dict[str, str]] = []

    def generate(self, messages: list[dict[str, str]], max_new_tokens: int,
                 on_token: Callable[[str], None], stop: threading.Event) -> Answer:
        """Stream the scripted text in a few pieces."""
        self.messages = messages
        for start in range(0, len(self.text), 80):
            on_token(self.text[start:start + 80])
            time.sleep(0.005)
        return Answer(self.text, "eos", 100, 60, 0.5, 0.1)
