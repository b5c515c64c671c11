"""Many answers in one pass: a batch of prompts generated together, each row with its own seed,
each ending where its kernel ends.

Why a batch: on a GPU, a step of a 135M-parameter model costs about the same for one row as for
a hundred, so the chains of an evaluation are generated together. Why per-row seeds: a chain's
sampling must not depend on which other chains share its batch, so that two arms of an
evaluation, or a CPU run (batches of one) and a GPU run, draw the same random numbers for the
same chain. transformers' generate has one random stream per call, so sampling here is done by
a logits processor that draws each row's token from that row's own generator and leaves only
that token possible; generate's greedy choice then takes it.

Why stop at the kernel's end: answers open with the kernel's signature and `{` (the answer
prefix), so the kernel is complete when the braces balance again. What a model writes after
that (explanations, a main(), a second copy) is never compiled; not generating it is most of
the time saved.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.assist.errors import GenerationFailed
from app.assist.model import fastdecode
from app.assist.model.answer import Answer, FinishReason
from app.assist.model.session import PREFILL_CHUNK, GenerationOptions, Message, ModelSession
from app.assist.model.streaming import Interrupted, interrupt_on

# (row, text): the text a row generated since the last call.
OnRowToken = Callable[[int, str], None]
FENCE = "```"


@dataclass(frozen=True)
class Request:
    """One row of a batch: the chat, how the answer starts, how to sample, and its limit."""

    messages: list[Message]
    prefix: str = ""
    options: GenerationOptions = field(default_factory=GenerationOptions)
    max_new_tokens: int = 512


class KernelEnd:
    """Follows the code a row writes, character by character, and says when the kernel that
    the prefix opened is closed: braces balanced outside comments, strings and characters, or
    the code block's closing fence.

    A small model often closes the prefix's block at once and writes the whole file again in a
    block of its own: a fence that closes an unfinished kernel therefore waits for one more
    block, followed the same way (the answer's parser takes the block with the kernel)."""

    def __init__(self, depth: int) -> None:
        """Start inside `depth` open braces (1 after a prefix that ends with the signature's
        `{`); 0 means nothing is open yet."""
        self.depth = depth
        self.opened = depth > 0
        self.state = "code"  # code | line_comment | block_comment | string | char | between
        self.previous = ""
        self.backticks = 0
        self.reopened = False
        self.ended = False

    def feed(self, text: str) -> bool:
        """Take more text; True once the kernel has ended."""
        for char in text:
            if not self.ended:
                self._char(char)
        return self.ended

    def _char(self, char: str) -> None:
        """One character of the state machine."""
        if self.state in ("code", "between", "fence_line"):
            self._outside(char)
        elif self.state == "line_comment" and char == "\n":
            self.state = "code"
        elif self.state == "block_comment" and self.previous == "*" and char == "/":
            self.state, char = "code", ""
        elif self.state in ("string", "char") and char in "\"'" and self.previous != "\\":
            if (char == '"') == (self.state == "string"):
                self.state = "code"
        self.previous = "" if (self.previous == "\\" and char == "\\") else char

    def _outside(self, char: str) -> None:
        """Code, the text between blocks, or the language tag after a fence."""
        self.backticks = self.backticks + 1 if char == "`" else 0
        if self.state == "fence_line":
            self.state = "code" if char == "\n" else "fence_line"
        elif self.backticks == len(FENCE):
            self._fence()
        elif self.state == "code":
            self._code(char)

    def _fence(self) -> None:
        """A fence: it ends the code, unless it closes an unfinished kernel for the first time
        (then the next block is followed) or opens that next block."""
        self.backticks = 0
        if self.state == "between":
            self.state, self.depth, self.opened = "fence_line", 0, False
        elif self.opened and self.depth > 0 and not self.reopened:
            self.state, self.reopened = "between", True
        else:
            self.ended = True

    def _code(self, char: str) -> None:
        """A character of code outside comments and literals."""
        if char == "/" and self.previous == "/":
            self.state = "line_comment"
        elif char == "*" and self.previous == "/":
            self.state = "block_comment"
        elif char in "\"'":
            self.state = "string" if char == '"' else "char"
        elif char == "{":
            self.depth, self.opened = self.depth + 1, True
        elif char == "}":
            self.depth -= 1
            self.ended = self.opened and self.depth <= 0


def open_braces(prefix: str) -> int:
    """How many braces a prefix leaves open (the signature's `{` makes 1)."""
    tracker = KernelEnd(0)
    tracker.opened = True  # a prefix never ends the kernel it opens
    tracker.feed(prefix.split("\n", 1)[1] if prefix.startswith(FENCE) else prefix)
    return max(tracker.depth, 0)


class _Rows:
    """The per-row state of one generate() call: the text so far, where each row ended, and
    why. Called by transformers as a stopping criterion after every step."""

    def __init__(self, tokenizer: Any, prefixes: list[str], stop: threading.Event,
                 on_token: OnRowToken | None, prompt_length: int) -> None:
        """Track every row from the end of its prompt."""
        self.tokenizer = tokenizer
        self.stop = stop
        self.on_token = on_token
        self.prompt_length = prompt_length
        self.trackers = [KernelEnd(open_braces(p)) for p in prefixes]
        self.lengths: list[int | None] = [None] * len(prefixes)
        self.reasons = [FinishReason.LENGTH] * len(prefixes)
        self.first_token_s: float | None = None
        self.started = time.perf_counter()
        self._pieces: dict[int, str] = {}

    def piece(self, token: int) -> str:
        """The text of one token (cached: a batch sees the same tokens again and again)."""
        if token not in self._pieces:
            self._pieces[token] = self.tokenizer.decode([token], skip_special_tokens=True)
        return self._pieces[token]

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        """One flag per row: True once the row is done (or Stop was pressed)."""
        import torch

        if self.first_token_s is None:
            self.first_token_s = time.perf_counter() - self.started
        count = int(input_ids.shape[1]) - self.prompt_length
        last = input_ids[:, -1].tolist()
        for row, token in enumerate(last):
            if self.lengths[row] is None:
                self._step(row, int(token), count)
        done = [n is not None for n in self.lengths]
        if self.stop.is_set():
            done = [True] * len(done)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    def _step(self, row: int, token: int, count: int) -> None:
        """Feed one new token of a row that is still going."""
        text = self.piece(token)
        if self.on_token and text:
            self.on_token(row, text)
        if self.trackers[row].feed(text):
            self.lengths[row], self.reasons[row] = count, FinishReason.KERNEL_END

    def finish(self, eos_ids: set[int], sequences: Any, interrupted: bool) -> None:
        """Settle each row's length and reason once generate() returned."""
        for row in range(len(self.lengths)):
            if self.lengths[row] is not None:
                continue
            ids = sequences[row, self.prompt_length:].tolist()
            end = next((i for i, t in enumerate(ids) if t in eos_ids), None)
            if end is not None:
                self.lengths[row], self.reasons[row] = end + 1, FinishReason.EOS
            elif interrupted or self.stop.is_set():
                self.lengths[row], self.reasons[row] = len(ids), FinishReason.STOPPED
            else:
                self.lengths[row] = len(ids)


class SeededSampler:
    """A logits processor that samples each row with its own generator (temperature and
    top-p), then leaves only the drawn token possible. Rows at temperature 0 stay greedy.
    The arithmetic is done on the whole batch at once; only the draws are per row."""

    def __init__(self, options: list[GenerationOptions], device: Any) -> None:
        """One generator per row, seeded from that row's options."""
        import torch

        self.options = options
        self.rows = [i for i, o in enumerate(options) if o.temperature > 0]
        self.generators: list[Any] = []
        for option in options:
            generator = torch.Generator(device=device)
            generator.manual_seed(option.seed if option.seed is not None else 0)
            self.generators.append(generator)
        self.temperatures = torch.tensor([max(o.temperature, 1e-6) for o in options],
                                         device=device).unsqueeze(1)
        self.top_p = torch.tensor([o.top_p for o in options], device=device).unsqueeze(1)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """The scores with every sampled row's drawn token the only possible one."""
        import torch

        if not self.rows:
            return scores
        probs = torch.softmax(scores.float() / self.temperatures, dim=-1)
        ordered, order = torch.sort(probs, dim=-1, descending=True)
        # Keep the smallest prefix of tokens whose mass reaches top_p (always the first).
        keep = torch.cumsum(ordered, dim=-1) - ordered < self.top_p
        keep[:, 0] = True
        ordered = torch.where(keep, ordered, torch.zeros_like(ordered))
        out = scores.clone()
        for row in self.rows:
            choice = torch.multinomial(ordered[row], 1, generator=self.generators[row])
            token = order[row, choice]
            out[row].fill_(-float("inf"))
            out[row, token] = 0.0
        return out


@dataclass(frozen=True)
class BatchResult:
    """The answers of one batch (in request order) and its wall time."""

    answers: list[Answer]
    seconds: float


class BatchModel(ModelSession):
    """A ModelSession that also answers a batch of requests in one generate() call."""

    def generate_batch(self, requests: list[Request], stop: threading.Event | None = None,
                       on_token: OnRowToken | None = None) -> BatchResult:
        """Answer every request; Stop ends all rows promptly (their answers say 'stopped')."""
        stop = stop or threading.Event()
        started = time.perf_counter()
        if not requests:
            return BatchResult([], 0.0)
        with self._lock:
            if stop.is_set():
                return BatchResult([Answer(r.prefix, FinishReason.STOPPED, 0, 0, 0.0)
                                    for r in requests], 0.0)
            self.load()
            answers = self._batch(requests, stop, on_token, started)
        return BatchResult(answers, time.perf_counter() - started)

    def _encode(self, requests: list[Request]) -> tuple[Any, list[int]]:
        """Left-padded token ids and attention mask for the rows, and each prompt's length."""
        tokenizer = self._tokenizer
        texts = [self.render(r.messages) + r.prefix for r in requests]
        side = tokenizer.padding_side
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        try:
            encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        finally:
            tokenizer.padding_side = side
        lengths = [int(n) for n in encoded["attention_mask"].sum(dim=1).tolist()]
        return encoded.to(self._model.device), lengths

    def _batch(self, requests: list[Request], stop: threading.Event,
               on_token: OnRowToken | None, started: float) -> list[Answer]:
        """The body of generate_batch(), under the lock with the model loaded."""
        inputs, lengths = self._encode(requests)
        width = int(inputs["input_ids"].shape[1])
        limit, notes = self._budget(width, max(r.max_new_tokens for r in requests))
        rows = _Rows(self._tokenizer, [r.prefix for r in requests], stop, on_token, width)
        sequences, interrupted = self._run(inputs, limit, requests, rows, stop)
        eos = self._model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        rows.finish(eos_ids, sequences, interrupted)
        seconds = time.perf_counter() - started
        return [self._row_answer(requests[i], sequences[i, width:], rows, i, lengths[i], seconds,
                             notes) for i in range(len(requests))]

    def _run(self, inputs: Any, limit: int, requests: list[Request], rows: _Rows,
             stop: threading.Event) -> tuple[Any, bool]:
        """generate() with the seeded sampler and the row tracker; (sequences, interrupted)."""
        import torch
        from transformers import LogitsProcessorList, StoppingCriteriaList

        options = [r.options for r in requests]
        config = self._generation_config(limit, GenerationOptions(
            repetition_penalty=options[0].repetition_penalty))
        try:
            with torch.inference_mode(), interrupt_on(self._model, stop):
                if self._fast_batch():
                    try:
                        return self._fast_run(inputs, limit, options, rows, stop), False
                    except (RuntimeError, ValueError, TypeError, AttributeError) as error:
                        if rows.first_token_s is not None:
                            raise
                        self.decoders.give_up(error)  # says so; generate() from now on
                sequences = self._model.generate(
                    **inputs, generation_config=config,
                    logits_processor=LogitsProcessorList([SeededSampler(options,
                                                                        self._model.device)]),
                    stopping_criteria=StoppingCriteriaList([rows]))
            return sequences, False
        except Interrupted:
            return inputs["input_ids"], True
        except (RuntimeError, ValueError, MemoryError) as error:
            raise GenerationFailed(f"the model failed while generating a batch of "
                                   f"{len(requests)}: {error}",
                                   "try a smaller --batch or fewer new tokens") from error

    def _fast_batch(self) -> bool:
        """Whether batches take the static-cache path (fastdecode): sampling here is the
        seeded sampler's, so greedy and sampled rows alike can."""
        device = "cuda" if self._model.device.type == "cuda" else "cpu"
        return self.decoders.mode(device) != fastdecode.DecodeMode.GENERATE

    def _fast_run(self, inputs: Any, limit: int, options: list[GenerationOptions], rows: _Rows,
                  stop: threading.Event) -> Any:
        """The batch through fastdecode: the same processors as generate() gets in _run."""
        width, batch = int(inputs["input_ids"].shape[1]), int(inputs["input_ids"].shape[0])
        device = "cuda" if self._model.device.type == "cuda" else "cpu"
        choice = self._choice(GenerationOptions(repetition_penalty=options[0].repetition_penalty))
        choice.extra = [SeededSampler(options, self._model.device)]
        decoder = self.decoders.get(self._model, batch, width + limit, device)
        chunk = fastdecode.CUDA_PREFILL_CHUNK if device == "cuda" else PREFILL_CHUNK
        return fastdecode.run(decoder, inputs, limit, choice, [rows], stop, None, chunk)

    def _row_answer(self, request: Request, generated: Any, rows: _Rows, row: int,
                prompt_tokens: int, seconds: float, notes: list[str]) -> Answer:
        """One row's Answer: the prefix and the text up to where the row ended."""
        length = rows.lengths[row] or 0
        ids = generated[:length].tolist()
        text = self._tokenizer.decode(ids, skip_special_tokens=True)
        return Answer(request.prefix + text, rows.reasons[row], prompt_tokens, len(ids), seconds,
                      rows.first_token_s, tuple(notes))
