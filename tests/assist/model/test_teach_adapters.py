"""LoRA adapters under a model's folder: one made with peft on a tiny model loads by name and
answers; a tampered or incomplete one is refused by name (exit 2 on the CLI)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from app.assist.errors import ModelRefused
from app.assist.model.adapters import (
    CARD_NAME,
    CONFIG_NAME,
    WEIGHTS_NAME,
    adapter_folder,
    check_adapter,
    install_shipped,
    list_adapters,
    seal,
)
from app.assist.model.manifest import verify_manifest, write_manifest
from app.assist.model.session import ModelSession
from app.cli.entry import main


def make_adapter(model: Path, name: str) -> Path:
    """A LoRA adapter with random (non-zero) B matrices, saved and sealed under the model."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(str(model), local_files_only=True)
    lora = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                           init_lora_weights=False))
    folder = adapter_folder(model, name)
    lora.save_pretrained(str(folder), safe_serialization=True)
    (folder / CARD_NAME).write_text(json.dumps({"steps": 0, "examples": 0}), "utf-8")
    seal(folder, {"base": model.name})
    return folder


@pytest.fixture
def model_with_adapter(tiny_model: Callable[[str], Path]) -> Path:
    """A tiny imported model with the adapter 'kern'."""
    model = tiny_model("tiny")
    write_manifest(model)
    make_adapter(model, "kern")
    return model


def test_an_adapter_loads_by_name_and_changes_the_answer_not_the_model(
        model_with_adapter: Path) -> None:
    verify_manifest(model_with_adapter)  # adapters/ lies outside the model's manifest
    plain = ModelSession(model_with_adapter, device="cpu", quantization="none")
    adapted = ModelSession(model_with_adapter, device="cpu", quantization="none", adapter="kern")
    messages = [{"role": "user", "content": "Write a CUDA kernel."}]
    before = plain.generate(messages, max_new_tokens=8)
    after = adapted.generate(messages, max_new_tokens=8)
    assert adapted.report is not None and after.text != before.text


def test_a_tampered_adapter_is_refused_by_name(model_with_adapter: Path) -> None:
    weights = adapter_folder(model_with_adapter, "kern") / WEIGHTS_NAME
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))
    with pytest.raises(ModelRefused, match=WEIGHTS_NAME) as refused:
        check_adapter(model_with_adapter, "kern")
    assert "teach train" in refused.value.hint and "model import" not in refused.value.hint
    session = ModelSession(model_with_adapter, device="cpu", quantization="none", adapter="kern")
    with pytest.raises(ModelRefused):
        session.load()


def test_a_card_naming_a_prompt_style_this_version_does_not_know_is_refused(
        model_with_adapter: Path) -> None:
    """Asked in the wrong prompt, an adapter answers far worse without a word (a card edited
    by hand to say more than the style): refused, naming the style and the known ones."""
    folder = adapter_folder(model_with_adapter, "kern")
    (folder / CARD_NAME).write_text(json.dumps({"prompt": "compact-v1, with notes"}))
    seal(folder, {"base": model_with_adapter.name})
    with pytest.raises(ModelRefused, match="prompt style 'compact-v1, with notes'") as refused:
        check_adapter(model_with_adapter, "kern")
    assert "compact-v1-feedback" in refused.value.message
    (folder / CARD_NAME).write_text(json.dumps({"prompt": "compact-v1"}))
    seal(folder, {"base": model_with_adapter.name})
    assert check_adapter(model_with_adapter, "kern") == folder


def test_the_shipped_default_adapter_is_asked_in_the_compact_prompt(
        default_folder: Path) -> None:
    """The prompt it was taught in: the card says so, in a style the refine loop knows."""
    if not (default_folder / "adapters" / "default").is_dir():
        pytest.skip("the default adapter is installed by make model")
    style = ModelSession(default_folder, adapter="default").prompt_style
    assert style == "compact-v1"


def test_a_truncated_adapter_is_refused_alone(model_with_adapter: Path) -> None:
    """A broken adapter is refused when it is chosen; the model without it, and its other
    adapters, still load."""
    from app.assist.model.safety import check_model_folder

    make_adapter(model_with_adapter, "broken")
    weights = adapter_folder(model_with_adapter, "broken") / WEIGHTS_NAME
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ModelRefused, match="broken"):
        check_adapter(model_with_adapter, "broken")
    check_model_folder(model_with_adapter)
    check_adapter(model_with_adapter, "kern")
    for adapter in (None, "kern"):
        session = ModelSession(model_with_adapter, device="cpu", quantization="none",
                               adapter=adapter)
        assert session.load().device == "cpu"


