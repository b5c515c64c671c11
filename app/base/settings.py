"""Every setting of Kernel Studio, declared once: its name, type, default, bounds or choices,
the environment variable that may override it, and what it means.

`TABLE` holds them all. The command line's flags (app.cli.flags), the GUI's Settings dialog
(ui.preferences.table) and the doctor read their defaults, bounds and help from here, and an
environment variable is parsed and checked only here: `value(NAME)` (or the typed `integer`,
`number`, `text`) gives the typed value, and a bad one raises SettingError naming the variable,
its value and what it may be.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar


class BackendChoice(StrEnum):
    """Where kernels run, as a user chooses it (every command's --backend, the GUI's menu and
    Settings): auto (the GPU when there is one, else CPU emulation), pycuda or cpu."""

    AUTO = "auto"
    PYCUDA = "pycuda"
    CPU = "cpu"


BACKEND_CHOICES = tuple(choice.value for choice in BackendChoice)


class Compiler(StrEnum):
    """[kernel].compiler and --compiler: NVRTC (in-process, the default) or nvcc (files with
    host code too)."""

    NVRTC = "nvrtc"
    NVCC = "nvcc"


class Kind(StrEnum):
    """A setting's type: a whole number, a number, free text, one of its choices, or a path."""

    INT = "int"
    FLOAT = "float"
    TEXT = "text"
    CHOICE = "choice"
    PATH = "path"


# What a setting's value is in Python; None where the default is worked out where it is used
# (a folder of the user's, the cores this process may use).
Value = int | float | str | None


class SettingError(ValueError):
    """A setting's value (from the environment, a flag or the settings file) is not one it can
    take; the message names the setting, the value and what it may be."""


Number = TypeVar("Number", int, float)

# The time limit of one kernel launch in verify and bench, in seconds (CLI --timeout, GUI), and
# the range a user may set it in: below 0.1 s not even a launch can start (the kernel would be
# blamed for a typo), and a limit beyond a day is a typo that overflows the clocks it is added
# to.
TIME_LIMIT_S = 10.0
TIME_LIMIT_MIN_S = 0.1
TIME_LIMIT_MAX_S = 24 * 3600.0
# The host C++ compiler's time limit for the CPU backend's builds.
HOST_COMPILE_TIME_LIMIT_S = 150.0
# A spec's Python reference: loading it, and each call, in its own (sandboxed) process.
REFERENCE_TIME_LIMIT_S = 120.0
# Seeds verify draws afresh besides the spec's own (--random-seeds), and the most it may draw:
# each is a full run of every case, so a thousand is already hours on a slow kernel.
RANDOM_SEEDS = 1
RANDOM_SEEDS_MAX = 1000
# The assistant's decoding paths (app.assist.model.fastdecode.MODES).
DECODE_MODES = ("auto", "graph", "static", "generate")


