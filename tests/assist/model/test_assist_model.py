"""The real default model (SmolLM2-135M-Instruct, CPU): loads offline under the network guard,
streams, stops mid-stream and during prefill within 200 ms, and keeps answers in its context."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.assist import Answer, GenerationOptions, ModelSession
from app.assist.model import session as session_module
from app.isolation import offline

QUESTION = [{"role": "user", "content": "What is a CUDA warp?"}]
STOP_LIMIT_S = 0.2
LONG_PROMPT = [{"role": "user", "content": "Explain this kernel:\n" +
                "y[i] = a * x[i] + y[i];  // saxpy\n" * 300}]


@pytest.fixture(scope="module")
def session(default_folder: Path) -> Iterator[ModelSession]:
    """The default model, loaded once for this module, on the CPU, under the offline guard.

    One thread: the test machine's cores are shared, and torch threads that wait on each other
    there make every step slower."""
    offline.enforce()
    loaded = ModelSession(default_folder, device="cpu", threads=1)
    loaded.load()
    yield loaded
    loaded.unload()


def test_loads_offline_with_the_guard_on(session: ModelSession) -> None:
    assert offline.network_guard_installed()
    assert offline.missing_offline_env() == []
    assert session.report is not None
    assert session.report.device == "cpu"
    assert 130_000_000 < session.report.parameters < 140_000_000
    with pytest.raises(offline.NetworkRefused):  # the guard is live in this very process
        socket.create_connection(("192.0.2.1", 443), timeout=1)
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_generates_and_streams_every_piece(session: ModelSession) -> None:
    pieces: list[str] = []
    answer = session.generate(QUESTION, max_new_tokens=12, on_token=pieces.append)
    assert answer.new_tokens > 0 and answer.text.strip()
    assert "".join(pieces) == answer.text
    assert answer.finish_reason in ("eos", "length")
    assert answer.first_token_s is not None and answer.first_token_s < answer.seconds
    assert answer.prompt_tokens > 10


def test_a_prefix_starts_the_answer_and_is_streamed_first(session: ModelSession) -> None:
    pieces: list[str] = []
    prefix = "```cuda\nextern \"C\" __global__ void k(float* y, int n)\n{\n"
    answer = session.generate(QUESTION, max_new_tokens=6, on_token=pieces.append, prefix=prefix)
    assert pieces[0] == prefix
    assert answer.text.startswith(prefix) and answer.text == "".join(pieces)
    assert answer.parsed.code is not None and "__global__ void k" in answer.parsed.code


def test_greedy_answers_repeat_exactly(session: ModelSession) -> None:
    first = session.generate(QUESTION, max_new_tokens=6)
    second = session.generate(QUESTION, max_new_tokens=6)
    assert first.text == second.text


def _stop_after(session: ModelSession, messages: list[dict[str, str]], tokens: int,
                delay_s: float) -> tuple[Answer, float, list[str]]:
    """Generate on a worker thread (as the GUI does); from this thread, set Stop `delay_s` after
    the worker streamed `tokens` pieces, as a user's click lands at an arbitrary moment.
    Returns the answer, the seconds from Stop to generate() returning, and the pieces."""
    stop, seen = threading.Event(), threading.Event()
    pieces: list[str] = []
    result: list[Answer] = []

    def on_token(text: str) -> None:
        pieces.append(text)
        if len(pieces) >= tokens:
            seen.set()

    def work() -> None:
        result.append(session.generate(messages, 400, on_token, stop,
                                       GenerationOptions(min_new_tokens=400)))

    worker = threading.Thread(target=work)
    worker.start()
    if tokens:
        assert seen.wait(timeout=60), "no tokens streamed"
    time.sleep(delay_s)
    stopped_at = time.perf_counter()
    stop.set()
    worker.join(timeout=60)
    latency = time.perf_counter() - stopped_at
    assert not worker.is_alive(), "generation did not stop"
    return result[0], latency, pieces


def test_stop_mid_stream_ends_within_200_ms(session: ModelSession) -> None:
    answer, latency, pieces = _stop_after(session, QUESTION, tokens=5, delay_s=0.037)
    print(f"stop latency mid-stream: {latency * 1000:.1f} ms")
    assert answer.stopped
    assert latency < STOP_LIMIT_S
    assert 5 <= answer.new_tokens < 400
    assert answer.text == "".join(pieces)


def test_stop_during_a_long_prefill_ends_within_200_ms(session: ModelSession) -> None:
    answer, latency, pieces = _stop_after(session, LONG_PROMPT, tokens=0, delay_s=0.3)
    print(f"stop latency during prefill: {latency * 1000:.1f} ms "
          f"({answer.prompt_tokens} prompt tokens)")
    assert answer.stopped
    assert latency < STOP_LIMIT_S
    assert answer.new_tokens == 0 and pieces == []


def test_chunked_prefill_gives_the_same_answer(session: ModelSession,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Long prompts are read in chunks (so Stop can land between them); greedy output must be
    what one pass over the whole prompt gives."""
    prompt = [{"role": "user", "content": LONG_PROMPT[0]["content"][:2000]}]
    chunked = session.generate(prompt, max_new_tokens=6)
    assert chunked.prompt_tokens > session_module.PREFILL_CHUNK
    monkeypatch.setattr(session_module, "PREFILL_CHUNK", 100_000)
    whole = session.generate(prompt, max_new_tokens=6)
    assert chunked.text == whole.text


def test_stop_set_before_start_returns_at_once(session: ModelSession) -> None:
    stop = threading.Event()
    stop.set()
    started = time.perf_counter()
    answer = session.generate(QUESTION, 50, None, stop)
    assert answer.stopped and answer.new_tokens == 0
    assert time.perf_counter() - started < 0.05


def test_an_answer_too_long_for_the_context_is_limited_and_says_so(
        session: ModelSession) -> None:
    session.context_limit = 64
    try:
        prompt_tokens = session.count_messages(QUESTION)
        answer = session.generate(QUESTION, max_new_tokens=500)
    finally:
        session.context_limit = None
    assert answer.new_tokens <= 64 - prompt_tokens
    assert any("answer limited to" in w for w in answer.warnings)


def test_counts_match_the_prompt_the_model_reads(session: ModelSession) -> None:
    answer = session.generate(QUESTION, max_new_tokens=1)
    assert answer.prompt_tokens == session.count_messages(QUESTION)
    assert "<|im_start|>assistant" in session.render(QUESTION)


def test_nf4_on_the_cpu_loads_and_generates(default_folder: Path) -> None:
    """bitsandbytes 4-bit also runs on the CPU; the option must work there."""
    quantized = ModelSession(default_folder, device="cpu", quantization="nf4", threads=1)
    report = quantized.load()
    assert report.quantization == "nf4"
    kinds = {type(m).__name__ for m in quantized._model.modules()}
    assert "Linear4bit" in kinds
    answer = quantized.generate(QUESTION, max_new_tokens=4)
    assert answer.new_tokens > 0
    quantized.unload()
