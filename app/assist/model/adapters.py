"""LoRA adapters of a model: each lives in `<model folder>/adapters/<name>/` with a manifest of
its own (the SHA-256 of every file, the model manifest's format), a card (card.json) and peft's
two files. An adapter whose files differ from its manifest, or that lacks one of them, is refused
by name before anything is read; weights are safetensors only."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.assist.errors import ModelRefused
from app.assist.model.manifest import MANIFEST_NAME, read_manifest, verify_manifest, write_manifest
from app.assist.model.modelfiles import check_safetensors
from app.assist.model.safety import refuse_pickles, refuse_remote_code
from app.base.paths import RESOURCES

ADAPTERS_DIR = "adapters"
CONFIG_NAME = "adapter_config.json"
WEIGHTS_NAME = "adapter_model.safetensors"
CARD_NAME = "card.json"
# The card's key naming the prompt style an adapter was taught with (app.assist.prompting.compact).
CARD_KEY = "prompt"
# The prompt styles this version asks in: the full prompt (skills, examples), and the compact
# ones an adapter taught here reads. A card naming another (edited by hand, or from a newer
# version) would be asked in the wrong prompt, and answer far worse, without a word: refused.
PROMPT_STYLES = ("full", "compact-v1", "compact-v1-feedback")
REQUIRED = (CONFIG_NAME, WEIGHTS_NAME, MANIFEST_NAME)
# The adapter a model uses unless told otherwise (`--adapter auto`, the GUI's "automatic").
DEFAULT_NAME = "default"
AUTO = "auto"
NONE = "none"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class AdapterInfo:
    """An adapter as `teach adapters` lists it."""

    name: str
    folder: Path
    problem: str
    card: dict[str, Any]


def adapters_root(model_folder: Path) -> Path:
    """The folder of a model's adapters."""
    return model_folder / ADAPTERS_DIR


def check_name(name: str) -> str:
    """The name if it may name an adapter folder; ModelRefused (bad usage) otherwise."""
    if not _NAME.fullmatch(name) or name.endswith("."):
        raise ModelRefused(f"{name!r} is not an adapter name", None,
                           "use letters, digits, '_', '-' and '.', at most 64, no path")
    return name


def adapter_folder(model_folder: Path, name: str) -> Path:
    """Where the named adapter of this model lives."""
    return adapters_root(model_folder) / check_name(name)


def check_adapter(model_folder: Path, name: str) -> Path:
    """The adapter's folder once every check passed; ModelRefused saying what is wrong."""
    folder = adapter_folder(model_folder, name)
    if not folder.is_dir():
        known = ", ".join(a.name for a in list_adapters(model_folder)) or "none"
        raise ModelRefused(f"no adapter {name!r} for the model in {model_folder}", folder,
                           f"adapters of this model: {known} (kernel-studio teach adapters)")
    missing = [n for n in REQUIRED if not (folder / n).is_file()]
    if missing:
        raise ModelRefused(f"adapter {name!r} in {folder} is incomplete: {', '.join(missing)} "
                           "missing; it was refused", folder / missing[0],
                           "train it again (kernel-studio teach train) or restore it")
    try:
        refuse_pickles(folder)
        refuse_remote_code(folder)
        verify_manifest(folder)
        check_safetensors(folder / WEIGHTS_NAME)
        _check_prompt_style(folder)
    except ModelRefused as error:  # the model's own advice (import it again) does not fit
        raise ModelRefused(error.message, error.path,
                           f"restore adapter {name!r} from a copy, train it again (kernel-studio "
                           f"teach train), or remove {folder}") from None
    return folder


def _check_prompt_style(folder: Path) -> None:
    """Refuse a card that names a prompt style this version does not ask in."""
    style = read_card(folder).get(CARD_KEY, "full")
    if style not in PROMPT_STYLES:
        raise ModelRefused(f"the adapter's {CARD_NAME} names the prompt style {style!r}, which "
                           f"this Kernel Studio does not know ({', '.join(PROMPT_STYLES)})",
                           folder / CARD_NAME)


