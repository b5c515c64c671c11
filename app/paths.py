"""Where Kernel Studio finds its resources and keeps its caches, models and recovery files."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from app import settings

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "resources"
APP_NAME = "kernel-studio"


def _override(setting: settings.EnvSetting, default: Path) -> Path:
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
    checkout_models = ROOT / "models"
    default = checkout_models if (ROOT / "pyproject.toml").exists() else data_dir() / "models"
    return _override(settings.MODELS_DIR, default)
