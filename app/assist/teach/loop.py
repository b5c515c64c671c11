"""The training loop of `teach train`: a peft LoRA over the model's projections, AdamW, a batch
of examples per step; the model in float32 on the CPU, or on a GPU in bfloat16 or 4-bit NF4
(QLoRA, bitsandbytes) with bfloat16 autocast; a checkpoint (the adapter's weights, the
optimizer's moments, both as safetensors, and the step) every few steps and on Ctrl+C."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.assist.model import quant
from app.assist.teach import train
from app.assist.teach.train import CHECKPOINT, OPTIMIZER_NAME, STATE_NAME, Say, Settings, TrainError
from app.base.fsutil import atomic_write_text


def load_base(model_folder: Path, seed: int, threads: int, device: str, quantization: str
              ) -> tuple[Any, Any]:
    """The tokenizer and the base model, seeded, placed to be trained over (float32 on the CPU,
    bfloat16 or NF4 on a GPU)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(str(model_folder), local_files_only=True,
                                              trust_remote_code=False)
    model = AutoModelForCausalLM.from_pretrained(str(model_folder), local_files_only=True,
                                                 trust_remote_code=False, use_safetensors=True,
                                                 **_placement(device, quantization))
    if quantization != "none":
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(  # type: ignore[no-untyped-call]  # peft's
            model, use_gradient_checkpointing=False)
    return tokenizer, model


def load(model_folder: Path, settings: Settings, threads: int) -> tuple[Any, Any]:
    """The tokenizer and the model with a fresh, seeded LoRA, ready to train."""
    from peft import LoraConfig, get_peft_model

    tokenizer, model = load_base(model_folder, settings.seed, threads, settings.device,
                                 settings.quantization)
    config = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=0.0,
                        target_modules=settings.target_modules(), task_type="CAUSAL_LM")
    return tokenizer, _ready(get_peft_model(model, config))


def load_adapter(model_folder: Path, adapter: Path, seed: int, threads: int, device: str,
                 quantization: str) -> tuple[Any, Any]:
    """The tokenizer and the model with a (checked) adapter over it, its LoRA trainable: to
    teach on from where supervised teaching left it."""
    from peft import PeftModel

    tokenizer, model = load_base(model_folder, seed, threads, device, quantization)
    return tokenizer, _ready(PeftModel.from_pretrained(model, str(adapter), is_trainable=True))


def _ready(lora: Any) -> Any:
    """The LoRA in float32 (Adam's moments want it whatever the base holds), in training mode."""
    for parameter in trainable(lora):
        parameter.data = parameter.data.float()
    lora.train()
    return lora


def _placement(device: str, quantization: str) -> dict[str, Any]:
    """from_pretrained's arguments: float32 on the CPU; bfloat16, or NF4 through bitsandbytes,
    on the GPU (the same configuration proposing loads it with, so the adapter meets the
    weights it was taught over)."""
    import torch

    if device == "cpu":
        return {"dtype": torch.float32}
    return quant.load_arguments(quantization, "cuda")


def trainable(lora: Any) -> list[Any]:
    """The LoRA parameters, in a fixed order."""
    return [p for _n, p in sorted(lora.named_parameters()) if p.requires_grad]


def save_checkpoint(folder: Path, lora: Any, optimizer: Any, step: int, key: str) -> None:
    """Replace the checkpoint with this step's (written beside, then renamed)."""
    from safetensors.torch import save_file

    fresh = folder / f"{CHECKPOINT}.new"
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        lora.save_pretrained(str(fresh), safe_serialization=True)
        moments = {f"{i}.{k}": v.detach().contiguous().cpu()
                   for i, state in optimizer.state_dict()["state"].items()
                   for k, v in state.items()}
        save_file(moments, str(fresh / OPTIMIZER_NAME))
        atomic_write_text(fresh / STATE_NAME, json.dumps({"step": step, "key": key}) + "\n")
    except OSError as error:  # a full disk, say: the last whole checkpoint stays
        shutil.rmtree(fresh, ignore_errors=True)
        raise TrainError(f"could not write a checkpoint at step {step}: {error}",
                         "free some space and run again with --resume (it continues from the "
                         "last whole checkpoint)") from None
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


def step_loss(lora: Any, batch: list[tuple[list[int], list[int]]], pad: int) -> float:
    """One forward and backward pass over a batch (right-padded, padding masked out of both
    attention and loss); the loss."""
    import torch

    width = max(len(ids) for ids, _labels in batch)
    ids = [i + [pad] * (width - len(i)) for i, _labels in batch]
    labels = [lab + [-100] * (width - len(lab)) for _ids, lab in batch]
    mask = [[1] * len(i) + [0] * (width - len(i)) for i, _labels in batch]
    device = lora.get_base_model().device
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        output = lora(input_ids=torch.tensor(ids, device=device),
                      attention_mask=torch.tensor(mask, device=device),
                      labels=torch.tensor(labels, device=device))
    output.loss.backward()
    return float(output.loss.detach())


def run(lora: Any, tokenizer: Any, examples: list[dict[str, Any]], settings: Settings,
        folder: Path, key: str, say: Say, resume: bool) -> tuple[int, float]:
    """Train to settings.steps (from the checkpoint when resuming); (steps done, last loss).
    Ctrl+C saves a checkpoint and is raised again."""
    import torch

    optimizer = torch.optim.AdamW(trainable(lora), lr=settings.learning_rate)
    start = restore(folder, lora, optimizer, key) if resume else 0
    picks = train.order(len(examples), settings.steps * settings.batch, settings.seed)
    encoded = {i: train.encode(tokenizer, examples[i], settings.max_tokens) for i in set(picks)}
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else \
        tokenizer.eos_token_id
    began, loss, reached = time.monotonic(), float("nan"), start
    try:
        for index in range(start, settings.steps):
            taken = picks[index * settings.batch:(index + 1) * settings.batch]
            loss = step_loss(lora, [encoded[i] for i in taken], pad)
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
    precision = "float32" if settings.device == "cpu" else (
        "nf4 weights, bfloat16 compute, float32 LoRA" if settings.quantization == "nf4"
        else "bfloat16 weights, float32 LoRA")
    return {**asdict(settings), "target_modules": settings.target_modules(),
            "precision": precision,
            "method": "QLoRA (peft, bitsandbytes)" if settings.quantization == "nf4"
            else "LoRA (peft)"}
