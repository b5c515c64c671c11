"""Decoding with a static KV cache and, on CUDA, one captured CUDA graph per decode step.

Why: at batch 1 a 7B model's decode step is a few hundred small kernel launches, and in eager
mode the Python that issues them (and bitsandbytes' per-matmul dispatch in NF4) takes longer
than the GPU needs to read the weights. A static cache keeps every tensor at a fixed address,
so one step can be captured once as a CUDA graph and replayed with a single launch.

How: the cache is transformers' StaticCache; the attention mask is built here as a 4D additive
mask (transformers passes a 4D mask through untouched), so no mask code of transformers runs
per step and nothing in the step reads a value back to the host. The prompt is read in chunks
(Stop is checked between chunks and, through the layer hooks, between layers); each decode step
replays the graph (or runs eagerly where capture failed, with a note saying why) and Stop is
checked between steps. Token choice mirrors generate()'s greedy path: float32 scores, the
repetition penalty, min_new_tokens, then any extra processor (the batch's seeded sampler) and
argmax, so greedy output matches the eager generate() path token for token.
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.assist.model.streaming import Interrupted


class DecodeMode(StrEnum):
    """How answers are decoded: graph = static cache + CUDA graph (CUDA only, else static);
    static = static cache, eager steps; generate = transformers' generate() as before; auto =
    graph on CUDA, generate elsewhere (the CPU path is measured and tested as it is)."""

    AUTO = "auto"
    GRAPH = "graph"
    STATIC = "static"
    GENERATE = "generate"


MODES = tuple(DecodeMode)
# Prompt chunk on CUDA: a 2.4k-token prompt in one pass; Stop still lands between layers.
CUDA_PREFILL_CHUNK = 2048
# Cache lengths are rounded up to this, so that answers of similar length reuse one cache and
# its captured graph instead of capturing again.
LENGTH_STEP = 1024

# (sequences so far, float32 scores) -> new scores; transformers' LogitsProcessor protocol.
Processor = Callable[[Any, Any], Any]
# (sequences so far, scores) -> per-row done flags; transformers' StoppingCriteria protocol.
Criterion = Callable[..., Any]


@dataclass
class Choice:
    """How to choose each next token: generate()'s greedy path and what it applies first."""

    repetition_penalty: float = 1.0
    min_new_tokens: int = 0
    eos_ids: tuple[int, ...] = ()
    pad_id: int = 0
    extra: Sequence[Processor] = ()


def resolve_mode(requested: str | None, device: str) -> DecodeMode:
    """The mode to use on `device` ('cuda' or 'cpu') for a requested one (None means auto)."""
    text = (requested or DecodeMode.AUTO).strip().lower()
    if text not in MODES:
        raise ValueError(f"unknown decode mode {text!r}: use one of {', '.join(MODES)}")
    mode = DecodeMode(text)
    if mode == DecodeMode.AUTO:
        return DecodeMode.GRAPH if device == "cuda" else DecodeMode.GENERATE
    return DecodeMode.STATIC if mode == DecodeMode.GRAPH and device != "cuda" else mode


def say(message: str) -> None:
    """A note on stderr (the fallbacks must be visible in a benchmark's log)."""
    print(f"fastdecode: {message}", file=sys.stderr, flush=True)


def first_line(error: BaseException) -> str:
    """The first line of an error's message (CUDA errors can run to many lines)."""
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else "no message"


def _keyword(model: Any) -> tuple[str, bool]:
    """The cache's keyword of the model's forward ('cache' or 'past_key_values') and whether
    the forward takes cache_position (older transformers index the static cache with it)."""
    parameters = inspect.signature(model.forward).parameters
    return ("cache" if "cache" in parameters else "past_key_values",
            "cache_position" in parameters)


def _dtype(model: Any) -> Any:
    """The activations' dtype (the embeddings'; a 4-bit model's packed weights are uint8)."""
    return model.get_input_embeddings().weight.dtype


