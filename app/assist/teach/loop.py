"""The training loop of `teach train`: the model in float32 on the CPU with a peft LoRA over its
attention projections, AdamW, one example per step; a checkpoint (the adapter's weights, the
optimizer's moments, both as safetensors, and the step) every few steps and on Ctrl+C."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.assist.teach import train
from app.assist.teach.train import CHECKPOINT, OPTIMIZER_NAME, STATE_NAME, Say, Settings, TrainError
from app.fsutil import atomic_write_text


def load(model_folder: Path, settings: Settings, threads: int) -> tuple[Any, Any]:
    """The tokenizer and the model with a fresh, seeded LoRA, ready to train."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(settings.seed)
    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(str(model_folder), local_files_only=True,
                                              trust_remote_code=False)
    model = AutoModelForCausalLM.from_pretrained(str(model_folder), local_files_only=True,
                                                 trust_remote_code=False, use_safetensors=True,
                                                 dtype=torch.float32)
    config = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=0.0,
                        target_modules=train.TARGETS, task_type="CAUSAL_LM")
    lora = get_peft_model(model, config)
    lora.train()
    return tokenizer, lora


def _trainable(lora: Any) -> list[Any]:
    """The LoRA parameters, in a fixed order."""
    return [p for _n, p in sorted(lora.named_parameters()) if p.requires_grad]


def save_checkpoint(folder: Path, lora: Any, optimizer: Any, step: int, key: str) -> None:
    """Replace the checkpoint with this step's (written beside, then renamed)."""
    from safetensors.torch import save_file

    fresh = folder / f"{CHECKPOINT}.new"
    shutil.rmtree(fresh, ignore_errors=True)
    lora.save_pretrained(str(fresh), safe_serialization=True)
    moments = {f"{i}.{k}": v.contiguous() for i, state in optimizer.state_dict()["state"].items()
               for k, v in state.items()}
    save_file(moments, str(fresh / OPTIMIZER_NAME))
    atomic_write_text(fresh / STATE_NAME, json.dumps({"step": step, "key": key}) + "\n")
    old = folder / CHECKPOINT
    shutil.rmtree(old, ignore_errors=True)
    fresh.rename(old)


def restore(folder: Path, lora: Any, optimizer: Any, key: str) -> int:
    """Load the checkpoint into the model and optimizer; the step it reached."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    checkpoint = folder / CHECKPOINT
    state = json.loads((checkpoint / STATE_NAME).read_text("utf-8"))
    if state.get("key") != key:
        raise TrainError(f"the checkpoint in {folder} was made with other data or settings",
                         "resume with the same --data, --steps and --seed, or start afresh "
                         "(remove that folder)")
    set_peft_model_state_dict(lora, load_file(str(checkpoint / "adapter_model.safetensors")))
    moments = load_file(str(checkpoint / OPTIMIZER_NAME))
    saved: dict[int, dict[str, Any]] = {}
    for name, tensor in moments.items():
        index, field = name.split(".", 1)
        saved.setdefault(int(index), {})[field] = tensor
    optimizer.load_state_dict({"state": saved,
                               "param_groups": optimizer.state_dict()["param_groups"]})
    return int(state["step"])


def step_loss(lora: Any, ids: list[int], labels: list[int]) -> float:
    """One forward and backward pass; the loss."""
    import torch

    output = lora(input_ids=torch.tensor([ids]), labels=torch.tensor([labels]))
    output.loss.backward()
    return float(output.loss.detach())


def run(lora: Any, tokenizer: Any, examples: list[dict[str, Any]], settings: Settings,
        folder: Path, key: str, say: Say, resume: bool) -> tuple[int, float]:
    """Train to settings.steps (from the checkpoint when resuming); (steps done, last loss).
    Ctrl+C saves a checkpoint and is raised again."""
    import torch

    optimizer = torch.optim.AdamW(_trainable(lora), lr=settings.learning_rate)
    start = restore(folder, lora, optimizer, key) if resume else 0
    picks = train.order(len(examples), settings.steps, settings.seed)
    encoded = {i: train.encode(tokenizer, examples[i], settings.max_tokens) for i in set(picks)}
    began, loss, reached = time.monotonic(), float("nan"), start
    try:
        for index in range(start, settings.steps):
            loss = step_loss(lora, *encoded[picks[index]])
            optimizer.step()
            optimizer.zero_grad()
            reached = index + 1  # the weights now include this step
            if reached % settings.checkpoint_every == 0:
                save_checkpoint(folder, lora, optimizer, reached, key)
            left = (time.monotonic() - began) / (reached - start) * (settings.steps - reached)
            say(f"step {reached}/{settings.steps}: loss {loss:.3f}; about {left:.0f} s left")
    except KeyboardInterrupt:
        save_checkpoint(folder, lora, optimizer, reached, key)
        raise
    return reached, loss


def settings_dict(settings: Settings) -> dict[str, Any]:
    """Settings for the card, with what is fixed here."""
    return {**asdict(settings), "targets": train.TARGETS, "precision": "float32",
            "device": "cpu", "method": "LoRA (peft)"}
