"""ModelSession: one local model, loaded lazily, generating with streaming and a real Stop.

No Qt here: the GUI wraps a session in a long-lived QThread worker and forwards on_token calls as
signals; the CLI calls it directly. One generation runs at a time (a lock serialises callers).
"""

from __future__ import annotations

import inspect
import os
import threading
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.assist.errors import AssistError, GenerationFailed
from app.assist.model import fastdecode, quant
from app.assist.model.adapters import (
    CARD_KEY,
    adapter_folder,
    apply_adapter,
    check_adapter,
    read_card,
)
from app.assist.model.answer import Answer, FinishReason
from app.assist.model.convert import default_model_folder
from app.assist.model.manifest import Progress
from app.assist.model.modelfiles import unreadable_as_refusal
from app.assist.model.safety import check_model_folder
from app.assist.model.streaming import EventStopper, Interrupted, OnToken, TokenStream, interrupt_on
from app.base import settings
from app.isolation import offline

Message = dict[str, str]
DEFAULT_CONTEXT_TOKENS = 8192
# Long prompts are read in chunks of this many tokens, checking Stop between chunks (and between
# layers within one): a whole 6000-token prompt in one forward pass took 0.7 s per layer on the
# CPU, far beyond the 200 ms that Stop is allowed.
PREFILL_CHUNK = 256


@dataclass(frozen=True)
class GenerationOptions:
    """How to sample. temperature 0 means greedy (the same answer every time)."""

    temperature: float = 0.0
    top_p: float = 0.95
    repetition_penalty: float = 1.1
    seed: int | None = None
    min_new_tokens: int = 0


@dataclass(frozen=True)
class LoadReport:
    """What a load did and how long each part took."""

    folder: Path
    device: str
    quantization: str
    parameters: int
    check_s: float
    load_s: float


def cpu_threads() -> int:
    """Torch threads for a model on the CPU: every usable core but one, which the GUI (or the
    verifier's worker) keeps. Measured on 2 shared cores: 1 thread gave 16.8 tokens/s while 2
    threads, competing with other work, gave 2.4 (threads waiting on a busy core)."""
    return max(1, len(os.sched_getaffinity(0)) - 1)


def _quiet(message: str, fraction: float) -> None:
    """The default progress callback: says nothing."""


def _fallback_prompt(messages: list[Message]) -> str:
    """A plain transcript for tokenizers without a chat template."""
    turns = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
    return "\n\n".join(turns) + "\n\nAssistant:"


