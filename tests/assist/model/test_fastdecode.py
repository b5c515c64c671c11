"""The static-cache decoder (app/assist/model/fastdecode.py) on the CPU: greedy answers of the real
default model are token for token those of transformers' generate(), for a short prompt, a
prompt read in several chunks and a batch with sampled rows; Stop still ends an answer."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from app.assist import GenerationOptions
from app.assist.model.batch import BatchModel, Request
from app.assist.model.fastdecode import (
    Choice,
    Decoders,
    FastDecoder,
    cache_length,
    resolve_mode,
    run,
)
from app.assist.model.streaming import TokenStream

QUESTION = [{"role": "user", "content": "Write a CUDA kernel that adds two float vectors."}]
# About 300 tokens: more than one 256-token prefill chunk on the CPU.
LONG = [{"role": "user", "content": "Explain this code. " + "int x = a[i] + b[i]; " * 22}]
PREFIX = "```cuda\n__global__ void add(const float* a, const float* b, float* c, int n) {\n"


@pytest.fixture(scope="module")
def sessions(default_folder: Path) -> dict[str, BatchModel]:
    """The default model loaded twice on the CPU: generate() and the static-cache path."""
    loaded = {mode: BatchModel(default_folder, device="cpu", quantization="none", decode=mode)
              for mode in ("generate", "static")}
    for session in loaded.values():
        session.load()
    return loaded


def test_modes_resolve_per_device() -> None:
    assert resolve_mode(None, "cuda") == "graph"
    assert resolve_mode("auto", "cpu") == "generate"
    assert resolve_mode("graph", "cpu") == "static"
    assert cache_length(1) == 1024 and cache_length(1025) == 2048
    with pytest.raises(ValueError, match="unknown decode mode"):
        resolve_mode("fast", "cuda")


def test_greedy_answers_match_generate(sessions: dict[str, BatchModel]) -> None:
    options = GenerationOptions(min_new_tokens=16)
    answers = {mode: s.generate(QUESTION, 16, options=options) for mode, s in sessions.items()}
    assert answers["static"].new_tokens == 16
    assert answers["static"].text == answers["generate"].text
    assert answers["static"].warnings == ()


def test_a_prompt_read_in_chunks_matches_generate(sessions: dict[str, BatchModel]) -> None:
    answers = {mode: s.generate(LONG, 6) for mode, s in sessions.items()}
    assert answers["static"].prompt_tokens > 256  # more than one prefill chunk
    assert answers["static"].text == answers["generate"].text
    assert answers["static"].finish_reason == answers["generate"].finish_reason


def test_a_batch_with_sampled_rows_matches_generate(sessions: dict[str, BatchModel]) -> None:
    shorter = [{"role": "user", "content": "What is a warp?"}]
    requests = [Request(QUESTION, PREFIX, GenerationOptions(temperature=0.8, seed=3), 10),
                Request(shorter, "", GenerationOptions(), 10),  # left-padded
                Request(QUESTION, "", GenerationOptions(temperature=1.0, seed=5), 10)]
    results = {mode: s.generate_batch(requests) for mode, s in sessions.items()}
    got = [(a.text, a.finish_reason, a.new_tokens) for a in results["static"].answers]
    assert got == [(a.text, a.finish_reason, a.new_tokens) for a in results["generate"].answers]


def test_stop_before_a_token_ends_the_static_path(sessions: dict[str, BatchModel]) -> None:
    stop = threading.Event()
    seen: list[str] = []

    def on_token(text: str) -> None:
        seen.append(text)
        stop.set()

    answer = sessions["static"].generate(QUESTION, 64, on_token, stop,
                                         GenerationOptions(min_new_tokens=64))
    assert answer.finish_reason == "stopped"
    assert answer.new_tokens <= 2 and seen


def test_a_failure_before_the_first_token_leaves_the_stream_to_generate(
        sessions: dict[str, BatchModel]) -> None:
    # The session falls back to generate() on the same stream, which puts the prompt first:
    # had the static path put it already, the prompt would be taken for the answer.
    import torch  # only once the model is loaded, as the app does

    session = sessions["static"]
    inputs = session._inputs(QUESTION, "")
    stream = TokenStream(session.load_tokenizer(), None, 0.0)

    def broken(sequences: object, scores: object) -> object:
        raise TypeError("a processor that fails")

    decoder = Decoders("static").get(session._model, 1, int(inputs["input_ids"].shape[1]) + 4,
                                     "cpu")
    with torch.inference_mode(), pytest.raises(TypeError, match="fails"):
        run(decoder, inputs, 4, Choice(extra=[broken]), [], threading.Event(), stream)
    stream.put(inputs["input_ids"].cpu())  # what generate() then does
    stream.put(torch.tensor([7]))
    assert stream.ids == [7]


class EndRowAt:
    """A stopping criterion that ends one row once it has `tokens` new tokens."""

    def __init__(self, row: int, width: int, tokens: int) -> None:
        self.row, self.width, self.tokens = row, width, tokens

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        done[self.row] = input_ids.shape[1] - self.width >= self.tokens
        return done


def test_a_row_that_ends_early_is_padded_as_generate_pads_it(
        sessions: dict[str, BatchModel]) -> None:
    # The loop queues each next step before it reads the tokens back, so a row's end is seen
    # one step late on the device: its later tokens must still be padding, the others' intact.
    import torch
    from transformers import StoppingCriteriaList

    model = sessions["static"]._model
    ids = torch.randint(3, 40000, (3, 12), generator=torch.Generator().manual_seed(7))
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        expected = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=9,
                                  do_sample=False, eos_token_id=2, pad_token_id=0,
                                  stopping_criteria=StoppingCriteriaList([EndRowAt(1, 12, 3)]))
        got = run(FastDecoder(model, 3, 1024, use_graph=False),
                  {"input_ids": ids, "attention_mask": mask}, 9, Choice(1.0, 0, (2,), 0),
                  [EndRowAt(1, 12, 3)], threading.Event())
    assert got[1, 15:].tolist() == [0] * 6
    assert got.tolist() == expected.tolist()
