"""`python -m app.jobs.server`: the GUI's long-lived job process (compile, verify, bench).

No Qt here. The GUI starts this module with QProcess and keeps it: it reads one request per line
on stdin and answers with event lines on stdout (both defined in app.jobs.messages). It says
"ready" once its imports are done. Between requests it keeps an app.engine.verify.runs.Engine,
so the worker process (the CUDA context, about 2 s to start on a GPU) and the imports stay warm
from one run to the next.

It runs in its own process group, so the GUI's Cancel can stop it and anything it started:
SIGTERM first (the core cancels cooperatively and kills its worker, then this process exits),
SIGKILL to the group after a grace period. The GUI starts a fresh one for the next request.
End of input (the GUI closing) closes the engine and exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from app import compile as compile_api
from app.base import codec
from app.compile.model import CompileResult, KernelResources
from app.engine.bench.runner import BenchOptions, bench_file
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.isolation import offline
from app.jobs.messages import (
    BenchRequest,
    CompileRequest,
    EventKind,
    JobEvent,
    JobRequest,
    MessageError,
    VerifyRequest,
    decode_request,
)
from app.review.record import record_command

CANCEL = threading.Event()
# The request being answered: every event carries its id, so the GUI can drop stale ones.
CURRENT: dict[str, Any] = {"id": None}
# True while a core call that honours CANCEL runs: then SIGTERM only sets the event, so the core
# can kill its own worker before returning a "cancelled" result.
COOPERATIVE = threading.Event()
_OUT = sys.stdout


def emit(event: JobEvent) -> None:
    """Write one event line for the GUI, with the current request's id."""
    _OUT.write(codec.replace(event, id=CURRENT["id"]).to_line())
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


def _json(value: Any) -> dict[str, Any]:
    """Plain JSON data of a core result."""
    return json.loads(json.dumps(value, default=_plain))  # type: ignore[no-any-return]


class Warm:
    """What stays loaded between requests: the engine with its workers."""

    engine: Engine | None = None

    @classmethod
    def get(cls) -> Engine:
        """The engine, created on first use (verify and bench share it)."""
        if cls.engine is None:
            cls.engine = Engine()
        return cls.engine

    @classmethod
    def close(cls) -> None:
        """Stop the engine's workers and remove its folder."""
        if cls.engine is not None:
            cls.engine.close()
            cls.engine = None


def _occupancy(kernel: KernelResources, request: CompileRequest, arch: str) -> Any:
    """Occupancy for the spec's block size, when the request names one."""
    if not request.block_size:
        return None
    try:
        return compile_api.occupancy(kernel, int(request.block_size),
                                     int(request.dynamic_shared), arch)
    except Exception as error:  # noqa: BLE001 - occupancy is a nicety; say why it is missing
        return {"error": str(error)}


def _sass(result: CompileResult, name: str) -> list[Any]:
    """The SASS listing of one kernel, or an empty list when it cannot be produced."""
    try:
        return list(compile_api.sass_listing(result, name))
    except Exception as error:  # noqa: BLE001 - listing failures must not hide the compile
        _progress(f"no SASS for {name}: {error}")
        return []


def run_compile(request: CompileRequest) -> dict[str, Any]:
    """compile_source on the request's text, plus SASS listings and occupancy per kernel."""
    _progress("compiling")
    result = compile_api.compile_source(request.source, filename=request.filename,
                                        folder=Path(request.folder), arch=request.arch,
                                        options=request.options, entries=request.entries)
    data = _json(result)
    data["sass"], data["occupancy"], data["ptx_functions"] = {}, {}, {}
    if result.ok:
        for kernel in result.kernels:
            data["sass"][kernel.name] = _sass(result, kernel.name)
            data["ptx_functions"][kernel.name] = compile_api.ptx_function(result, kernel.name)
            data["occupancy"][kernel.name] = _occupancy(kernel, request,
                                                        result.arch or request.arch or "")
    return _json(data)


def _progress(text: str, fraction: float | None = None) -> None:
    """Forward the core's progress to the GUI."""
    emit(JobEvent(EventKind.PROGRESS, text=str(text), fraction=fraction))


def run_verify(request: VerifyRequest) -> dict[str, Any]:
    """verify_file on the request's spec; SIGTERM cancels it cooperatively."""
    options = VerifyOptions(backend=request.backend or "auto", sanitize=request.sanitize,
                            timeout=float(request.timeout), arch=request.arch)
    COOPERATIVE.set()
    verdict = verify_file(request.spec_path, options, engine=Warm.get(), cancel=CANCEL,
                          progress=_progress)
    _record("verify", request.spec_path, verdict.exit_code)
    return _json(verdict.to_json())


def run_bench(request: BenchRequest) -> dict[str, Any]:
    """bench_file on the request's spec with the request's options (budget, mode, sweep,
    baseline): the report's JSON (its "charts" hold plain arrays) and its text."""
    options = BenchOptions.from_message(request.options, backend=request.backend or "auto")
    COOPERATIVE.set()
    report = bench_file(request.spec_path, options, engine=Warm.get(), cancel=CANCEL,
                        progress=_progress)
    _record("bench", request.spec_path, report.exit_code)
    data = _json(report.to_json())
    data["text"] = report.describe()
    return data


def _record(action: str, spec_path: str, exit_code: int) -> None:
    """Append the run to the audit log, as the command line does (a record that cannot be
    written is said, never fatal to the run)."""
    warning = record_command(action, spec_path, exit_code)
    if warning:
        _progress(warning)


def run(request: JobRequest) -> dict[str, Any]:
    """Answer one typed request."""
    if isinstance(request, CompileRequest):
        return run_compile(request)
    if isinstance(request, VerifyRequest):
        return run_verify(request)
    return run_bench(request)


def _on_terminate(signum: int, frame: Any) -> None:
    """SIGTERM from the GUI's Cancel: ask the core to stop (it kills its worker)."""
    CANCEL.set()
    if not COOPERATIVE.is_set():
        raise KeyboardInterrupt


def answer(message: dict[str, Any]) -> None:
    """Run one request and print its outcome (never raises, except for a cancel while idle)."""
    CURRENT["id"] = message.get("id")
    try:
        _, request = decode_request(message)
        emit(JobEvent(EventKind.RESULT, data=run(request)))
    except KeyboardInterrupt:
        emit(JobEvent(EventKind.ERROR, message="cancelled"))
    except MessageError as error:
        emit(JobEvent(EventKind.ERROR, message=str(error),
                      hint="The GUI and its job process disagree: restart Kernel Studio."))
    except Exception as error:  # noqa: BLE001 - report every failure to the GUI, never hang it
        emit(JobEvent(EventKind.ERROR, message=f"{type(error).__name__}: {error}",
                      hint="See the Messages pane."))
    finally:
        COOPERATIVE.clear()


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
        emit(JobEvent(EventKind.READY, pid=os.getpid()))
        serve(iter(sys.stdin.readline, ""))
    except KeyboardInterrupt:  # cancelled while idle or starting: nothing to report
        pass
    finally:
        Warm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