def attention_kernels(device_type: str) -> Any:
    """The attention kernels a forward pass may use: on CUDA all but cuDNN's.

    Why: cuDNN attention builds a plan the first time it meets a new key length, about 0.4 s
    on an H200, and a decode step cannot be stopped inside it; with a new cache length that
    made the first step of an answer (and Stop during it) take that long. The other kernels
    start at once and decode no slower at these sizes (measured: 5.6 ms a step either way).
    """
    import contextlib

    if device_type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                        SDPBackend.MATH])


def cache_length(needed: int) -> int:
    """`needed` rounded up to the next multiple of LENGTH_STEP."""
    return -(-needed // LENGTH_STEP) * LENGTH_STEP


class FastDecoder:
    """A static cache with fixed step buffers (and on CUDA a captured step) for one model at
    one batch size and one cache length; reused by later answers that fit."""

    def __init__(self, model: Any, batch: int, length: int, use_graph: bool) -> None:
        """Allocate the step's buffers; the cache's tensors appear at the first prefill."""
        import torch
        from transformers import StaticCache

        self.model, self.batch, self.length = model, batch, length
        self.use_graph = use_graph and model.device.type == "cuda"
        self.cache_keyword, self.pass_position = _keyword(model)
        self.cache = StaticCache(config=model.config, max_cache_len=length)
        device = model.device
        self.ids = torch.zeros((batch, 1), dtype=torch.long, device=device)
        self.positions = torch.zeros((batch, 1), dtype=torch.long, device=device)
        self.column = torch.zeros((1,), dtype=torch.long, device=device)
        self.keys_allowed = torch.ones((batch, length), dtype=torch.bool, device=device)
        self.columns = torch.arange(length, device=device)
        self.masked = torch.tensor(torch.finfo(_dtype(model)).min, dtype=_dtype(model),
                                   device=device)
        self.zero = torch.zeros((), dtype=_dtype(model), device=device)
        self.graph: Any = None
        self.logits: Any = None
        self.eager_steps = 0
        self.note: str | None = None
        self.used = False

    def fits(self, model: Any, batch: int, needed: int) -> bool:
        """Whether this decoder can serve an answer of `needed` cache columns."""
        return model is self.model and batch == self.batch and needed <= self.length

    # -- the forward passes -----------------------------------------------------------------

    def _mask(self, columns: Any) -> Any:
        """The additive mask [batch, 1, queries, length] for queries at cache `columns`: a key
        is seen when it is not after the query and not padding; each query always sees itself,
        so that a padding row is never fully masked (that would give NaN)."""
        keys = self.columns.view(1, 1, -1)
        query = columns.view(1, -1, 1)
        allowed = (keys <= query) & (self.keys_allowed.unsqueeze(1) | (keys == query))
        return self.zero.where(allowed, self.masked).unsqueeze(1)

    def _forward(self, ids: Any, positions: Any, columns: Any) -> Any:
        """One forward pass over the cache: logits of the last position, [batch, vocab]."""
        extra: dict[str, Any] = {self.cache_keyword: self.cache}
        if self.pass_position:
            extra["cache_position"] = columns
        with attention_kernels(self.model.device.type):
            out = self.model(input_ids=ids, attention_mask=self._mask(columns),
                             position_ids=positions, use_cache=True, logits_to_keep=1, **extra)
        return out.logits[:, -1, :]

    def _step(self) -> Any:
        """The decode step over the fixed buffers (what the graph captures)."""
        return self._forward(self.ids, self.positions, self.column)

    # -- reading the prompt -----------------------------------------------------------------

    def prefill(self, ids: Any, mask: Any, stop: threading.Event, chunk: int,
                progress: Callable[[str, float], None]) -> Any:
        """Reset the cache and read the prompt in chunks; the last position's logits."""
        import torch

        width = int(ids.shape[1])
        if self.used:  # older transformers cannot reset a cache whose tensors do not exist yet
            self.cache.reset()  # type: ignore[no-untyped-call]
        self.used = True
        self.keys_allowed.fill_(True)
        self.keys_allowed[:, :width].copy_(mask.bool())
        positions = (mask.long().cumsum(-1) - 1).clamp(min=0)
        logits = None
        for start in range(0, width, chunk):
            if stop.is_set():
                raise Interrupted
            end = min(start + chunk, width)
            if width > chunk:
                progress(f"reading the prompt: {start} of {width} tokens", start / width)
            columns = torch.arange(start, end, device=ids.device)
            logits = self._forward(ids[:, start:end], positions[:, start:end], columns)
        self.positions.copy_(positions[:, -1:])
        self.column.fill_(width - 1)
        return logits

    # -- decoding ---------------------------------------------------------------------------

    def step(self, tokens: Any, stop: threading.Event) -> Any:
        """Feed one token per row at the next column; the logits that follow."""
        self.ids.copy_(tokens.view(-1, 1))
        self.positions.add_(1)
        self.column.add_(1)
        if self.graph is not None:
            self.graph.replay()
            return self.logits
        if self.use_graph and self.eager_steps >= 2 and self.note is None:
            self._capture(stop)
            if self.graph is not None:
                self.graph.replay()
                return self.logits
        self.eager_steps += 1
        return self._warm_step()

    def _warm_step(self) -> Any:
        """An eager step; on CUDA on a side stream, as warm-up before capture must be."""
        import torch

        if not self.use_graph or self.note is not None:
            return self._step()
        side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            logits = self._step()
        torch.cuda.current_stream().wait_stream(side)
        return logits

    def _capture(self, stop: threading.Event) -> None:
        """Capture the step as a CUDA graph; on failure note why and stay eager."""
        import torch

        if stop.is_set():  # not worth a capture; the layer hooks do not stop one under way
            raise Interrupted
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                self.logits = self._step()
        except Exception as error:  # noqa: BLE001 - any capture failure means eager steps
            self.logits = None
            release_generators()
            self.note = (f"CUDA graph capture failed ({type(error).__name__}: "
                         f"{first_line(error)}); decoding eagerly with the static cache")
            say(self.note)
            torch.cuda.synchronize()
            return
        self.graph = graph
        if stop.is_set():  # Stop came during the capture: seen now, before any replay
            raise Interrupted


def release_generators() -> None:
    """Take torch's CUDA generators out of capture mode after a capture that did not end
    cleanly (torch ends it only when the capture succeeds): each gets a copy of its own state,
    so later random draws on the GPU work and continue the same sequence."""
    import torch

    for generator in torch.cuda.default_generators:
        generator.graphsafe_set_state(generator.clone_state())


def choose_tokens(choice: Choice, sequences: Any, scores: Any, generated: int) -> Any:
    """The next token of every row: generate()'s greedy path over float32 scores."""
    from transformers import RepetitionPenaltyLogitsProcessor

    if choice.repetition_penalty != 1.0:
        scores = RepetitionPenaltyLogitsProcessor(choice.repetition_penalty)(sequences, scores)
    if generated < choice.min_new_tokens and choice.eos_ids:
        scores[:, list(choice.eos_ids)] = -float("inf")
    for processor in choice.extra:
        scores = processor(sequences, scores)
    return scores.argmax(dim=-1)


def run(decoder: FastDecoder, inputs: Any, limit: int, choice: Choice,
        criteria: Sequence[Criterion], stop: threading.Event, streamer: Any = None,
        chunk: int = CUDA_PREFILL_CHUNK,
        progress: Callable[[str, float], None] = lambda m, f: None) -> Any:
    """Generate up to `limit` tokens after the prompt; the sequences (prompt included), like
    generate(): rows that finished are padded, and the loop ends when every row is done.

    Each step's next forward pass is queued before the host reads the step's tokens, so that
    the host's share (the stream's text, the stopping criteria) runs while the GPU computes
    instead of between steps; the criteria and the stream see host copies of the tokens. A
    row's last step thus costs one forward pass that is thrown away."""
    import torch

    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    logits = decoder.prefill(ids, mask, stop, chunk, progress)
    prompt = ids.cpu()
    sequences, on_host = ids, prompt
    unfinished = torch.ones(ids.shape[0], dtype=torch.bool)
    gate = None  # unfinished on the device, once some row (not all) has finished
    eos = torch.tensor(list(choice.eos_ids) or [-1])
    for generated in range(limit):
        scores = logits.float()
        tokens = choose_tokens(choice, sequences, scores, generated)
        if gate is not None:
            tokens = torch.where(gate, tokens, torch.full_like(tokens, choice.pad_id))
        sequences = torch.cat([sequences, tokens[:, None]], dim=-1)
        arrived = copy_to_host(tokens)
        last = generated == limit - 1
        try:
            if not last:
                logits = decoder.step(tokens, stop)
        finally:  # this step's tokens are streamed even when the next step fails or stops
            on_host = torch.cat([on_host, arrived()[:, None]], dim=-1)
            if streamer is not None:
                if generated == 0:  # the prompt only with the first token: a failure before
                    streamer.put(prompt)  # it leaves the stream untouched for generate()
                streamer.put(on_host[:, -1])
        before = int(unfinished.sum())
        unfinished &= ~torch.isin(on_host[:, -1], eos)
        for criterion in criteria:
            unfinished &= ~criterion(on_host, scores).cpu()
        if last or not bool(unfinished.any()):
            break
        if int(unfinished.sum()) != before:
            gate = unfinished.to(ids.device)
    if streamer is not None:
        streamer.end()
    return sequences


def copy_to_host(tokens: Any) -> Callable[[], Any]:
    """Start copying `tokens` to the host; a function that waits for that copy only (not for
    GPU work queued after it) and returns the host tensor."""
    import torch

    if tokens.device.type != "cuda":
        return lambda: tokens.clone()
    pinned = torch.empty(tokens.shape, dtype=tokens.dtype, pin_memory=True)
    pinned.copy_(tokens, non_blocking=True)
    copied = torch.cuda.Event()  # type: ignore[no-untyped-call]
    copied.record()

    def wait() -> Any:
        copied.synchronize()
        return pinned

    return wait


class Decoders:
    """The fast decoder a session keeps between answers (one at a time: a new batch size or a
    longer answer replaces it), and the note of its last fallback."""

    def __init__(self, mode: str | None) -> None:
        """`mode` as in MODES (None: auto)."""
        self.requested = mode
        self.current: FastDecoder | None = None

    def mode(self, device: str) -> DecodeMode:
        """The resolved mode for a model on `device`."""
        return resolve_mode(self.requested, device)

    def get(self, model: Any, batch: int, needed: int, device: str) -> FastDecoder:
        """A decoder for `batch` rows and `needed` cache columns (reused when it fits)."""
        current = self.current
        if current is not None and current.fits(model, batch, needed):
            return current
        length = max(cache_length(needed), current.length if current and
                     current.model is model and current.batch == batch else 0)
        self.current = None  # free the old cache before allocating the new one
        self.current = FastDecoder(model, batch, length, self.mode(device) == DecodeMode.GRAPH)
        return self.current

    def give_up(self, error: BaseException) -> str:
        """Use generate() from now on, after the static-cache path failed with `error`; the
        note that says so (also printed)."""
        self.requested, self.current = "generate", None
        note = (f"the static-cache decoder failed ({type(error).__name__}: "
                f"{first_line(error)}); using transformers' generate() instead")
        say(note)
        return note

    def clear(self) -> None:
        """Forget the decoder (the model was unloaded)."""
        self.current = None
