"""What a model folder must be before Kernel Studio loads it: safetensors weights only (pickle
files can run code when loaded), no configuration that asks for remote code, and every file
exactly as the manifest recorded it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.assist.errors import ModelMissing, ModelRefused
from app.assist.model.manifest import MANIFEST_NAME, Progress, model_files, verify_manifest
from app.assist.model.modelfiles import check_weights

# Formats that unpickle on load, and so can run arbitrary code.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
REMOTE_CODE_KEYS = ("auto_map", "trust_remote_code")


def refuse_pickles(folder: Path) -> None:
    """ModelRefused naming the first pickle-format file in `folder`."""
    for name in model_files(folder):
        if name.lower().endswith(PICKLE_SUFFIXES):
            raise ModelRefused(
                f"{folder / name} is a pickle-format file ({Path(name).suffix}); loading one can "
                "run arbitrary code, so Kernel Studio refuses it",
                folder / name,
                "use the model's safetensors weights (convert once on a trusted machine), and "
                "remove pickle files from the folder")
    return None


def _remote_code_key(data: Any) -> str | None:
    """The first remote-code key anywhere in a JSON value (nested configs included)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in REMOTE_CODE_KEYS and value not in (None, False, {}, ""):
                return str(key)
            found = _remote_code_key(value)
            if found:
                return found
    elif isinstance(data, list):
        for item in data:
            found = _remote_code_key(item)
            if found:
                return found
    return None


def _config_files(folder: Path) -> list[str]:
    """The JSON configuration files that transformers reads (tokenizer.json, a vocabulary, is not
    one of them)."""
    return [n for n in model_files(folder)
            if n.endswith(".json") and "config" in Path(n).name and n != MANIFEST_NAME]


def refuse_remote_code(folder: Path) -> None:
    """ModelRefused naming a configuration file that asks for code from outside the library."""
    for name in _config_files(folder):
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
            raise ModelRefused(f"{folder / name} is not valid JSON: {error}",
                               folder / name) from None
        key = _remote_code_key(data)
        if key:
            raise ModelRefused(
                f"{folder / name} asks for remote code ({key!r}); Kernel Studio runs only the "
                "model code that ships with transformers",
                folder / name,
                "use a model whose architecture transformers supports natively")


def require_safetensors(folder: Path) -> None:
    """ModelRefused when the folder has no safetensors weights at all."""
    if not any(n.endswith(".safetensors") for n in model_files(folder)):
        raise ModelRefused(f"{folder} has no .safetensors weights", folder,
                           "Kernel Studio loads safetensors weights only (or one GGUF file)")


def require_folder(folder: Path) -> None:
    """ModelMissing when `folder` is not a folder with a config.json."""
    if not folder.is_dir():
        raise ModelMissing(f"no model folder at {folder}",
                           "prepare the default model with `make model`, or point --model at a "
                           "model folder or a GGUF file")
    if not (folder / "config.json").is_file():
        raise ModelMissing(f"{folder} has no config.json: it is not a Hugging Face model folder")


def check_contents(folder: Path) -> None:
    """The checks that need no manifest: folder shape, pickles, remote code, safetensors."""
    require_folder(folder)
    refuse_pickles(folder)
    refuse_remote_code(folder)
    require_safetensors(folder)


def check_model_folder(folder: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Every check before a load; returns the verified manifest. Nothing in the folder is
    parsed before its links are checked and every file matches the manifest's SHA-256."""
    require_folder(folder)
    manifest = verify_manifest(folder, progress)
    check_contents(folder)
    check_weights(folder)
    return manifest
