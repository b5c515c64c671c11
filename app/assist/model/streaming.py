"""Streaming tokens out of transformers' generate, and stopping it on request.

Stop has two layers: a stopping criterion checked after every token (the clean path), and a
pre-hook on every decoder layer that aborts a long forward pass, so a Stop pressed during the
prefill of a long prompt does not wait for the whole prompt to be read.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

OnToken = Callable[[str], None]
# Decoding that ends in U+FFFD is an incomplete multi-byte character: wait for the next token.
_INCOMPLETE = "\ufffd"


class Interrupted(Exception):
    """Raised inside the model's forward pass when the stop event is set."""


class TokenStream:
    """A transformers streamer: decodes the generated ids and hands out new text as it arrives.

    generate() first puts the prompt ids, then one token per step, then calls end().
    """

    def __init__(self, tokenizer: Any, on_token: OnToken | None, started: float) -> None:
        """Stream through `tokenizer`, reporting to `on_token`; `started` is a perf_counter."""
        self.tokenizer = tokenizer
        self.on_token = on_token
        self.started = started
        self.ids: list[int] = []
        self.text = ""
        self.first_token_s: float | None = None
        self._prompt_seen = False

    def put(self, value: Any) -> None:
        """Take the prompt (ignored) or the next generated token ids."""
        if not self._prompt_seen:
            self._prompt_seen = True
            return
        if self.first_token_s is None:
            self.first_token_s = time.perf_counter() - self.started
        self.ids.extend(int(i) for i in value.reshape(-1).tolist())
        self._emit(final=False)

    def end(self) -> None:
        """Flush whatever text is still held back."""
        self._emit(final=True)

    def _emit(self, final: bool) -> None:
        """Send the text decoded since the last call."""
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if text.endswith(_INCOMPLETE) and not final:
            return
        delta = text[len(self.text):] if text.startswith(self.text) else text
        self.text = text
        if delta and self.on_token:
            self.on_token(delta)


class EventStopper:
    """A transformers stopping criterion that is true once `event` is set."""

    def __init__(self, event: threading.Event) -> None:
        """Watch `event`."""
        self.event = event

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        """One flag per sequence in the batch, all equal to the event."""
        import torch

        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool,
                          device=input_ids.device)


def capturing() -> bool:
    """Whether this thread's current CUDA stream is capturing a graph (False without CUDA)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return False
    return bool(torch.cuda.is_current_stream_capturing())


def _decoder_layers(model: Any) -> list[Any]:
    """The repeated blocks of a causal LM (their class names end in DecoderLayer or Block)."""
    names = ("DecoderLayer", "Block")
    layers = [m for m in model.modules() if type(m).__name__.endswith(names)]
    return layers or [model]


@contextlib.contextmanager
def interrupt_on(model: Any, event: threading.Event) -> Iterator[None]:
    """While active, every decoder layer raises Interrupted before running once `event` is set,
    except while a CUDA graph is being captured: a capture left half-way leaves torch's CUDA
    generator in capture mode, and every later random draw on the GPU fails ("Offset increment
    outside graph capture"). A capture takes milliseconds; Stop is seen right after it."""

    def check(module: Any, args: Any) -> None:
        """The pre-hook: abort the forward pass when Stop was asked for."""
        if event.is_set() and not capturing():
            raise Interrupted

    handles = [layer.register_forward_pre_hook(check) for layer in _decoder_layers(model)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
