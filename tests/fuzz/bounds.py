"""Running a parser on one input under a bound: in a forked child (a catastrophic regex cannot
be interrupted inside the process: the regex engine never checks for signals), timed by the
child's own CPU time, so a loaded machine slows the test but does not fail it.

`outcome` says how the parser ended: it returned, or it raised one of the errors it may raise
(its own clear error type). Anything else (another exception, RecursionError, MemoryError, a
hang) fails the test, naming the input.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# CPU seconds an input of up to 64 KiB may take, and the wall-clock wait for a child on a
# machine that others share (past it, the parser is taken to hang).
SECONDS = 2.0
WALL = 60.0
_FORK = multiprocessing.get_context("fork")


@dataclass(frozen=True)
class Outcome:
    """How one run ended: `error` is the raised type's name ('' when it returned)."""

    error: str
    message: str
    cpu: float


def _child(pipe: Any, parse: Callable[[Any], object], value: Any,
           allowed: tuple[type[BaseException], ...]) -> None:
    """Run `parse(value)` and send back how it ended."""
    start = time.process_time()
    try:
        parse(value)
        result = ("", "")
    except allowed as error:
        result = (type(error).__name__, str(error)[:300])
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which fails
        result = ("UNEXPECTED " + type(error).__name__, traceback.format_exc()[-2000:])
    pipe.send((*result, time.process_time() - start))
    pipe.close()


def outcome(parse: Callable[[Any], object], value: Any,
            allowed: tuple[type[BaseException], ...]) -> Outcome:
    """Run `parse(value)` in a forked child; fail (AssertionError) on a hang or on an
    exception that is not one of `allowed`."""
    here, there = _FORK.Pipe(duplex=False)
    child = _FORK.Process(target=_child, args=(there, parse, value, allowed), daemon=True)
    child.start()
    there.close()
    try:
        if not here.poll(WALL):
            raise AssertionError(f"{_name(parse)} ran past {WALL:.0f} s on {_show(value)}")
        error, message, cpu = here.recv()
    except EOFError:
        raise AssertionError(f"{_name(parse)} died (exit {child.exitcode}) on "
                             f"{_show(value)}") from None
    finally:
        child.kill()
        child.join()
        here.close()
    assert not error.startswith("UNEXPECTED"), (
        f"{_name(parse)} raised {error} on {_show(value)}:\n{message}")
    return Outcome(error, message, cpu)


def bounded(parse: Callable[[Any], object], value: Any,
            allowed: tuple[type[BaseException], ...], seconds: float = SECONDS) -> Outcome:
    """`outcome`, also failing when the run took more than `seconds` of CPU time."""
    result = outcome(parse, value, allowed)
    assert result.cpu <= seconds, (
        f"{_name(parse)} took {result.cpu:.2f} s of CPU (at most {seconds}) on {_show(value)}")
    return result


def grows_linearly(parse: Callable[[Any], object], make: Callable[[int], Any], n: int,
                   allowed: tuple[type[BaseException], ...]) -> None:
    """The work on `make(4 * n)` is at most about four times the work on `make(n)`: 8 times plus
    50 ms leaves room for noise, and a quadratic parser (16 times) or worse still fails once
    `make(n)` costs it some 50 ms. Each size is timed twice, the faster run kept."""
    def cpu(size: int) -> float:
        return min(bounded(parse, make(size), allowed, SECONDS * 5).cpu for _ in range(2))
    small, large = cpu(n), cpu(4 * n)
    assert large <= 8 * small + 0.05, (
        f"{_name(parse)}: {large:.3f} s at size {4 * n} against {small:.3f} s at {n}: the "
        f"work grows faster than the input ({_show(make(1))} repeated)")


def _name(parse: Callable[[Any], object]) -> str:
    """The parser's name for a message."""
    return getattr(parse, "__qualname__", repr(parse))


def _show(value: Any) -> str:
    """An input for a message, cut short."""
    text = repr(value)
    return text if len(text) <= 200 else f"{text[:160]}... ({len(text)} characters)"