def test_an_incomplete_or_unknown_adapter_ends_with_exit_2(
        model_with_adapter: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (adapter_folder(model_with_adapter, "kern") / CONFIG_NAME).unlink()
    code = main(["ask", "--model", str(model_with_adapter), "--device", "cpu",
                 "--quantization", "none", "--adapter", "kern", "hello"])
    assert code == 2 and "incomplete" in capsys.readouterr().err
    shutil.rmtree(adapter_folder(model_with_adapter, "kern"))
    code = main(["ask", "--model", str(model_with_adapter), "--adapter", "nope", "hello"])
    assert code == 2 and "no adapter 'nope'" in capsys.readouterr().err


def test_teach_adapters_lists_each_with_its_state(
        model_with_adapter: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_adapter(model_with_adapter, "second")
    (adapter_folder(model_with_adapter, "second") / "extra.txt").write_text("x", "utf-8")
    assert main(["teach", "adapters", "--model", str(model_with_adapter), "--json"]) == 0
    listed = {a["name"]: a for a in json.loads(capsys.readouterr().out)}
    assert listed["kern"]["ok"] and not listed["second"]["ok"]
    assert "extra.txt" in listed["second"]["problem"]
    assert listed["kern"]["card"] and listed["second"]["card"] == {}  # a refused card is unread


def test_auto_quantization_follows_the_adapters_card(default_folder: Path) -> None:
    """The shipped default adapter was taught over NF4: asked for 'auto', a session with it uses
    NF4 (on the CPU too, where the base model alone defaults to float32); an explicit choice or
    no adapter is left alone."""
    if not (default_folder / "adapters" / "default").is_dir():
        pytest.skip("the default adapter is installed by make model")
    assert ModelSession(default_folder, adapter="default").quantization_asked() == "nf4"
    assert ModelSession(default_folder).quantization_asked() == "auto"
    assert ModelSession(default_folder, adapter="default",
                        quantization="none").quantization_asked() == "none"


def test_a_new_shipped_adapter_replaces_an_earlier_release_which_stays_choosable(
        tiny_model: Callable[[str], Path]) -> None:
    """make model after a release with a new default adapter: the installed default, whose
    files differ from the shipped one, is kept as default-<its date> and the shipped one takes
    the name; run again, nothing changes; an installed copy equal to the shipped one stays."""
    from app.base.paths import RESOURCES

    model = tiny_model("smollm2-135m-instruct")
    write_manifest(model)
    earlier = make_adapter(model, "default")
    manifest = json.loads((earlier / "manifest.json").read_text())
    manifest["created"] = "2026-12-01T02:11:10Z"
    (earlier / "manifest.json").write_text(json.dumps(manifest))
    earlier_weights = (earlier / WEIGHTS_NAME).read_bytes()

    assert install_shipped(model) == ["default"]
    shipped = RESOURCES / "adapters" / "smollm2-135m-instruct" / "default"
    assert (adapter_folder(model, "default") / WEIGHTS_NAME).read_bytes() == \
        (shipped / WEIGHTS_NAME).read_bytes()
    kept = adapter_folder(model, "default-20261201")
    assert (kept / WEIGHTS_NAME).read_bytes() == earlier_weights
    check_adapter(model, "default-20261201")
    assert install_shipped(model) == []
    assert sorted(a.name for a in list_adapters(model)) == ["default", "default-20261201"]


def test_a_shipped_adapter_whose_card_was_corrected_replaces_its_copy_without_keeping_it(
        tiny_model: Callable[[str], Path]) -> None:
    """The installed default differs from the shipped one in its card only (the same weights):
    make model replaces it in place, and no default-<date> copy of the same weights appears."""
    from app.base.paths import RESOURCES

    model = tiny_model("smollm2-135m-instruct")
    write_manifest(model)
    assert install_shipped(model) == ["default"]
    installed = adapter_folder(model, "default")
    card = json.loads((installed / CARD_NAME).read_text())
    card["note"] = "the card as an earlier release wrote it"
    (installed / CARD_NAME).write_text(json.dumps(card))
    seal(installed, json.loads((installed / "manifest.json").read_text())["source"], "default")
    assert install_shipped(model) == ["default"]
    shipped = RESOURCES / "adapters" / "smollm2-135m-instruct" / "default"
    assert (installed / CARD_NAME).read_bytes() == (shipped / CARD_NAME).read_bytes()
    assert [a.name for a in list_adapters(model)] == ["default"]
    check_adapter(model, "default")
