"""`teach train` and `teach rl` from start to end: check the model and the data, state the memory
it will hold, train (or resume), and seal the adapter with its card."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.assist.model.adapters import check_adapter
from app.assist.model.manifest import MANIFEST_NAME, sha256_file
from app.assist.prompting import compact
from app.assist.refine.verifypool import VerifyPool, default_workers
from app.assist.teach import loop, rl, rlloop, train
from app.assist.teach.guard import Guard
from app.assist.teach.rl import RLSettings
from app.assist.teach.train import Say, Settings, TrainError
from app.engine.verify.runs import VerifyOptions
from app.engine.worker import backends


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


def _lora_shape(lora: Any) -> tuple[int, str]:
    """(rank, targets as Settings names them) of the loaded adapter."""
    config = lora.peft_config["default"]
    targets = "all" if "gate_proj" in set(config.target_modules) else "attention"
    return int(config.r), targets


def rl_memory(lora: Any, settings: RLSettings) -> str:
    """`teach train`'s estimate for one answer's pass at the run's length, and the logits of
    an answer (float32, with their log-softmax and gradient)."""
    rank, targets = _lora_shape(lora)
    like = Settings(rank=rank, targets=targets, max_tokens=settings.max_tokens, batch=1,
                    device=settings.device, quantization=settings.quantization)
    vocab = int(lora.get_base_model().config.vocab_size)
    logits = settings.max_new_tokens * vocab * 4 * 3
    return f"{train.memory_estimate(*_config_size(lora), like)}, and {logits / (1 << 20):.0f} " \
        "MiB for an answer's logits"


def _fresh_runs(runs: Path, resume: bool) -> Path:
    """The folder every answer is kept in: kept for a resumed run; for a new one emptied when
    an earlier run of teach rl left it (TrainError when it holds anything else)."""
    if not resume and runs.is_dir() and any(runs.iterdir()):
        if not (runs / rlloop.LOG_NAME).is_file() and not (runs / "tasks").is_dir():
            raise TrainError(f"{runs} is not empty and is no earlier teach rl run's folder",
                             "give --runs an empty or new folder")
        shutil.rmtree(runs)
    runs.mkdir(parents=True, exist_ok=True)
    return runs


def _read_log(runs: Path) -> list[dict[str, Any]]:
    """Every step's figures (a resumed run's earlier steps too), without the answers."""
    lines = (runs / rlloop.LOG_NAME).read_text(encoding="utf-8").splitlines()
    found = {}
    for line in lines:
        step = json.loads(line)
        found[step["step"]] = {k: v for k, v in step.items() if k != "groups"}
    return [found[k] for k in sorted(found)]


def _rl_card(settings: RLSettings, runs: Path, start: str, name: str) -> dict[str, Any]:
    """What an adapter of `teach rl` says of its run besides its base and data: the settings
    and rewards, every step's figures, where the answers are, and how to judge it."""
    reward = {"compiles": rl.COMPILES, "partial": rl.PARTIAL, "passes": rl.PASSES,
              "speed_bonus": rl.SPEED_BONUS}
    return {"steps": settings.steps,
            "settings": {**asdict(settings), "method": "GRPO (kernel-studio's own), LoRA (peft)",
                         "reward": reward},
            "rl_steps": _read_log(runs), "answers": str(runs),
            "eval": f"not measured here: eval --split heldout with --adapter {start} before "
                    f"and --adapter {name} after, then teach judge",
            compact.CARD_KEY: compact.FEEDBACK_STYLE if settings.rounds > 1 else compact.STYLE}


def reinforce_adapter(model_folder: Path, data: Path, name: str, start: str, guard: Guard,
                      settings: RLSettings, say: Say, runs: Path, resume: bool = False,
                      threads: int = 1, backend: str = "cpu") -> Path:
    """`teach rl`: GRPO on the adapter `start` over the guarded examples of `data`, every
    answer verified for real and kept under `runs`; the new adapter `name`, sealed with its
    card. Ctrl+C keeps a checkpoint (and is raised again)."""
    import torch

    started = time.monotonic()
    train.check_target(model_folder, name)
    origin = check_adapter(model_folder, start)
    examples = train.read_examples(data)
    tasks, refused = rl.read_tasks(examples, guard)
    facts = train.data_facts(data, examples)
    origin_facts = {"name": start, "manifest_sha256": sha256_file(origin / MANIFEST_NAME)}
    key = rl.digest(settings, facts["sha256"], origin_facts["manifest_sha256"])
    work = train.partial_folder(model_folder, name)
    resume = _resumable(work, resume)
    runs = _fresh_runs(runs, resume)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer, lora = loop.load_adapter(model_folder, origin, settings.seed, threads,
                                        settings.device, settings.quantization)
    reference = rlloop.lora_state(lora)  # before a resume: the KL's anchor is the start
    optimizer = torch.optim.AdamW(loop.trainable(lora), lr=settings.learning_rate)
    begin = loop.restore(work, lora, optimizer, key) if resume else 0
    say(f"memory: {rl_memory(lora, settings)}; {len(tasks)} prompts ({len(refused)} refused by "
        f"the guard), {settings.steps} steps from adapter {start!r}, seed {settings.seed}, "
        f"{settings.describe()}")
    on_gpu = backends.choose(backend)[0] == "pycuda"
    with VerifyPool(VerifyOptions(backend=backend), default_workers(on_gpu)) as pool:
        run = rlloop.Run(lora, tokenizer, optimizer, reference, tasks,
                         rlloop.write_specs(tasks, runs), pool, settings, backend, runs, on_gpu,
                         moved=begin > 0)
        rlloop.steps(run, work, key, say, begin)
    card = {"base": train.base_facts(model_folder), "from_adapter": origin_facts, "data": facts,
            "examples": len(tasks), "refused": refused, **_rl_card(settings, runs, start, name),
            "seconds": round(time.monotonic() - started, 1)}
    folder = train.finish(model_folder, name, lora, card, trained_by="kernel-studio teach rl")
    shutil.rmtree(work, ignore_errors=True)
    return folder
