"""Fixtures for the assistant's tests: the real default model (prepared by `make model`) and
tiny randomly initialised models built on the spot for the refusal tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from app.assist.model.convert import default_model_folder
from app.assist.model.manifest import MANIFEST_NAME
from app.isolation import offline

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


@pytest.fixture(scope="session")
def default_folder() -> Path:
    """The prepared default model; a clear failure (not a skip) when `make model` was not run."""
    folder = default_model_folder()
    if not (folder / MANIFEST_NAME).is_file():
        pytest.fail(f"the default model is not prepared at {folder}: run `make model`")
    offline.enforce()
    return folder


def save_tiny_llama(folder: Path, tokenizer_from: Path, seed: int = 0) -> Path:
    """A two-layer Llama with random weights and the default model's tokenizer, as safetensors."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=49152, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=512, bos_token_id=1, eos_token_id=2,
                         pad_token_id=2, tie_word_embeddings=True)
    LlamaForCausalLM(config).save_pretrained(str(folder))
    return _with_tokenizer(folder, tokenizer_from)


def save_tiny_qwen2(folder: Path, tokenizer_from: Path) -> Path:
    """A two-layer Qwen2 (biases on q/k/v, an untied head: not SmolLM2's layout) with random
    weights and the default model's tokenizer, as safetensors."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=49152, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=512, bos_token_id=1, eos_token_id=2,
                         pad_token_id=2, tie_word_embeddings=False)
    Qwen2ForCausalLM(config).save_pretrained(str(folder))
    return _with_tokenizer(folder, tokenizer_from)


def _with_tokenizer(folder: Path, tokenizer_from: Path) -> Path:
    """The model folder with the default model's tokenizer and chat template beside it."""
    for name in TOKENIZER_FILES:
        shutil.copyfile(tokenizer_from / name, folder / name)
    return folder


@pytest.fixture
def tiny_model(tmp_path: Path, default_folder: Path) -> Callable[[str], Path]:
    """A factory: a fresh tiny model folder (not yet imported) under tmp_path."""

    def make(name: str = "tiny") -> Path:
        """Build one folder called `name`."""
        return save_tiny_llama(tmp_path / name, default_folder)

    return make