@dataclass(frozen=True)
class Setting:
    """One setting: `name` (how code and the doctor call it), its `kind`, its `default` (None
    when worked out where it is used; `default_note` then says how), `help` (what it means),
    its bounds (`minimum`..`maximum` for numbers) or `choices`, and the environment `variable`
    that overrides the default ('' when none does)."""

    name: str
    kind: Kind
    default: Value
    help: str
    variable: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    # What the default is when it is worked out where it is used (default None).
    default_note: str = ""

    @property
    def meaning(self) -> str:
        """The help text (the name the environment settings had before the table)."""
        return self.help

    def get(self) -> str | None:
        """The environment variable's raw text, or None when there is none, or it is unset or
        empty (for path and text settings, whose text is their value)."""
        return (os.environ.get(self.variable) or None) if self.variable else None

    def bounds(self) -> str:
        """What the value may be, in words ('' when anything goes)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.minimum is not None and self.maximum is not None:
            return f"from {self.minimum:g} to {self.maximum:g}"
        return ""

    def parse(self, text: str) -> Value:
        """`text` as this setting's type; SettingError (saying what is wrong, without naming
        where the text came from) when it is not one of the values it may take."""
        if self.kind is Kind.INT:
            return self._in_bounds(_whole(text.strip()))
        if self.kind is Kind.FLOAT:
            return self._in_bounds(_finite(text.strip()))
        if self.kind is Kind.CHOICE:
            word = text.strip().lower()
            if word not in self.choices:
                raise SettingError(f"{text!r} is not one of the choices")
            return word
        return text

    def _in_bounds(self, number: Number) -> Number:
        """`number`, or SettingError when it lies outside minimum..maximum."""
        low = -math.inf if self.minimum is None else self.minimum
        high = math.inf if self.maximum is None else self.maximum
        if not low <= number <= high:
            raise SettingError(f"{number:g} is out of range")
        return number

    def value(self) -> Value:
        """The environment variable's value in this setting's type, else the default;
        SettingError naming the variable when it is set to a value the setting cannot take."""
        raw = self.get()
        if raw is None:
            return self.default
        try:
            return self.parse(raw)
        except SettingError as error:
            allowed = f"; it must be {self.bounds()}" if self.bounds() else ""
            default = "" if self.default is None else f" ({self.default_text()})"
            raise SettingError(f"{self.variable}={raw!r}: {error}{allowed}: set it so, or "
                               f"unset it for the default{default}") from None

    def origin(self) -> str:
        """Where value() comes from: 'environment variable NAME' or 'default'."""
        return f"environment variable {self.variable}" if self.get() is not None else "default"

    def default_text(self) -> str:
        """The default in words: its value, or the help's explanation when it is worked out
        where it is used."""
        if self.default is None:
            return self.default_note or "none"
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)


def _whole(text: str) -> int:
    """`text` as a whole number (1_000 allowed), or SettingError."""
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise SettingError(f"{text!r} is not a whole number") from None


def _finite(text: str) -> float:
    """`text` as a finite number, or SettingError."""
    try:
        number = float(text.replace("_", ""))
    except ValueError:
        raise SettingError(f"{text!r} is not a number") from None
    if not math.isfinite(number):
        raise SettingError(f"{text!r} is not a finite number")
    return number


TIME_LIMIT = Setting(
    "time_limit", Kind.FLOAT, TIME_LIMIT_S, "seconds one kernel launch may run before it is "
    "killed", minimum=TIME_LIMIT_MIN_S, maximum=TIME_LIMIT_MAX_S)
BACKEND = Setting(
    "backend", Kind.CHOICE, BackendChoice.AUTO.value, "where kernels run: auto (the GPU, else "
    "CPU emulation), pycuda or cpu", choices=BACKEND_CHOICES)
COMPILER = Setting(
    "compiler", Kind.CHOICE, Compiler.NVRTC.value, "the CUDA compiler: nvrtc (in-process) or "
    "nvcc (also takes files with host code)", choices=tuple(c.value for c in Compiler))
RANDOM_SEED_COUNT = Setting(
    "random_seeds", Kind.INT, RANDOM_SEEDS, "seeds verify draws afresh besides the spec's own, "
    "printed so a failure can be replayed", minimum=0, maximum=RANDOM_SEEDS_MAX)
HOST_COMPILE_TIME_LIMIT = Setting(
    "host_compile_time_limit", Kind.FLOAT, HOST_COMPILE_TIME_LIMIT_S, "seconds the host C++ "
    "compiler may take for a CPU-backend build", minimum=TIME_LIMIT_MIN_S,
    maximum=TIME_LIMIT_MAX_S)

CACHE_DIR = Setting(
    "cache_dir", Kind.PATH, None, "folder for compiled kernels and device measurements",
    "KERNEL_STUDIO_CACHE", default_note="the user's cache folder")
DATA_DIR = Setting(
    "data_dir", Kind.PATH, None, "folder for recovery files, settings, trust and imported "
    "skills", "KERNEL_STUDIO_DATA", default_note="the user's data folder")
MODELS_DIR = Setting(
    "models_dir", Kind.PATH, None, "folder of local models", "KERNEL_STUDIO_MODELS",
    default_note="models/ in a checkout, else the data folder's models/")
CXX = Setting(
    "cxx", Kind.PATH, None, "host C++ compiler of the CPU backend", "KERNEL_STUDIO_CXX",
    default_note="the first of g++, c++, clang++ on the PATH")
# More than the CPU backend uses (it takes at most 16) is clamped there, not refused: a value
# that suits a big machine is not a typo. Beyond 1024 it is.
CPU_THREADS = Setting(
    "cpu_threads", Kind.INT, None, "threads of a CPU-backend launch, at most 16 used",
    "KERNEL_STUDIO_CPU_THREADS", minimum=1, maximum=1024,
    default_note="the cores this process may use")
CPU_UCONTEXT = Setting(
    "cpu_ucontext", Kind.CHOICE, "0", "1 selects the portable ucontext switch of the CPU "
    "backend (used on every CPU but x86-64)", "KERNEL_STUDIO_CPU_UCONTEXT", choices=("0", "1"))
SANDBOX = Setting(
    "sandbox", Kind.CHOICE, "auto", "'none' turns the sandbox off (then only content you "
    "trusted with `kernel-studio trust` runs); auto: bubblewrap when it works here",
    "KERNEL_STUDIO_SANDBOX", choices=("auto", "none"))
REFERENCE_TIMEOUT = Setting(
    "reference_timeout", Kind.FLOAT, REFERENCE_TIME_LIMIT_S, "seconds a spec's reference may "
    "take to load and for each case", "KERNEL_STUDIO_REFERENCE_TIMEOUT",
    minimum=TIME_LIMIT_MIN_S, maximum=TIME_LIMIT_MAX_S)
BWRAP = Setting(
    "bwrap", Kind.PATH, None, "path of the bubblewrap program", "KERNEL_STUDIO_BWRAP",
    default_note="bwrap on the PATH")
STARTUP_PROBE = Setting(
    "startup_probe", Kind.TEXT, None, "set by benchmarks/gui_startup.py: the GUI prints when "
    "its window is exposed, then quits", "KERNEL_STUDIO_STARTUP_PROBE", default_note="unset")
TOKENIZER_DIR = Setting(
    "tokenizer_dir", Kind.PATH, None, "tests on a GPU machine: a tokenizer folder where the "
    "model folder does not travel", "KERNEL_STUDIO_TOKENIZER_DIR",
    default_note="the model folder's")
AUDIT_LOG = Setting(
    "audit_log", Kind.PATH, None, "the audit log that verify, bench, compare, bundle and "
    "review append to; 'off' records nothing", "KERNEL_STUDIO_AUDIT_LOG",
    default_note="the data folder's audit/audit.jsonl")
AUDIT_KEY = Setting(
    "audit_key", Kind.PATH, None, "folder of the Ed25519 key that signs audit entries",
    "KERNEL_STUDIO_AUDIT_KEY", default_note="the data folder's audit/")
DECODE = Setting(
    "decode", Kind.CHOICE, "auto", "how the assistant decodes: graph (static KV cache and CUDA "
    "graphs), static (static cache, eager steps), generate (transformers' generate) or auto "
    "(graph on a GPU, generate on the CPU)", "KERNEL_STUDIO_DECODE", choices=DECODE_MODES)
NF4_KERNEL = Setting(
    "nf4_kernel", Kind.CHOICE, "auto", "how a GPU's NF4 layers decode: auto (the nf4_gemv "
    "template's tensor-core kernel where the GPU has bf16 tensor cores, compute capability 8.0 "
    "and up; bitsandbytes' path elsewhere), on (the template's kernel on any GPU) or off "
    "(bitsandbytes' path)", "KERNEL_STUDIO_NF4_KERNEL", choices=("auto", "on", "off"))

TABLE: tuple[Setting, ...] = (
    TIME_LIMIT, BACKEND, COMPILER, RANDOM_SEED_COUNT, HOST_COMPILE_TIME_LIMIT, CACHE_DIR,
    DATA_DIR, MODELS_DIR, CXX, CPU_THREADS, CPU_UCONTEXT, SANDBOX, BWRAP, REFERENCE_TIMEOUT,
    STARTUP_PROBE, TOKENIZER_DIR, AUDIT_LOG, AUDIT_KEY, DECODE, NF4_KERNEL)
BY_NAME = {setting.name: setting for setting in TABLE}
# The settings an environment variable may override.
ALL = tuple(setting for setting in TABLE if setting.variable)


def setting(name: str) -> Setting:
    """The setting called `name`; KeyError listing the names when there is none."""
    if name not in BY_NAME:
        raise KeyError(f"no setting {name!r}; the settings are {', '.join(BY_NAME)}")
    return BY_NAME[name]


def value(name: str) -> Value:
    """The effective value of the setting called `name` (see Setting.value)."""
    return setting(name).value()


def _of_kind(entry: Setting, *kinds: Kind) -> Value:
    """`entry`'s effective value; TypeError when the caller asked for the wrong type (a bug)."""
    if entry.kind not in kinds:
        raise TypeError(f"setting {entry.name} is {entry.kind}, not {' or '.join(kinds)}")
    return entry.value()


