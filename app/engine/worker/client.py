"""The parent's side of a worker: start it, send requests, enforce time limits, kill it.

The parent never hangs on a worker: every read has a deadline, a worker past its deadline has
its whole process group killed, and a worker that reported a device error or died is never
used again; `WorkerHandle.ensure()` starts a fresh one for the next request.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from app.engine.worker import protocol
from app.paths import ROOT

POLL_SECONDS = 0.05
STDERR_TAIL = 2000


class WorkerFault(Exception):
    """The worker did not answer: `kind` is "timeout", "crash", "cancelled" or "start"."""

    def __init__(self, kind: str, message: str) -> None:
        """Keep the kind beside the message."""
        super().__init__(message)
        self.kind = kind


def _signal_name(returncode: int) -> str:
    """'signal SIGSEGV' or 'exit code 7'."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class Worker:
    """One worker process for one backend and device."""

    def __init__(self, backend: str, device: int = 0, wrapper: Sequence[str] = (),
                 log_dir: Path | None = None) -> None:
        """Describe the worker; start() launches it."""
        self.backend = backend
        self.device = device
        self.wrapper = list(wrapper)
        self.log_dir = log_dir or Path(tempfile.gettempdir())
        self.process: subprocess.Popen[bytes] | None = None
        self.info: dict[str, Any] = {}
        # Kernels this process has loaded, as keys chosen by the caller (verify.py).
        self.loaded: set[str] = set()
        self._pending = b""
        self._next_id = 1
        self._stderr: IO[bytes] | None = None
        self.stderr_path: Path | None = None

    @property
    def alive(self) -> bool:
        """Whether the process is running and still trusted."""
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 60.0) -> dict[str, Any]:
        """Launch the process and greet it; WorkerFault("start") when it cannot serve."""
        command = [*self.wrapper, sys.executable, "-m", "app.engine.worker.server",
                   "--backend", self.backend, "--device", str(self.device)]
        handle, name = tempfile.mkstemp(prefix="worker-", suffix=".log", dir=self.log_dir)
        self.stderr_path = Path(name)
        self._stderr = os.fdopen(handle, "wb")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            start_new_session=True, env=env, cwd=str(ROOT))
        try:
            reply = self.request({"op": "hello"}, timeout)
        except WorkerFault as fault:
            raise WorkerFault("start", f"the {self.backend} worker did not start: {fault}") \
                from None
        if not reply.get("ok"):
            self.kill()
            raise WorkerFault("start", f"the {self.backend} worker cannot serve: "
                                       f"{reply.get('message')}")
        self.info = reply
        return reply

    def request(self, message: dict[str, Any], timeout: float,
                cancel: threading.Event | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply, at most `timeout` seconds."""
        if not self.alive or self.process is None or self.process.stdin is None:
            raise WorkerFault("crash", "the worker is not running")
        request_id = self._next_id
        self._next_id += 1
        try:
            self.process.stdin.write(protocol.encode({"id": request_id, **message}))
            self.process.stdin.flush()
        except OSError:
            raise WorkerFault("crash", self._death_message()) from None
        reply = self._await_reply(time.monotonic() + timeout, timeout, cancel)
        if not reply.get("ok") and reply.get("fatal"):
            self._retire()
        return reply

    def _await_reply(self, deadline: float, timeout: float,
                     cancel: threading.Event | None) -> dict[str, Any]:
        """Read until a whole line arrives, the deadline passes, or the user cancels."""
        assert self.process is not None and self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while b"\n" not in self._pending:
                if cancel is not None and cancel.is_set():
                    self.kill()
                    raise WorkerFault("cancelled", "cancelled by the user")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.kill()
                    raise WorkerFault("timeout", f"no answer within {timeout:g} s; the worker "
                                                 "was killed")
                if selector.select(min(remaining, POLL_SECONDS)):
                    chunk = os.read(self.process.stdout.fileno(), 1 << 16)
                    if not chunk:
                        raise WorkerFault("crash", self._death_message())
                    self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        try:
            return protocol.decode(line)
        except protocol.ProtocolError as error:
            self.kill()
            raise WorkerFault("crash", f"the worker sent garbage: {error}") from None

    def _death_message(self) -> str:
        """Why the worker is gone: its exit status and the end of what it printed."""
        assert self.process is not None
        try:
            returncode = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            returncode = self.process.returncode
        tail = self.stderr_tail()
        return f"the worker died ({_signal_name(returncode)})" + (f": {tail}" if tail else "")

    def stderr_tail(self) -> str:
        """The last lines the worker wrote to stderr."""
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        data = self.stderr_path.read_bytes()[-STDERR_TAIL:]
        return data.decode("utf-8", "replace").strip()

    def _retire(self) -> None:
        """A worker that reported a fatal error exits by itself; make sure it is gone."""
        assert self.process is not None
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """Kill the worker's whole process group (a kernel may have spawned nothing, but a
        sanitizer wrapper has children) and reap it."""
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()

    def close(self) -> None:
        """Ask the worker to stop; kill it if it does not within a second."""
        if self.alive:
            try:
                self.request({"op": "shutdown"}, timeout=1.0)
            except WorkerFault:
                pass
            if self.process is not None:
                try:
                    self.process.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    self.kill()
        self.kill()
        for stream in (self._stderr,):
            if stream is not None:
                stream.close()
        if self.stderr_path is not None:
            self.stderr_path.unlink(missing_ok=True)


class WorkerHandle:
    """A worker that is replaced whenever it dies or reports a device error."""

    def __init__(self, backend: str, device: int = 0, wrapper: Sequence[str] = (),
                 log_dir: Path | None = None) -> None:
        """Nothing starts until ensure()."""
        self.backend = backend
        self.device = device
        self.wrapper = list(wrapper)
        self.log_dir = log_dir
        self.worker: Worker | None = None
        self.starts = 0

    def ensure(self, timeout: float = 60.0) -> Worker:
        """The live worker, starting a fresh one when needed."""
        if self.worker is None or not self.worker.alive:
            if self.worker is not None:
                self.worker.close()
            self.worker = Worker(self.backend, self.device, self.wrapper, self.log_dir)
            self.starts += 1
            self.worker.start(timeout)
        return self.worker

    def close(self) -> None:
        """Stop the worker, if any."""
        if self.worker is not None:
            self.worker.close()
            self.worker = None
