"""What the GPU tests of the assistant share: a small random Qwen2 with the default model's
tokenizer, imported like any model, and the measure of how fast Stop lands."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from app.assist import GenerationOptions
from app.assist.model.convert import default_model_folder, import_folder
from app.isolation import offline

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
# Qwen2's layout at a size that loads in seconds; the vocabulary is the default model's.
SMALL_QWEN2: dict[str, Any] = {
    "vocab_size": 49152, "hidden_size": 512, "intermediate_size": 1408, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 2, "tie_word_embeddings": False,
    "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2}


def tokenizer_folder() -> Path:
    """The default model's tokenizer: from the prepared model, or from
    KERNEL_STUDIO_TOKENIZER_DIR on the GPU machine, where the 0.5 GB model does not travel."""
    offline.enforce()
    override = os.environ.get("KERNEL_STUDIO_TOKENIZER_DIR")
    folder = Path(override) if override else default_model_folder()
    missing = [name for name in TOKENIZER_FILES if not (folder / name).is_file()]
    if missing:
        pytest.fail(f"tokenizer files {missing} not in {folder}: run `make model`")
    return folder


def small_qwen2(dtype: Any, max_positions: int) -> Any:
    """The small random Qwen2 (seed 0), on the CPU in `dtype`."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(**SMALL_QWEN2, max_position_embeddings=max_positions)
    model: Any = Qwen2ForCausalLM(config).to(dtype)
    return model.eval()


def import_small_qwen2(folder: Path, max_positions: int) -> Path:
    """The small random Qwen2 in bf16 with the default model's tokenizer, saved in `folder` and
    imported (manifest written)."""
    import torch

    tokenizer = tokenizer_folder()
    small_qwen2(torch.bfloat16, max_positions).save_pretrained(str(folder))
    for name in TOKENIZER_FILES:
        shutil.copyfile(tokenizer / name, folder / name)
    import_folder(folder)
    return folder


def _whereabouts(worker: threading.Thread) -> str:
    """What `worker` is doing (its stack), for a wait that timed out."""
    frame = sys._current_frames().get(worker.ident or -1)
    if frame is None:
        return f"{worker.name} has ended without a token"
    return f"no text in 60 s; {worker.name} is at:\n" + "".join(traceback.format_stack(frame))


def stop_latency(session: Any, question: list[dict[str, str]],
                 limit: int = 2000) -> tuple[float, Any]:
    """Seconds from Stop, set while `session` streams an answer of `limit` tokens, to
    generate() returning; and that answer (the worker thread has ended)."""
    stop, seen = threading.Event(), threading.Event()
    result: list[Any] = []

    def work() -> None:
        result.append(session.generate(question, limit, lambda _t: seen.set(), stop,
                                       GenerationOptions(min_new_tokens=limit)))

    worker = threading.Thread(target=work)
    worker.start()
    assert seen.wait(60), _whereabouts(worker)
    time.sleep(0.05)
    stopped_at = time.perf_counter()
    stop.set()
    worker.join(30)
    latency = time.perf_counter() - stopped_at
    assert not worker.is_alive()
    return latency, result[0]
