"""Where Kernel Studio finds its resources and keeps its caches, models and recovery files."""

from __future__ import annotations

import hashlib
import sys
import time
from importlib import resources
from pathlib import Path

import platformdirs

from app.base import settings

ROOT = Path(__file__).resolve().parents[2]
APP_NAME = "kernel-studio"


def _resources_folder() -> Path:
    """Templates, skills, prompts, themes and tasks: the package data of an installed app
    (app/resources, mapped there by setup.py), else the checkout's resources/ folder."""
    installed = resources.files("app") / "resources"
    if installed.is_dir():
        return Path(str(installed))
    return ROOT / "resources"


RESOURCES = _resources_folder()


def is_checkout() -> bool:
    """Whether the app runs from a source checkout (editable), not from an installed wheel."""
    return (ROOT / "pyproject.toml").is_file() and (ROOT / "resources").is_dir()


def install_record() -> Path | None:
    """The folder where packaging/install.sh left the bundle's signed manifest and its own copy
    (PREFIX/bundle, beside the PREFIX/venv this Python runs in), or None when not installed so."""
    record = Path(sys.prefix).parent / "bundle"
    return record if (record / "manifest.json").is_file() else None


def _override(setting: settings.Setting, default: Path) -> Path:
    """The folder named by an environment variable, else the default (tests point these at tmp)."""
    value = setting.get()
    return Path(value) if value else default


def cache_dir() -> Path:
    """The user's cache folder (compiled kernels, device measurements)."""
    return _override(settings.CACHE_DIR, Path(platformdirs.user_cache_dir(APP_NAME)))


def data_dir() -> Path:
    """The user's data folder (recovery files, settings, imported skills)."""
    return _override(settings.DATA_DIR, Path(platformdirs.user_data_dir(APP_NAME)))


def models_dir() -> Path:
    """Models: the checkout's models/ folder when running from one, else the user's data folder."""
    default = ROOT / "models" if is_checkout() else data_dir() / "models"
    return _override(settings.MODELS_DIR, default)


def proposals_dir(spec_path: Path) -> Path:
    """Where a propose run keeps its attempts: a new folder in the data folder, named for the
    kernel's folder and the time, never inside the user's own folder (their files change only
    when they save); the path's hash keeps two folders of the same name apart."""
    folder = Path(spec_path).resolve().parent
    tag = hashlib.sha256(str(folder).encode()).hexdigest()[:8]
    return data_dir() / "proposals" / f"{folder.name}-{tag}" / time.strftime("%Y%m%d-%H%M%S")