def integer(entry: Setting) -> int | None:
    """A whole-number setting's effective value (None: its default is worked out where used)."""
    found = _of_kind(entry, Kind.INT)
    return None if found is None else int(found)


def number(entry: Setting) -> float:
    """A number setting's effective value."""
    found = _of_kind(entry, Kind.FLOAT)
    if found is None:
        raise TypeError(f"setting {entry.name} has no default to fall back on")
    return float(found)


def text(entry: Setting) -> str | None:
    """A text, choice or path setting's effective value (None when unset with no default)."""
    found = _of_kind(entry, Kind.TEXT, Kind.CHOICE, Kind.PATH)
    return None if found is None else str(found)


@dataclass(frozen=True)
class Effective:
    """What the doctor shows of one setting: its value here (or why it is wrong) and where it
    came from."""

    name: str
    variable: str
    value: str
    origin: str
    problem: str = ""


def effective(entry: Setting) -> Effective:
    """`entry`'s value here and its origin; a bad environment value is reported, not raised."""
    try:
        found = entry.value()
    except SettingError as error:
        return Effective(entry.name, entry.variable, entry.get() or "", entry.origin(),
                         str(error))
    shown = entry.default_text() if found is None else (
        f"{found:g}" if isinstance(found, float) else str(found))
    return Effective(entry.name, entry.variable, shown, entry.origin())


def environment_problems() -> list[str]:
    """What is wrong with each environment variable set to a value its setting cannot take."""
    return [found.problem for found in map(effective, ALL) if found.problem]


def describe() -> list[str]:
    """One line per environment variable: its name, its value here, its meaning and default."""
    return [f"{s.variable}={s.get() or ''}  ({s.help}; default: {s.default_text()})"
            for s in ALL]
