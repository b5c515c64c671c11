"""`teach train` from start to end: check the model and the data, state the memory it will
hold, train (or resume), and seal the adapter with its card."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from app.assist.prompting import compact
from app.assist.teach import loop, train
from app.assist.teach.train import Say, Settings, TrainError


def _config_size(lora: Any) -> tuple[int, int, int]:
    """(parameters, layers, hidden size) of the base model."""
    config = lora.get_base_model().config
    parameters = sum(p.numel() for p in lora.get_base_model().parameters())
    return parameters, int(config.num_hidden_layers), int(config.hidden_size)


def _resumable(folder: Path, resume: bool) -> bool:
    """Whether to continue from a checkpoint; TrainError when asked to and there is none."""
    has = (folder / train.CHECKPOINT / train.STATE_NAME).is_file()
    if resume and not has:
        raise TrainError(f"nothing to resume: no checkpoint in {folder}",
                         "run without --resume to start afresh")
    if has and not resume:
        raise TrainError(f"a cancelled run left a checkpoint in {folder}",
                         "add --resume to continue it, or remove that folder to start afresh")
    return resume


def train_adapter(model_folder: Path, data: Path, name: str, settings: Settings, say: Say,
                  resume: bool = False, threads: int = 1) -> Path:
    """Train and seal the adapter `name` of the model; its folder. Ctrl+C keeps a checkpoint
    (and is raised again)."""
    started = time.monotonic()
    train.check_target(model_folder, name)
    examples = train.read_examples(data)
    facts = train.data_facts(data, examples)
    key = train.digest(settings, facts)
    work = train.partial_folder(model_folder, name)
    resume = _resumable(work, resume)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer, lora = loop.load(model_folder, settings, threads)
    say(f"memory: {train.memory_estimate(*_config_size(lora), settings)}; {len(examples)} "
        f"examples, {settings.steps} steps of {settings.batch}, seed {settings.seed}, "
        f"{settings.describe()}")
    steps, loss = loop.run(lora, tokenizer, examples, settings, work, key, say, resume)
    card = {"base": train.base_facts(model_folder), "data": facts, "examples": len(examples),
            "steps": steps, "final_loss": round(loss, 4), "settings": loop.settings_dict(settings),
            "seconds": round(time.monotonic() - started, 1),
            "eval": "not measured here: eval --split heldout before and after, on a GPU",
            compact.CARD_KEY: compact.STYLE}
    folder = train.finish(model_folder, name, lora, card)
    shutil.rmtree(work, ignore_errors=True)
    return folder