class ModelSession:
    """A local model folder, checked and loaded on first use, then reused for every answer."""

    def __init__(self, folder: Path | None = None, device: str = "auto",
                 quantization: str = "auto", context_tokens: int | None = None,
                 progress: Progress | None = None, threads: int | None = None,
                 adapter: str | None = None, decode: str | None = None) -> None:
        """Remember where the model is and how to load it; nothing is read yet.

        `threads` sets torch's CPU threads (process-wide) at load; by default one core is left
        for the app (see cpu_threads). `adapter` names a LoRA adapter of the model (checked
        against its own manifest at load, like the model). `decode` picks the decoding path
        (fastdecode.MODES; default: KERNEL_STUDIO_DECODE, else auto)."""
        self.folder = Path(folder) if folder else default_model_folder()
        self.requested_device = device
        self.requested_quantization = quantization
        self.context_limit = context_tokens
        self.progress = progress or _quiet
        self.threads = threads
        self.adapter = adapter
        self.report: LoadReport | None = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._verified = False
        self._window: int | None = None
        self._lock = threading.RLock()
        self.decoders = fastdecode.Decoders(decode or settings.text(settings.DECODE))

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory."""
        return self._model is not None

    def load_tokenizer(self) -> Any:
        """Check the folder and load only the tokenizer (cheap: enough to count tokens)."""
        if self._tokenizer is not None:  # no lock: counting must not wait for a generation
            return self._tokenizer
        with self._lock:
            if self._tokenizer is None:
                self._check(self.progress)
                self._tokenizer = self._read_tokenizer()
            return self._tokenizer

    def load(self, progress: Progress | None = None) -> LoadReport:
        """Check every file against the manifest, then load the weights (once)."""
        with self._lock:
            if self.report is not None:
                return self.report
            report = progress or self.progress
            started = time.perf_counter()
            self._check(report)
            checked = time.perf_counter()
            if self._tokenizer is None:
                self._tokenizer = self._read_tokenizer()
            self._model, device, quantization = self._read_model(report)
            self.report = LoadReport(self.folder, device, quantization,
                                     sum(p.numel() for p in self._model.parameters()),
                                     checked - started, time.perf_counter() - checked)
            report("ready", 1.0)
            return self.report

    def unload(self) -> None:
        """Drop the weights (the next generate loads them again)."""
        with self._lock:
            self._model, self.report, self._verified = None, None, False
            self.decoders.clear()

    def _check(self, progress: Progress) -> None:
        """The safety checks and the manifest, reported as the first 60% of a load; done once
        per load (the tokenizer and the weights of one load share it)."""
        if self._verified:
            return
        check_model_folder(self.folder, lambda m, f: progress(m, 0.6 * f))
        if self.adapter:
            check_adapter(self.folder, self.adapter)
        # Set again here: a library that reads these at import must see them first.
        offline.apply_offline_env()
        self._verified = True

    def _read_tokenizer(self) -> Any:
        """The folder's tokenizer, local files only, no remote code."""
        from transformers import AutoTokenizer

        return unreadable_as_refusal(self.folder, "tokenizer", lambda: (
            AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True,
                                          trust_remote_code=False)))

    def _read_model(self, progress: Progress) -> tuple[Any, str, str]:
        """The weights, placed and quantized as asked."""
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # we report progress
        device = quant.resolve_device(self.requested_device)
        if device == "cpu":
            torch.set_num_threads(self.threads or cpu_threads())
        quantization = quant.resolve_quantization(self.quantization_asked(), device)
        if quantization == "int8":  # bitsandbytes warns on every matmul that it casts inputs
            warnings.filterwarnings("ignore", message="MatMul8bitLt: inputs will be cast")
        progress(f"loading weights ({device}, {quantization})", 0.7)
        model: Any = unreadable_as_refusal(self.folder, "weights", lambda: (
            AutoModelForCausalLM.from_pretrained(
                str(self.folder), local_files_only=True, trust_remote_code=False,
                use_safetensors=True, **quant.load_arguments(quantization, device))))
        if self.adapter:
            progress(f"loading adapter {self.adapter}", 0.95)
            model = apply_adapter(model, adapter_folder(self.folder, self.adapter),
                                  merge=quantization == "none")
        model.eval()
        nf4_kernel = settings.text(settings.NF4_KERNEL)
        if device == "cuda" and quantization == "nf4" and nf4_kernel != "off":
            self._use_nf4_kernel(model, nf4_kernel == "on")
        return model, device, quantization

    def _use_nf4_kernel(self, model: Any, any_gpu: bool) -> None:
        """Decode the NF4 layers through the nf4_gemv template (where it wins, or on any GPU
        when asked); say how it went."""
        from app.assist.model import nf4_linear

        count, why = nf4_linear.use_kernel(model, any_gpu)
        fastdecode.say(f"nf4_gemv serves {count} layers" if count else
                       f"nf4_gemv not used ({why}); bitsandbytes' 4-bit path stays")

    # -- tokens ------------------------------------------------------------------------------

    def context_window(self) -> int:
        """Tokens the model can attend to (its config), capped by the user's limit if set."""
        if self._window is None:
            self.load_tokenizer()
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(str(self.folder), local_files_only=True,
                                                trust_remote_code=False)
            self._window = int(getattr(config, "max_position_embeddings", 0)
                               or DEFAULT_CONTEXT_TOKENS)
        return min(self._window, self.context_limit) if self.context_limit else self._window

    def count_tokens(self, text: str) -> int:
        """Tokens in plain text."""
        return len(self.load_tokenizer().encode(text, add_special_tokens=False))

    def render(self, messages: list[Message]) -> str:
        """The exact prompt text the model reads for these messages."""
        tokenizer = self.load_tokenizer()
        if not getattr(tokenizer, "chat_template", None):
            return _fallback_prompt(messages)
        text: str = tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=True)
        return text

    def quantization_asked(self) -> str:
        """The quantization asked for; 'auto' with an adapter means the one it was taught over
        (its card's settings), so that it meets the weights it learned on: an adapter taught
        over NF4 answered worse over float32 weights on the CPU."""
        if self.requested_quantization != "auto" or not self.adapter:
            return self.requested_quantization
        card = read_card(adapter_folder(self.folder, self.adapter))
        taught = card.get("settings", {}).get("quantization") if isinstance(
            card.get("settings"), dict) else None
        return taught if taught in quant.QUANTIZATIONS else self.requested_quantization

    @property
    def prompt_style(self) -> str:
        """How proposals are asked: "full", or the style the adapter's card names (the prompt it
        was taught with, app/assist/prompting/compact.py)."""
        if not self.adapter:
            return "full"
        card = read_card(adapter_folder(self.folder, self.adapter))
        return str(card.get(CARD_KEY, "full"))

    def count_messages(self, messages: list[Message]) -> int:
        """Tokens of the whole rendered prompt, chat markup included."""
        return len(self.load_tokenizer().encode(self.render(messages), add_special_tokens=False))

    # -- generation --------------------------------------------------------------------------

    def generate(self, messages: list[Message], max_new_tokens: int = 512,
                 on_token: OnToken | None = None, stop: threading.Event | None = None,
                 options: GenerationOptions | None = None, prefix: str = "") -> Answer:
        """Answer `messages`, streaming text to `on_token`; setting `stop` ends it promptly.

        Loads the model first when needed. A stop (before or during) gives an Answer whose
        finish_reason is 'stopped' and whose text is what was generated until then. `prefix`
        starts the answer (the model continues it, e.g. an opened code block with the kernel's
        signature); it is streamed first and is part of the answer's text.
        """
        stop = stop or threading.Event()
        with self._lock:
            started = time.perf_counter()
            if stop.is_set():
                return Answer("", FinishReason.STOPPED, 0, 0, 0.0)
            self.load()
            answer = self._generate(messages, max_new_tokens, on_token, stop,
                                    options or GenerationOptions(), started, prefix)
            return replace(answer, text=prefix + answer.text) if prefix else answer

    def _inputs(self, messages: list[Message], prefix: str) -> Any:
        """Token ids of the rendered prompt (and the answer's prefix), on the model's device."""
        encoded = self._tokenizer(self.render(messages) + prefix, return_tensors="pt",
                                  add_special_tokens=False)
        return encoded.to(self._model.device)

    def _budget(self, prompt_tokens: int, max_new_tokens: int) -> tuple[int, list[str]]:
        """Clamp the answer length to the context window, saying so when it is cut."""
        room = self.context_window() - prompt_tokens
        if room <= 0:
            raise AssistError(f"the prompt has {prompt_tokens} tokens and fills the model's "
                              f"{self.context_window()}-token context",
                              "shorten the question or the context")
        if max_new_tokens <= room:
            return max_new_tokens, []
        return room, [f"answer limited to {room} tokens (asked for {max_new_tokens}): the "
                      f"prompt uses {prompt_tokens} of {self.context_window()}"]

    def _generation_config(self, max_new_tokens: int, options: GenerationOptions) -> Any:
        """A complete GenerationConfig, so nothing is inherited from the folder silently."""
        import transformers

        eos = self._model.generation_config.eos_token_id or self._tokenizer.eos_token_id
        pad = self._tokenizer.pad_token_id if self._tokenizer.pad_token_id is not None else eos
        sampling: dict[str, Any] = {"do_sample": False}
        if options.temperature > 0:
            sampling = {"do_sample": True, "temperature": options.temperature,
                        "top_p": options.top_p}
        config_class: Any = transformers.GenerationConfig
        return config_class(max_new_tokens=max_new_tokens, eos_token_id=eos,
                                pad_token_id=pad, min_new_tokens=options.min_new_tokens,
                                repetition_penalty=options.repetition_penalty, **sampling)

    def _generate(self, messages: list[Message], max_new_tokens: int, on_token: OnToken | None,
                  stop: threading.Event, options: GenerationOptions, started: float,
                  prefix: str) -> Answer:
        """The body of generate(), under the lock with the model loaded."""
        import torch

        inputs = self._inputs(messages, prefix)
        if prefix and on_token:
            on_token(prefix)
        prompt_tokens = int(inputs["input_ids"].shape[1])
        limit, warnings = self._budget(prompt_tokens, max_new_tokens)
        if options.seed is not None:
            torch.manual_seed(options.seed)
        stream = TokenStream(self._tokenizer, on_token, started)
        interrupted = False
        try:
            with torch.inference_mode(), interrupt_on(self._model, stop):
                done = self._fast(options) and self._fast_generate(inputs, limit, options,
                                                                   stream, stop, warnings)
                if not done:
                    self._eager_generate(inputs, limit, options, stream, stop)
        except Interrupted:
            interrupted = True
            stream.end()
        except (RuntimeError, ValueError, MemoryError) as error:
            raise GenerationFailed(f"the model failed while generating: {error}",
                                   "try fewer new tokens, or another quantization") from error
        return self._answer(stream, prompt_tokens, limit, stop, interrupted, started, warnings)

    def _eager_generate(self, inputs: Any, limit: int, options: GenerationOptions,
                        stream: TokenStream, stop: threading.Event) -> None:
        """transformers' generate(), after a chunked prefill of a long prompt."""
        from transformers import StoppingCriteriaList

        cache = self._prefill(inputs, stop)
        extra = {self._cache_keyword(): cache} if cache is not None else {}
        self._model.generate(**inputs, generation_config=self._generation_config(
            limit, options), streamer=stream, **extra,
            stopping_criteria=StoppingCriteriaList([EventStopper(stop)]))

    def _fast(self, options: GenerationOptions) -> bool:
        """Whether this answer takes the static-cache path (greedy answers only: sampling keeps
        generate()'s random stream)."""
        device = "cuda" if self._model.device.type == "cuda" else "cpu"
        fast = self.decoders.mode(device) != fastdecode.DecodeMode.GENERATE
        return options.temperature == 0 and fast

    def _choice(self, options: GenerationOptions) -> fastdecode.Choice:
        """How the static-cache path picks tokens: what _generation_config tells generate()."""
        config = self._generation_config(1, options)
        eos = config.eos_token_id
        eos_ids = tuple(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        return fastdecode.Choice(options.repetition_penalty, options.min_new_tokens, eos_ids,
                                 int(config.pad_token_id if config.pad_token_id is not None
                                     else (eos_ids or (0,))[0]))

    def _fast_generate(self, inputs: Any, limit: int, options: GenerationOptions,
                       stream: TokenStream, stop: threading.Event, notes: list[str]) -> bool:
        """Generate through fastdecode into `stream`, adding its fallback notes to `notes`.
        False when the static-cache path failed before any token (this session then uses
        generate() from now on, and says so)."""
        width = int(inputs["input_ids"].shape[1])
        device = "cuda" if self._model.device.type == "cuda" else "cpu"
        chunk = fastdecode.CUDA_PREFILL_CHUNK if device == "cuda" else PREFILL_CHUNK
        try:
            decoder = self.decoders.get(self._model, 1, width + limit, device)
            fastdecode.run(decoder, inputs, limit, self._choice(options), [EventStopper(stop)],
                           stop, stream, chunk, self.progress)
        except (RuntimeError, ValueError, TypeError, AttributeError) as error:
            if stream.ids:
                raise
            notes.append(self.decoders.give_up(error))
            return False
        notes.extend([decoder.note] if decoder.note else [])
        return True

    def _prefill(self, inputs: Any, stop: threading.Event) -> Any:
        """Read all but the last prompt token in chunks into a KV cache that generate() then
        continues from (transformers' documented prompt-reuse pattern); None for short prompts.
        """
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        if ids.shape[1] <= PREFILL_CHUNK:
            return None
        from transformers import DynamicCache

        cache = DynamicCache()
        for start in range(0, ids.shape[1] - 1, PREFILL_CHUNK):
            if stop.is_set():
                raise Interrupted
            end = min(start + PREFILL_CHUNK, ids.shape[1] - 1)
            self.progress(f"reading the prompt: {start} of {ids.shape[1]} tokens",
                          start / ids.shape[1])
            self._model(input_ids=ids[:, start:end], attention_mask=mask[:, :end],
                        use_cache=True, logits_to_keep=1, **{self._cache_keyword(): cache})
        return cache

    def _cache_keyword(self) -> str:
        """The KV cache's keyword: 'cache' in recent transformers, 'past_key_values' before."""
        parameters = inspect.signature(self._model.forward).parameters
        return "cache" if "cache" in parameters else "past_key_values"

    def _answer(self, stream: TokenStream, prompt_tokens: int, limit: int,
                stop: threading.Event, interrupted: bool, started: float,
                warnings: list[str]) -> Answer:
        """Package the streamed text with why it ended."""
        count = len(stream.ids)
        eos = self._model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        if interrupted or (stop.is_set() and count < limit and (
                not stream.ids or stream.ids[-1] not in eos_ids)):
            reason = FinishReason.STOPPED
        elif stream.ids and stream.ids[-1] in eos_ids:
            reason = FinishReason.EOS
        else:
            reason = FinishReason.LENGTH
        return Answer(stream.text, reason, prompt_tokens, count,
                      time.perf_counter() - started, stream.first_token_s, tuple(warnings))