def seal(folder: Path, source: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """Write the manifest of a finished adapter folder (after its card); `name` when the folder
    is a staging one that will be renamed."""
    return write_manifest(folder, source=source, name=name or folder.name)


def read_card(folder: Path) -> dict[str, Any]:
    """The adapter's card, or {} when it cannot be read."""
    try:
        data = json.loads((folder / CARD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def list_adapters(model_folder: Path) -> list[AdapterInfo]:
    """Every adapter folder of a model, with what is wrong with it ('' when none)."""
    root = adapters_root(model_folder)
    found = []
    # Hidden folders are a training run's checkpoint or staging, not adapters.
    folders = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")] \
        if root.is_dir() else []
    for folder in sorted(folders):
        try:
            check_adapter(model_folder, folder.name)
            problem = ""
        except ModelRefused as error:
            problem = str(error)
        found.append(AdapterInfo(folder.name, folder, problem, read_card(folder)))
    return found


def resolve_adapter(model_folder: Path, requested: str | None) -> str | None:
    """The adapter to load for --adapter: 'auto' (or nothing) is the model's adapter named
    'default' when it has one, 'none' the base model alone, anything else that name (checked
    when the model loads)."""
    if requested in (None, AUTO):
        return DEFAULT_NAME if (adapters_root(model_folder) / DEFAULT_NAME).is_dir() else None
    return None if requested == NONE else requested


def _same_files(installed: Path, shipped: Path, names: tuple[str, ...] | None = None) -> bool:
    """Whether the two adapter folders' manifests record the same files (only those `names`,
    when given; an unreadable manifest counts as different)."""
    try:
        ours, theirs = read_manifest(installed)["files"], read_manifest(shipped)["files"]
        if names is not None:
            ours = {n: ours.get(n) for n in names}
            theirs = {n: theirs.get(n) for n in names}
        return bool(ours == theirs)
    except (ModelRefused, OSError, KeyError, TypeError, ValueError, AttributeError):
        return False


def _keep_aside(folder: Path) -> Path:
    """Rename an installed adapter to <name>-<the date its manifest was written>, or a free
    variant of that name: a newer shipped adapter takes its place, and nothing is lost."""
    try:
        created = str(read_manifest(folder).get("created", ""))[:10].replace("-", "")
    except (ModelRefused, OSError, ValueError):
        created = ""
    stem = f"{folder.name}-{created or 'previous'}"
    target, number = folder.with_name(stem), 2
    while target.exists():
        target, number = folder.with_name(f"{stem}-{number}"), number + 1
    os.replace(folder, target)
    return target


def install_shipped(model_folder: Path, force: bool = False,
                    shipped_for: str | None = None) -> list[str]:
    """Copy the adapters shipped for this model (resources/adapters/<shipped_for, by default the
    model folder's name>/) into its adapters/ folder, each checked against its own manifest
    before it is moved into place. An adapter already there stays when it is the one shipped,
    and is replaced when only its card or README differ (the same weights); one whose weights
    differ (an earlier release's) is kept beside it as <name>-<its date>, so that it can still
    be chosen, unless `force`. The names installed."""
    source_root = RESOURCES / ADAPTERS_DIR / (shipped_for or model_folder.name)
    sources = sorted(p for p in source_root.iterdir() if p.is_dir()) if source_root.is_dir() \
        else []
    installed = []
    for source in sources:
        target = adapters_root(model_folder) / check_name(source.name)
        if target.is_dir() and not force:
            if _same_files(target, source):
                continue
            # The same weights with a corrected card or README: the same adapter, replaced.
            if not _same_files(target, source, (WEIGHTS_NAME, CONFIG_NAME)):
                _keep_aside(target)
        staging = adapters_root(model_folder) / f".{source.name}.staging"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(source, staging)
        verify_manifest(staging)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
        installed.append(source.name)
    return installed


def recorded_source(folder: Path) -> dict[str, Any]:
    """What the adapter's manifest says it was made from."""
    source = read_manifest(folder).get("source", {})
    return source if isinstance(source, dict) else {}


def apply_adapter(model: Any, folder: Path, merge: bool) -> Any:
    """The model with the (checked) adapter loaded over it by peft, for inference. Merged into
    full-precision weights, the result is the model's own class again (so everything that reads
    its layers works unchanged); over quantized weights peft's wrapper stays."""
    from peft import PeftModel

    wrapped = PeftModel.from_pretrained(model, str(folder), is_trainable=False)
    return wrapped.merge_and_unload() if merge else wrapped
