"""On a GPU: the static-cache decoder with CUDA graphs (app/assist/model/fastdecode.py) captures a
decode step and gives greedy tokens identical to transformers' generate() (float32, one row and
a left-padded batch) and to its own eager steps (bf16 and NF4 through ModelSession), and Stop
still ends an answer within 200 ms."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from app.assist import GenerationOptions
from app.assist.model.batch import BatchModel
from app.assist.model.fastdecode import Choice, FastDecoder, release_generators, run
from app.assist.model.streaming import Interrupted, interrupt_on
from tests.assist.gpu_support import import_small_qwen2, small_qwen2, stop_latency

pytestmark = pytest.mark.gpu
MAX_POSITIONS = 4096
QUESTION = [{"role": "user", "content": "Write a CUDA kernel that adds two float vectors."}]


def _model(dtype: Any) -> Any:
    """The small random Qwen2 on the GPU in `dtype`."""
    return small_qwen2(dtype, MAX_POSITIONS).to("cuda")


@pytest.fixture(scope="module")
def qwen_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small random Qwen2 in bf16 with the default model's tokenizer, imported."""
    return import_small_qwen2(tmp_path_factory.mktemp("qwen2-fastdecode"), MAX_POSITIONS)


def _greedy_pair(model: Any, ids: Any, mask: Any, tokens: int) -> tuple[list[Any], list[Any]]:
    """(generate()'s new tokens, the graphed decoder's), per row."""
    import torch

    with torch.inference_mode():
        expected = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=tokens,
                                  min_new_tokens=tokens, do_sample=False,
                                  repetition_penalty=1.1, eos_token_id=2, pad_token_id=2)
        decoder = FastDecoder(model, int(ids.shape[0]), 1024, use_graph=True)
        got = run(decoder, {"input_ids": ids, "attention_mask": mask}, tokens,
                  Choice(1.1, tokens, (2,), 2), [], threading.Event())
    assert decoder.note is None, decoder.note
    assert decoder.graph is not None, "the decode step was not captured"
    width = int(ids.shape[1])
    return expected[:, width:].tolist(), got[:, width:].tolist()


def test_graphed_greedy_tokens_equal_generate_in_float32() -> None:
    import torch

    model = _model(torch.float32)
    ids = torch.randint(3, 40000, (1, 37), device="cuda")
    expected, got = _greedy_pair(model, ids, torch.ones_like(ids), 48)
    assert got == expected


def test_graphed_left_padded_batch_equals_generate_in_float32() -> None:
    import torch

    model = _model(torch.float32)
    ids = torch.randint(3, 40000, (3, 29), device="cuda")
    mask = torch.ones_like(ids)
    mask[1, :7] = 0
    mask[2, :20] = 0
    ids = ids.masked_fill(mask == 0, 2)
    expected, got = _greedy_pair(model, ids, mask, 24)
    assert got == expected


def _draw() -> None:
    """A random draw on the GPU (what a poisoned generator refuses)."""
    import torch

    torch.randint(0, 10, (4,), device="cuda")
    torch.cuda.synchronize()


def test_a_stop_during_capture_ends_the_answer_and_leaves_random_draws_working() -> None:
    import torch

    model = _model(torch.bfloat16)
    stop = threading.Event()

    def stop_while_capturing(module: Any, args: Any) -> None:
        if torch.cuda.is_current_stream_capturing():
            stop.set()  # the user's Stop, landing while the step is being captured

    ids = torch.randint(3, 40000, (1, 21), device="cuda")
    decoder = FastDecoder(model, 1, 1024, use_graph=True)
    with torch.inference_mode(), interrupt_on(model, stop):
        decoder.prefill(ids, torch.ones_like(ids), stop, 2048, lambda m, f: None)
        token = ids[:, -1]
        decoder.step(token, stop)
        decoder.step(token, stop)  # the two eager steps before a capture
        handle = model.model.layers[0].register_forward_pre_hook(stop_while_capturing)
        with pytest.raises(Interrupted):
            decoder.step(token, stop)
        handle.remove()
    assert stop.is_set() and decoder.graph is not None and decoder.note is None
    _draw()


def test_after_a_failed_capture_the_generators_are_released() -> None:
    import torch

    x = torch.ones(4, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            float(x.sum())  # a copy to the host cannot be captured
    with pytest.raises(RuntimeError, match="graph capture"):
        _draw()  # torch left its generator in capture mode
    release_generators()
    _draw()


@pytest.mark.parametrize("quantization", ["none", "nf4"])
def test_session_graph_matches_its_eager_steps(qwen_folder: Path, quantization: str) -> None:
    session = BatchModel(qwen_folder, device="cuda", quantization=quantization, decode="graph")
    session.load()
    options = GenerationOptions(min_new_tokens=40)
    graphed = session.generate(QUESTION, 40, options=options)
    decoder = session.decoders.current
    assert decoder is not None and decoder.graph is not None, graphed.warnings
    session.decoders.requested = "static"
    session.decoders.clear()
    eager = session.generate(QUESTION, 40, options=options)
    print(f"{quantization}: graph {graphed.tokens_per_s:.0f} tokens/s, "
          f"eager static {eager.tokens_per_s:.0f} tokens/s")
    assert graphed.text == eager.text and graphed.new_tokens == 40


def test_graphed_nf4_stops_within_200_ms(qwen_folder: Path) -> None:
    session = BatchModel(qwen_folder, device="cuda", quantization="nf4", decode="graph")
    session.load()
    latency, answer = stop_latency(session, QUESTION)
    print(f"graphed nf4 stop latency: {latency * 1000:.1f} ms")
    assert answer.stopped
    assert latency < 0.2


def test_graphed_nf4_stops_within_200_ms_at_a_new_cache_length(qwen_folder: Path) -> None:
    # A cache length no earlier answer used: its first steps are where cuDNN attention used
    # to build a plan for about 0.4 s, with Stop waiting behind it.
    session = BatchModel(qwen_folder, device="cuda", quantization="nf4", decode="graph")
    session.load()
    latency, answer = stop_latency(session, QUESTION, limit=3500)
    print(f"graphed nf4 stop latency at a new cache length: {latency * 1000:.1f} ms")
    assert answer.stopped
    assert session.decoders.current is not None
    assert session.decoders.current.length == 4096
    assert latency < 0.2
