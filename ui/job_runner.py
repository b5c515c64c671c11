"""`python -m ui.job_runner`: the GUI's long-lived job process (compile, verify, bench).

No Qt here. The GUI starts this module with QProcess and keeps it: it reads one JSON request per
line on stdin ({"id": ..., "kind": ...}) and answers with JSON lines on stdout, each carrying the
request's id: {"event": "progress", "text": ...}, then one {"event": "result", "data": {...}} or
{"event": "error", "message": ..., "hint": ...}. It says {"event": "ready"} once its imports are
done. Between requests it keeps an app.engine.verify.Engine, so the worker process (the CUDA
context, about 2 s to start on a GPU) and the imports stay warm from one run to the next.

It runs in its own process group, so the GUI's Cancel can stop it and anything it started:
SIGTERM first (the core cancels cooperatively and kills its worker, then this process exits),
SIGKILL to the group after a grace period. The GUI starts a fresh one for the next request.
End of input (the GUI closing) closes the engine and exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import offline

CANCEL = threading.Event()
# The request being answered: every event carries its id, so the GUI can drop stale ones.
CURRENT: dict[str, Any] = {"id": None}
# True while a core call that honours CANCEL runs: then SIGTERM only sets the event, so the core
# can kill its own worker before returning a "cancelled" result.
COOPERATIVE = threading.Event()
_OUT = sys.stdout


def emit(event: str, **fields: Any) -> None:
    """Write one JSON line for the GUI."""
    _OUT.write(json.dumps({"event": event, "id": CURRENT["id"], **fields}, default=_plain) + "\n")
    _OUT.flush()


def _plain(value: Any) -> Any:
    """JSON for dataclasses, paths and bytes (as lengths: binaries never cross the pipe)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


class Warm:
    """What stays loaded between requests: the engine with its workers."""

    engine: Any = None

    @classmethod
    def get(cls) -> Any:
        """The engine, created on first use (verify and bench share it)."""
        if cls.engine is None:
            cls.engine = importlib.import_module("app.engine.verify").Engine()
        return cls.engine

    @classmethod
    def close(cls) -> None:
        """Stop the engine's workers and remove its folder."""
        if cls.engine is not None:
            cls.engine.close()
            cls.engine = None


def _optional_module(name: str) -> Any:
    """A core module, or None when that part of the core has not landed on this checkout."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and name.startswith(error.name):
            return None
        raise


def _call(function: Callable[..., Any], **kwargs: Any) -> Any:
    """Call a core function with only the keyword arguments it accepts."""
    accepted = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        return function(**kwargs)
    return function(**{k: v for k, v in kwargs.items() if k in accepted})


def _occupancy(compile_api: Any, kernel: Any, request: dict[str, Any], arch: Any) -> Any:
    """Occupancy for the spec's block size, when the request names one."""
    block = request.get("block_size")
    if not block or not hasattr(compile_api, "occupancy"):
        return None
    try:
        return compile_api.occupancy(kernel, int(block), int(request.get("dynamic_shared", 0)),
                                     arch)
    except Exception as error:  # noqa: BLE001 - occupancy is a nicety; say why it is missing
        return {"error": str(error)}


def _sass(compile_api: Any, result: Any, name: str) -> list[Any]:
    """The SASS listing of one kernel, or an empty list when it cannot be produced."""
    try:
        return list(compile_api.sass_listing(result, name))
    except Exception as error:  # noqa: BLE001 - listing failures must not hide the compile
        emit("progress", text=f"no SASS for {name}: {error}")
        return []


def _ptx_function(compile_api: Any, result: Any, name: str) -> str | None:
    """One kernel's part of the module's PTX (None when it cannot be cut out)."""
    function = getattr(compile_api, "ptx_function", None)
    return function(result, name) if function is not None else None


def run_compile(request: dict[str, Any]) -> dict[str, Any]:
    """compile_source on the request's text, plus SASS listings and occupancy per kernel."""
    compile_api = _optional_module("app.compile")
    if compile_api is None:
        raise LookupError("compiling is not available in this build (app.compile is missing)")
    emit("progress", text="compiling")
    arch = request.get("arch")
    result = _call(compile_api.compile_source, source=request["source"],
                   filename=request["filename"], folder=Path(request["folder"]), arch=arch,
                   options=tuple(request.get("options", ())))
    data: dict[str, Any] = json.loads(json.dumps(result, default=_plain))
    data["sass"], data["occupancy"], data["ptx_functions"] = {}, {}, {}
    if getattr(result, "ok", False):
        for kernel in getattr(result, "kernels", []):
            data["sass"][kernel.name] = _sass(compile_api, result, kernel.name)
            data["ptx_functions"][kernel.name] = _ptx_function(compile_api, result, kernel.name)
            data["occupancy"][kernel.name] = _occupancy(compile_api, kernel, request,
                                                        getattr(result, "arch", arch))
    return json.loads(json.dumps(data, default=_plain))  # type: ignore[no-any-return]


