"""Training a LoRA adapter (`kernel-studio teach train`): peft over the model in full precision
on the CPU, seeded, with a stated memory estimate, progress with time left, checkpoints that a
cancelled run keeps and `--resume` continues, and an adapter sealed with its manifest and card.
QLoRA over the 4-bit model on a GPU (bitsandbytes) is a later step.

Each example teaches one turn: the user gives the description and the spec, the assistant
answers with the kernel; the loss counts only the answer's tokens."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.assist.errors import AssistError
from app.assist.model.adapters import CARD_NAME, adapter_folder, adapters_root, check_name, seal
from app.assist.model.manifest import MANIFEST_NAME, sha256_file
from app.assist.model.safety import check_model_folder
from app.assist.prompting import compact
from app.base.fsutil import atomic_write_text

CHECKPOINT = "checkpoint"
STATE_NAME = "state.json"
OPTIMIZER_NAME = "optimizer.safetensors"
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj"]
# `--targets all`: the MLP too, which holds most of a small model's weights and so most of what
# a LoRA can change.
ALL_TARGETS = TARGETS + ["gate_proj", "up_proj", "down_proj"]
# Bytes per weight as loaded for training: float32 on the CPU, bfloat16 or NF4 on a GPU (4 bits
# plus a float32 scale per 64 weights, and the embeddings left in bfloat16: about 0.6).
WEIGHT_BYTES = {"cpu": 4.0, "none": 2.0, "nf4": 0.6}
# Python, torch, transformers and the tokenizer before any tensor: the estimate without it was
# 2829 MiB where the run's peak resident set was 3338 MiB (SmolLM2-135M, 1024 tokens).
RUNTIME_BYTES = 600 << 20
Say = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    """What a run does; a resumed run must ask for the same."""

    steps: int = 60
    seed: int = 0
    rank: int = 8
    alpha: int = 16
    learning_rate: float = 2e-4
    max_tokens: int = 1024
    checkpoint_every: int = 10
    batch: int = 1            # examples per step
    device: str = "cpu"       # "cpu", or "cuda" for a GPU
    quantization: str = "none"  # "nf4" on a GPU: QLoRA over the 4-bit model
    targets: str = "attention"  # or "all": the MLP's projections too

    def target_modules(self) -> list[str]:
        """The modules the LoRA wraps."""
        return ALL_TARGETS if self.targets == "all" else TARGETS

    def describe(self) -> str:
        """'float32 LoRA on the CPU' or 'QLoRA (nf4) on the GPU', for progress lines."""
        if self.device == "cpu":
            return "float32 LoRA on the CPU"
        return "QLoRA (nf4) on the GPU" if self.quantization == "nf4" else "bf16 LoRA on the GPU"


class TrainError(AssistError):
    """Training cannot start or go on (bad data, an adapter that exists, a mismatched resume)."""


def read_examples(path: Path) -> list[dict[str, Any]]:
    """The examples of a `teach data` file; TrainError for a file that is not one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        examples = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise TrainError(f"cannot read the training data {path}: {error}",
                         "make it with kernel-studio teach data") from None
    keys = ("description", "spec", "kernel")
    if not examples or not all(isinstance(e, dict) and all(k in e for k in keys)
                               for e in examples):
        raise TrainError(f"{path} holds no examples of teach data (each line needs "
                         f"{', '.join(keys)})", "make it with kernel-studio teach data")
    return examples


def conversation(example: dict[str, Any]) -> list[dict[str, str]]:
    """One example as the compact propose prompt (compact.py, the style on the adapter's card)
    and the kernel as the answer."""
    ask = compact.messages(example["description"], example["spec"])
    return [*ask, {"role": "assistant", "content": compact.answer(example["kernel"])}]


