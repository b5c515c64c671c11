"""The teaching recipe is not tied to SmolLM2: a small model of another architecture (Qwen2),
built from a config here and imported as a user imports theirs, is taught by `teach train` on
verified data and then answers with its adapter through the normal session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.assist.model.adapters import CARD_NAME, check_adapter
from app.assist.model.convert import import_model
from app.assist.model.session import ModelSession
from app.assist.tasks.suite import load_suite
from app.assist.teach.data import DATA_NAME, build
from app.assist.teach.generate import candidates
from app.assist.teach.guard import Guard
from app.assist.teach.recipe import train_adapter
from app.assist.teach.train import Settings
from tests.assist.conftest import save_tiny_qwen2


def test_a_model_of_another_architecture_is_taught_and_answers_with_its_adapter(
        tmp_path: Path, default_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_MODELS", str(tmp_path / "models"))
    model = import_model(save_tiny_qwen2(tmp_path / "source", default_folder), name="tiny-qwen")
    summary = build(tmp_path / "data", 2, candidates(5, ["elementwise"]), Guard.of(load_suite()),
                    lambda _line: None)
    assert summary.written == 2
    settings = Settings(steps=2, seed=3, max_tokens=256, checkpoint_every=5, batch=2,
                        targets="all")
    lines: list[str] = []
    folder = train_adapter(model, tmp_path / "data" / DATA_NAME, "site", settings, lines.append)
    assert lines[0].startswith("memory: about")
    card = json.loads((folder / CARD_NAME).read_text())
    assert card["steps"] == 2 and card["prompt"] == "compact-v1"
    assert {"q_proj", "down_proj"} <= set(card["settings"]["target_modules"])
    check_adapter(model, "site")
    session = ModelSession(model, device="cpu", quantization="none", adapter="site")
    answer = session.generate([{"role": "user", "content": "Write a CUDA relu kernel."}],
                              max_new_tokens=6)
    assert answer.new_tokens > 0
    from safetensors.numpy import load_file

    weights = load_file(str(folder / "adapter_model.safetensors"))
    lora_b = [w for name, w in weights.items() if "lora_B" in name]
    assert lora_b and any(abs(w).max() > 0 for w in lora_b)  # taught: B starts at zero
