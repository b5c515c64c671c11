"""On a GPU: a randomly initialised small Qwen2-shaped model (no weights can be fetched there)
loads through the real path (manifest, checks) in bitsandbytes NF4 with double quantization and
bf16 compute, generates, and stops within 200 ms; 8-bit and none load too."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.assist import GenerationOptions, ModelSession
from tests.assist.gpu_support import import_small_qwen2, stop_latency

pytestmark = pytest.mark.gpu
QUESTION = [{"role": "user", "content": "What is a warp?"}]


@pytest.fixture(scope="module")
def qwen_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small Qwen2 with random bf16 weights and the default model's tokenizer, imported."""
    return import_small_qwen2(tmp_path_factory.mktemp("qwen2-small"), 2048)


@pytest.fixture(scope="module")
def nf4(qwen_folder: Path) -> ModelSession:
    """The random model in NF4 on the GPU, loaded once."""
    session = ModelSession(qwen_folder, device="cuda", quantization="auto")
    session.load()
    return session


def _linear4bit(session: ModelSession) -> list[object]:
    """The model's bitsandbytes 4-bit linear layers."""
    return [m for m in session._model.modules() if type(m).__name__ == "Linear4bit"]


def test_auto_means_nf4_with_double_quant_and_bf16_compute_on_the_gpu(nf4: ModelSession) -> None:
    import torch

    assert nf4.report is not None
    assert (nf4.report.device, nf4.report.quantization) == ("cuda", "nf4")
    layers = _linear4bit(nf4)
    assert len(layers) == 4 * 7  # q k v o gate up down in each of the 4 layers
    for layer in layers:
        weight = layer.weight  # type: ignore[attr-defined]
        assert weight.device.type == "cuda"
        assert weight.quant_type == "nf4"
        assert weight.quant_state.nested, "double quantization is off"
        assert layer.compute_dtype == torch.bfloat16  # type: ignore[attr-defined]


def test_nf4_generates_and_streams(nf4: ModelSession) -> None:
    pieces: list[str] = []
    answer = nf4.generate(QUESTION, max_new_tokens=16, on_token=pieces.append,
                          options=GenerationOptions(min_new_tokens=16))
    assert answer.new_tokens == 16
    assert "".join(pieces) == answer.text
    print(f"nf4 random 4-layer model: first token {answer.first_token_s:.3f} s, "
          f"{answer.tokens_per_s:.1f} tokens/s")


def test_nf4_stops_within_200_ms(nf4: ModelSession) -> None:
    latency, answer = stop_latency(nf4, QUESTION)
    print(f"gpu stop latency: {latency * 1000:.1f} ms")
    assert answer.stopped
    assert latency < 0.2


def test_nf4_is_smaller_than_bf16_and_int8_loads(qwen_folder: Path, nf4: ModelSession) -> None:
    plain = ModelSession(qwen_folder, device="cuda", quantization="none")
    plain.load()
    int8 = ModelSession(qwen_folder, device="cuda", quantization="int8")
    int8.load()
    sizes = {name: s._model.get_memory_footprint() for name, s in
             (("nf4", nf4), ("int8", int8), ("none", plain))}
    print(f"memory footprint: {sizes}")
    assert sizes["nf4"] < sizes["int8"] < sizes["none"]
    assert any(type(m).__name__ == "Linear8bitLt" for m in int8._model.modules())
    assert int8.generate(QUESTION, max_new_tokens=4).new_tokens > 0
    plain.unload()
    int8.unload()
