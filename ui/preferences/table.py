"""Every setting of the window, declared once with its type, bounds, default and meaning, and
read from or written to the settings file (QSettings) only here.

A setting the core also has (the backend, the time limit) is made from its entry in
app.base.settings.TABLE: its type, default, bounds or choices and help come from there. The
window's own settings (the font size, the compiler's architecture and options, the adapter) are
declared here; the compiler's own defaults apply when one of those is left empty.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QSettings

from app.base import settings
from app.base.settings import Kind


def _arch_problem(value: str) -> str:
    """What is wrong with an architecture ('' when it is empty or real)."""
    if not value:
        return ""
    # The compiler's checks (about 80 ms of imports, and once a compile child to ask NVRTC
    # what it supports) load when a value is checked.
    from app.compile.api import arch_problem

    return arch_problem(value)


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
    """One setting: its key in the settings file, its label, its kind (Kind: int, float, text
    or choice) and bounds or choices, its default, what it means, and the core's setting it
    stands for (None for the window's own)."""

    key: str
    label: str
    kind: Kind
    default: Any
    meaning: str
    minimum: float = 0
    maximum: float = 0
    choices: tuple[str, ...] = ()
    check: Callable[[str], str] = field(default=lambda _value: "")
    setting: settings.Setting | None = None

    @classmethod
    def of(cls, key: str, label: str, setting: settings.Setting) -> Preference:
        """The row for one of the core's settings: everything but its key and label from the
        table."""
        return cls(key, label, setting.kind, setting.default, setting.help,
                   setting.minimum or 0, setting.maximum or 0, setting.choices, setting=setting)

    def convert(self, raw: object) -> Any:
        """A stored or typed value in this setting's type (the default when it is not one); a
        core setting's value is parsed and checked by its table entry, as the environment's."""
        if self.setting is not None:
            try:
                return self.setting.parse(str(raw))
            except settings.SettingError:
                return self.default
        try:
            if self.kind is Kind.INT:
                value: Any = int(str(raw))
            elif self.kind is Kind.FLOAT:
                value = float(str(raw))
            else:
                value = str(raw).strip()
        except ValueError:
            return self.default
        if self.kind in (Kind.INT, Kind.FLOAT) and not self.minimum <= value <= self.maximum:
            return self.default
        if self.kind is Kind.CHOICE and value not in self.choices:
            return self.default
        return value


PREFERENCES: tuple[Preference, ...] = (
    Preference("editor/font_size", "Editor font size", Kind.INT, 10,
               "points; the editor's text and line numbers", 6, 40),
    Preference("build/arch", "Default architecture", Kind.TEXT, "",
               "the GPU architecture to build for (sm_90, say); empty: this machine's GPU, "
               "else sm_90", check=_arch_problem),
    Preference("build/options", "Compiler options", Kind.TEXT, "",
               "added to every build after the spec's own options (-lineinfo, -DNAME=1, ...), "
               "from the compiler's allowlist", check=_options_problem),
    Preference.of("run/backend", "Backend", settings.BACKEND),
    Preference.of("run/time_limit", "Time limit (s)", settings.TIME_LIMIT),
)
BY_KEY = {preference.key: preference for preference in PREFERENCES}
# Chosen in the Assistant pane, not the Settings dialog: the dialog writes back every value it
# was opened with, which would undo a switch made in the pane since.
ASSISTANT_ADAPTER = Preference(
    "assistant/adapter", "Assistant adapter", Kind.TEXT, "auto",
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