def _progress(text: str, fraction: float | None = None) -> None:
    """Forward the core's progress to the GUI."""
    emit("progress", text=str(text), fraction=fraction)


def run_verify(request: dict[str, Any]) -> dict[str, Any]:
    """verify_file on the request's spec; SIGTERM cancels it cooperatively."""
    verify_api = _optional_module("app.engine.verify")
    if verify_api is None:
        raise LookupError("verification is not available in this build (app.engine.verify)")
    options = verify_api.VerifyOptions(
        backend=request.get("backend") or "auto", sanitize=request.get("sanitize"),
        timeout=float(request.get("timeout") or 10.0), arch=request.get("arch"))
    COOPERATIVE.set()
    verdict = verify_api.verify_file(request["spec_path"], options, engine=Warm.get(),
                                     cancel=CANCEL, progress=_progress)
    return json.loads(json.dumps(verdict.to_json(), default=_plain))  # type: ignore[no-any-return]


def run_bench(request: dict[str, Any]) -> dict[str, Any]:
    """bench_file on the request's spec with the request's options (budget, mode, sweep,
    baseline): the report's JSON (its "charts" hold plain arrays)."""
    bench_api = _optional_module("app.engine.bench")
    function = getattr(bench_api, "bench_file", None) if bench_api else None
    if function is None:
        raise LookupError("timing is not available in this build yet (app.engine.bench)")
    from ui.bench_options import options_from_json

    COOPERATIVE.set()
    options = options_from_json(request.get("options") or {},
                                backend=request.get("backend") or "auto")
    report = function(request["spec_path"], options, engine=Warm.get(), cancel=CANCEL,
                      progress=_progress)
    data = report.to_json() if hasattr(report, "to_json") else report
    data = json.loads(json.dumps(data, default=_plain))
    if hasattr(report, "describe"):
        data["text"] = report.describe()
    return data  # type: ignore[no-any-return]


JOBS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "compile": run_compile,
    "verify": run_verify,
    "bench": run_bench,
}


def _on_terminate(signum: int, frame: Any) -> None:
    """SIGTERM from the GUI's Cancel: ask the core to stop (it kills its worker)."""
    CANCEL.set()
    if not COOPERATIVE.is_set():
        raise KeyboardInterrupt


def answer(request: dict[str, Any]) -> None:
    """Run one request and print its outcome (never raises, except for a cancel while idle)."""
    CURRENT["id"] = request.get("id")
    try:
        job = JOBS.get(str(request.get("kind")))
        if job is None:
            emit("error", message=f"unknown job {request.get('kind')!r}", hint="")
            return
        emit("result", data=job(request))
    except KeyboardInterrupt:
        emit("error", message="cancelled", hint="")
    except LookupError as error:
        emit("error", message=str(error).strip("'\""), hint="Update Kernel Studio or run the "
             "matching kernel-studio command to see what is missing.")
    except Exception as error:  # noqa: BLE001 - report every failure to the GUI, never hang it
        emit("error", message=f"{type(error).__name__}: {error}", hint="See the Messages pane.")
    finally:
        COOPERATIVE.clear()


def _warm_up() -> None:
    """Import what every run needs now, while the user is still typing."""
    for name in ("app.engine.verify", "app.engine.bench"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def serve(lines: Any) -> None:
    """Answer requests until the input ends or a request is cancelled."""
    for line in lines:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            continue
        answer(request if isinstance(request, dict) else {})
        if CANCEL.is_set():  # the worker may hold a broken context: the GUI starts afresh
            return


def main() -> int:
    """Serve requests; exit 0 unless the runner itself broke."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    offline.enforce()
    signal.signal(signal.SIGTERM, _on_terminate)
    # Anything the core prints must not corrupt the JSON lines on our stdout.
    sys.stdout = sys.stderr
    try:
        _warm_up()
        emit("ready", pid=os.getpid())
        serve(iter(sys.stdin.readline, ""))
    except KeyboardInterrupt:  # cancelled while idle or starting: nothing to report
        pass
    finally:
        Warm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
