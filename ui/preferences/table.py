"""Every setting of the window, declared once with its type, bounds, default and meaning, and
read from or written to the settings file (QSettings) only here.

A setting the core also has takes the core's default from app.base.settings (the time limit); the
compiler's own defaults (architecture, options) apply when a setting is left empty.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QSettings

from app.base import settings


def _arch_problem(value: str) -> str:
    """What is wrong with an architecture ('' when it is empty or real)."""
    if not value:
        return ""
    # The compiler's option checks (about 80 ms of imports) load when a value is checked.
    from app.compile import OptionError, check_arch

    try:
        check_arch(value)
    except OptionError as error:
        return str(error)
    return ""


def _options_problem(value: str) -> str:
    """What is wrong with extra compiler options ('' when the compiler's allowlist takes
    them)."""
    try:
        options = shlex.split(value)
    except ValueError as error:
        return f"cannot be split into options: {error}"
    if not options:
        return ""
    from app.compile import OptionError, check_options

    try:
        check_options(options, None)
    except OptionError as error:
        return str(error)
    return ""


@dataclass(frozen=True)
class Preference:
    """One setting: its key in the settings file, its label, its kind (int, float, text or
    choice) and bounds or choices, its default, and what it means."""

    key: str
    label: str
    kind: str
    default: Any
    meaning: str
    minimum: float = 0
    maximum: float = 0
    choices: tuple[str, ...] = ()
    check: Callable[[str], str] = field(default=lambda _value: "")

    def convert(self, raw: object) -> Any:
        """A stored or typed value in this setting's type (the default when it is not one)."""
        try:
            if self.kind == "int":
                value: Any = int(str(raw))
            elif self.kind == "float":
                value = float(str(raw))
            else:
                value = str(raw).strip()
        except ValueError:
            return self.default
        if self.kind in ("int", "float") and not self.minimum <= value <= self.maximum:
            return self.default
        if self.kind == "choice" and value not in self.choices:
            return self.default
        return value


PREFERENCES: tuple[Preference, ...] = (
    Preference("editor/font_size", "Editor font size", "int", 10,
               "points; the editor's text and line numbers", 6, 40),
    Preference("build/arch", "Default architecture", "text", "",
               "the GPU architecture to build for (sm_90, say); empty: this machine's GPU, "
               "else sm_90", check=_arch_problem),
    Preference("build/options", "Compiler options", "text", "",
               "added to every build after the spec's own options (-lineinfo, -DNAME=1, ...), "
               "from the compiler's allowlist", check=_options_problem),
    Preference("run/backend", "Backend", "choice", "auto",
               "where Verify and Bench run: auto (the GPU, else CPU emulation), pycuda or cpu",
               choices=settings.BACKEND_CHOICES),
    Preference("run/time_limit", "Time limit (s)", "float", settings.TIME_LIMIT_S,
               "how long one kernel launch may run before it is killed", settings.TIME_LIMIT_MIN_S,
               settings.TIME_LIMIT_MAX_S),
)
BY_KEY = {preference.key: preference for preference in PREFERENCES}
# Chosen in the Assistant pane, not the Settings dialog: the dialog writes back every value it
# was opened with, which would undo a switch made in the pane since.
ASSISTANT_ADAPTER = Preference(
    "assistant/adapter", "Assistant adapter", "text", "auto",
    "the LoRA adapter the assistant loads over the model: auto (the model's 'default' adapter "
    "when it has one), none (the base model alone) or an adapter's name")


def load(store: QSettings) -> dict[str, Any]:
    """Every setting's value from the settings file (defaults where absent or invalid)."""
    return {p.key: p.convert(store.value(p.key, p.default)) for p in PREFERENCES}


def save(store: QSettings, values: dict[str, Any]) -> None:
    """Write the settings that are known, as their types."""
    for key, value in values.items():
        if key in BY_KEY:
            store.setValue(key, BY_KEY[key].convert(value))
    store.sync()


def read_one(store: QSettings, preference: Preference) -> Any:
    """One setting's value from the settings file (its default when absent or invalid)."""
    return preference.convert(store.value(preference.key, preference.default))


def write_one(store: QSettings, preference: Preference, value: Any) -> None:
    """Write one setting, as its type."""
    store.setValue(preference.key, preference.convert(value))
    store.sync()


def problems(values: dict[str, Any]) -> dict[str, str]:
    """What is wrong with each value that is wrong, by key."""
    found = {}
    for key, value in values.items():
        problem = BY_KEY[key].check(str(value)) if key in BY_KEY else f"unknown setting {key}"
        if problem:
            found[key] = problem
    return found


def extra_options(values: dict[str, Any]) -> tuple[str, ...]:
    """The compiler options setting as a list of options."""
    return tuple(shlex.split(str(values.get("build/options", ""))))