def encode(tokenizer: Any, example: dict[str, Any], max_tokens: int) -> tuple[list[int], list[int]]:
    """Token ids and labels (-100 over the prompt, so only the answer is learned), at most
    max_tokens: a long prompt loses its start (the spec's head), never all of the answer, which
    keeps at least three quarters of the room.

    The prompt and the answer's opening up to the kernel's brace are one piece of text, as when
    proposing (the session appends that opening to the prompt): tokenized the same way, the
    model learns to go on from where it will be asked to."""
    turns = conversation(example)
    prompt = tokenizer.apply_chat_template(turns[:1], tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(turns, tokenize=False)
    cut = len(prompt) + compact.opening_length(turns[1]["content"]) \
        if full.startswith(prompt) else len(prompt)
    head = tokenizer(full[:cut], add_special_tokens=False)["input_ids"]
    answer = tokenizer(full[cut:], add_special_tokens=False)["input_ids"]
    answer = answer[:max_tokens * 3 // 4]
    head = head[len(head) - (max_tokens - len(answer)):] if len(head) + len(answer) > max_tokens \
        else head
    return head + answer, [-100] * len(head) + answer


def memory_estimate(parameters: int, layers: int, hidden: int, settings: Settings) -> str:
    """Bytes the run holds at most, in words: float32 weights, LoRA weights with their gradients
    and two Adam moments, the activations kept for the backward pass of one example (about 34
    values per token, layer and hidden unit, a common rule for transformers) and the libraries.
    --max-tokens bounds it."""
    per_weight = WEIGHT_BYTES["cpu" if settings.device == "cpu" else settings.quantization]
    weights = int(parameters * per_weight)
    lora = layers * len(settings.target_modules()) * 2 * hidden * settings.rank * 4 * 4
    width = 4 if settings.device == "cpu" else 2
    activations = settings.max_tokens * settings.batch * layers * hidden * 34 * width
    total = weights + lora + activations + RUNTIME_BYTES
    mib = 1 << 20
    return (f"about {total / mib:.0f} MiB ({weights / mib:.0f} weights, {activations / mib:.0f} "
            f"activations for {settings.max_tokens} tokens, {lora / mib:.1f} LoRA and optimizer, "
            f"{RUNTIME_BYTES / mib:.0f} the libraries)")


def data_facts(path: Path, examples: list[dict[str, Any]]) -> dict[str, Any]:
    """The training data as the card records it."""
    families = Counter(str(e.get("family", "?")) for e in examples)
    return {"file": path.name, "sha256": sha256_file(path), "examples": len(examples),
            "families": dict(sorted(families.items()))}


def base_facts(model_folder: Path) -> dict[str, Any]:
    """The base model as the card records it: its name and the hash of its manifest (which
    holds the hash of every file)."""
    return {"name": model_folder.name, "manifest_sha256": sha256_file(model_folder / MANIFEST_NAME)}


def partial_folder(model_folder: Path, name: str) -> Path:
    """Where a run keeps its checkpoint until the adapter is finished."""
    return adapters_root(model_folder) / f".{name}.partial"


def order(count: int, steps: int, seed: int) -> list[int]:
    """The examples in the order they are taken (`steps` of them: steps x batch when batched):
    seeded shuffles, one after another."""
    rng = random.Random(seed)
    picks: list[int] = []
    while len(picks) < steps:
        batch = list(range(count))
        rng.shuffle(batch)
        picks += batch
    return picks[:steps]


def digest(settings: Settings, data: dict[str, Any]) -> str:
    """What a checkpoint must match to be resumed."""
    text = json.dumps({"settings": asdict(settings), "data": data["sha256"]}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def check_target(model_folder: Path, name: str) -> Path:
    """The adapter's folder, which must not exist yet; the model must pass its checks."""
    check_model_folder(model_folder)
    folder = adapter_folder(model_folder, check_name(name))
    if folder.exists():
        raise TrainError(f"the adapter {name!r} exists already ({folder})",
                         "choose another --out name, or remove that folder first")
    return folder


def finish(model_folder: Path, name: str, lora: Any, card: dict[str, Any],
           trained_by: str = "kernel-studio teach train") -> Path:
    """Write the adapter into a temporary folder, seal it, then move it into place (nothing
    half-written is ever under the adapter's name)."""
    target = adapter_folder(model_folder, name)
    staging = adapters_root(model_folder) / f".{name}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        lora.save_pretrained(str(staging), safe_serialization=True)
        atomic_write_text(staging / CARD_NAME, json.dumps(card, indent=1) + "\n")
        seal(staging, {"base": card["base"], "trained_by": trained_by}, name)
    except OSError as error:  # a full disk, say: leave nothing half-written behind
        shutil.rmtree(staging, ignore_errors=True)
        raise TrainError(f"could not write the adapter {name!r}: {error}",
                         "free some space and train again; the checkpoint of this run, if "
                         "any, is kept (--resume)") from None
    os.replace(staging, target)
    return target
