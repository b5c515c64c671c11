"""The reference process: `python -m app.engine.verify.reference_child REFERENCE SCRATCH`, started
by app.engine.verify.reference (inside the sandbox where one can be had).

It loads the reference file once, says whether that worked, then answers one JSON request per
line: the inputs are .npy files in the scratch folder, the scalars travel in the request, and
the outputs it writes back are .npy files there too (never pickles). Whatever the reference
does (raises, calls sys.exit, returns something that is not arrays) becomes a reply naming the
problem; the parent decides what it means.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from app.isolation import offline

PR_SET_PDEATHSIG = 1


class Refused(Exception):
    """What the reference did wrong, in words for the user."""


def _where(error: BaseException, path: Path) -> str:
    """' (line N)' for the last frame inside the reference file, when there is one."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
    return f" (line {frames[-1].lineno})" if frames else ""


def _describe(error: BaseException, path: Path, doing: str) -> str:
    """A message for anything the reference raised, SystemExit included."""
    if isinstance(error, SystemExit):
        return f"the reference called sys.exit({error.code!r}) while {doing}"
    if isinstance(error, KeyboardInterrupt):
        return f"the reference was interrupted while {doing}"
    return f"the reference raised {type(error).__name__}: {error}{_where(error, path)}"


def load(path: Path) -> Callable[..., Any]:
    """The `reference` function of the file (Refused when it cannot be had)."""
    module_spec = importlib.util.spec_from_file_location("ks_reference", path)
    if module_spec is None or module_spec.loader is None:
        raise Refused(f"{path.name} cannot be loaded as Python")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - a reference's failure is reported, not raised
        raise Refused(f"{path.name} failed to load: "
                      f"{_describe(error, path, 'loading')}") from None
    function = getattr(module, "reference", None)
    if not callable(function):
        raise Refused(f"{path.name} defines no function `reference(**inputs)`")
    return function  # type: ignore[no-any-return]


def _save(scratch: Path, index: int, value: Any) -> str:
    """One returned output as a .npy file (numbers only); its file name."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise Refused(f"returned {array.dtype} data; outputs must be numeric arrays")
    name = f"out-{index}.npy"
    np.save(scratch / name, array, allow_pickle=False)
    return name


def call(function: Callable[..., Any], path: Path, scratch: Path,
         request: dict[str, Any]) -> dict[str, Any]:
    """Run the reference on one request's inputs; the reply names the output files."""
    arguments: dict[str, Any] = {name: np.load(scratch / str(file), allow_pickle=False)
                                 for name, file in dict(request["arrays"]).items()}
    arguments.update(dict(request["scalars"]))
    try:
        returned = function(**arguments)
    except BaseException as error:  # noqa: BLE001 - see _describe
        return {"ok": False, "message": _describe(error, path, "computing the outputs")}
    if not isinstance(returned, dict):
        return {"ok": False, "message": "the reference must return a dict of outputs, not "
                                        f"{type(returned).__name__}"}
    outputs: dict[str, str] = {}
    for index, (name, value) in enumerate(returned.items()):
        if not isinstance(name, str):
            continue
        try:
            outputs[name] = _save(scratch, index, value)
        except (Refused, ValueError, TypeError) as error:
            return {"ok": False, "message": f"the reference's output {name!r}: {error}"}
    return {"ok": True, "outputs": outputs}


def _reply(channel: BinaryIO, message: dict[str, Any]) -> None:
    """One JSON line to the parent."""
    channel.write((json.dumps(message) + "\n").encode())
    channel.flush()


def serve(path: Path, scratch: Path, channel: BinaryIO) -> int:
    """Load the reference, then answer requests until stdin closes."""
    try:
        function = load(path)
    except Refused as refused:
        _reply(channel, {"ok": False, "message": str(refused)})
        return 0
    _reply(channel, {"ok": True, "pid": os.getpid()})
    for line in sys.stdin.buffer:
        try:
            reply = call(function, path, scratch, json.loads(line))
        except (OSError, ValueError, KeyError, TypeError) as error:
            reply = {"ok": False, "message": f"the inputs could not be read: {error}"}
        _reply(channel, reply)
    return 0


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent goes (outside a sandbox, which does the
    same), so a reference stuck in a loop never outlives the verification."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            return


def main(argv: list[str] | None = None) -> int:
    """Entry point: REFERENCE SCRATCH. Replies go to a private copy of stdout; whatever the
    reference prints goes to stderr."""
    die_with_parent()
    offline.enforce()  # a reference is code from a spec: no socket leaves this process
    path, scratch = (Path(a) for a in (argv if argv is not None else sys.argv[1:]))
    # Bytecode only from (and, were it written, to) this process's own scratch folder: a
    # __pycache__ shipped beside the reference could hold code its trusted .py files do not.
    sys.pycache_prefix = str(scratch / "pycache")
    sys.dont_write_bytecode = True
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return serve(path, scratch, channel)


if __name__ == "__main__":
    sys.exit(main())
