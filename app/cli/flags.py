"""Argument types for numbers and architectures on the command line, and the builders of the
flags every command shares. argparse calls the types while it reads the flags, so NaN,
infinity, a negative time or an impossible architecture ends as bad usage (exit 2) with one
message naming the flag, before any engine sees the value. A flag that stands for a setting
(app.base.settings.TABLE) takes its default, bounds or choices and help from the table."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from app.base import settings

MAX_SECONDS = float(settings.TIME_LIMIT.maximum or settings.TIME_LIMIT_MAX_S)
_PROBE = "__global__ void probe() {}\n"


def finite(text: str) -> float:
    """A finite number."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def within(low: float, high: float, what: str,
           include_low: bool = False) -> Callable[[str], float]:
    """An argument type for a finite number in (low, high] (or [low, high])."""

    def parse(text: str) -> float:
        """The number, or the range it must lie in."""
        value = finite(text)
        if not (low <= value if include_low else low < value) or value > high:
            opening = "at least" if include_low else "more than"
            raise argparse.ArgumentTypeError(f"{text!r}: {what} must be {opening} {low:g} and "
                                             f"at most {high:g}")
        return value

    return parse


MIN_SECONDS = float(settings.TIME_LIMIT.minimum or settings.TIME_LIMIT_MIN_S)
seconds = within(MIN_SECONDS, MAX_SECONDS, "seconds", include_low=True)
milliseconds = within(0.0, MAX_SECONDS * 1000, "milliseconds")


def whole(low: int, high: int, what: str) -> Callable[[str], int]:
    """An argument type for a whole number from low to high."""

    def parse(text: str) -> int:
        """The number, or the range it must lie in."""
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: {what} must be from {low} to {high}")
        return value

    return parse


# CUDA's limit on threads per block on every architecture Kernel Studio compiles for.
block_threads = whole(1, 1024, "a block's threads")
# Bytes: negative is meaningless; above 2**31 no device has it (occupancy then says why).
shared_bytes = whole(0, 2**31 - 1, "dynamic shared memory in bytes")


def arch(text: str) -> str:
    """A GPU architecture written as sm_<major><minor> (sm_90, sm_90a, sm_100f)."""
    from app.compile import OptionError, check_arch  # only where an --arch is given

    try:
        return check_arch(text)
    except OptionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def unsupported_arch(text: str) -> str | None:
    """Why NVRTC cannot compile for `text` (its list of architectures), or None. Compiles an
    empty kernel, so that a typo such as sm_10 is bad usage now, not a compile error later."""
    from app.compile import compile_source

    result = compile_source(_PROBE, filename="probe.cu", folder=None, arch=text)
    if result.stage in ("options", "input"):
        return result.message or f"{text} is not an architecture this compiler knows"
    return None


def setting_help(setting: settings.Setting, help: str | None = None,
                 default: settings.Value = None) -> str:
    """A flag's help: what it does here (`help`, else the setting's own help), then the
    default (the setting's unless the command has its own) and the bounds from the table;
    choices are left to argparse, which lists them."""
    shown = setting.default if default is None else default
    facts = [] if shown is None else [
        f"default {shown:g}" if isinstance(shown, float) else f"default {shown}"]
    if setting.minimum is not None and setting.maximum is not None:
        facts.append(setting.bounds())
    return f"{help or setting.help}" + (f" ({'; '.join(facts)})" if facts else "")


def add_backend(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """--backend: where kernels run (settings.BACKEND), its choices and default from the
    table."""
    parser.add_argument("--backend", choices=settings.BACKEND.choices,
                        default=settings.BACKEND.default, help=setting_help(settings.BACKEND, help))


def add_timeout(parser: argparse.ArgumentParser, help: str | None = None,
                default: float = settings.TIME_LIMIT_S) -> None:
    """--timeout: seconds, within the bounds every time limit shares (settings.TIME_LIMIT);
    `default` for a command whose limit is of another thing (the compiler's)."""
    parser.add_argument("--timeout", type=seconds, default=default, metavar="S",
                        help=setting_help(settings.TIME_LIMIT, help, default))


def add_compiler(parser: argparse.ArgumentParser, help: str | None = None,
                 flag: str = "--compiler", default: str | None = None) -> None:
    """`flag` (--compiler; compile calls it --backend): NVRTC or nvcc (settings.COMPILER);
    `default` None leaves the choice to the spec, which the help then says."""
    shown = setting_help(settings.COMPILER, help, default) if default else help
    parser.add_argument(flag, choices=settings.COMPILER.choices, default=default,
                        help=shown or settings.COMPILER.help)


def add_random_seeds(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """--random-seeds N (settings.RANDOM_SEED_COUNT): left None here, so that the command can
    tell an N given from none (a --seed replay draws none); the command checks the bounds."""
    parser.add_argument("--random-seeds", type=int, default=None, metavar="N",
                        help=setting_help(settings.RANDOM_SEED_COUNT, help))


def add_json(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    """--json: print `what` as JSON for machines instead of text for people."""
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")
