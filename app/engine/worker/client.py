"""The parent's side of a worker: start it, send requests, enforce time limits, kill it.

The parent never hangs on a worker: every read has a deadline, a worker past its deadline has
its whole process group killed, and a worker that reported a device error or died is never
used again; `WorkerHandle.ensure()` starts a fresh one for the next request.

A cpu worker runs kernels as native code, so where a sandbox can be had (app.isolation.sandbox) it
runs
inside one from its start: it reads the toolchain, Python, the build cache and one kernel's
folder, and writes only its session folder. Its kernel libraries are built here, before the
load request, by a sandboxed compiler (cpu.build.prebuild), so the worker never writes the
cache that later workers load from; a load that names another kernel folder gets a fresh
worker that can read that folder.

Nothing a sandboxed worker writes is read as code, or followed as a link, by a process outside
its sandbox (docs/isolation.md): each WorkerHandle has a session folder of its own, so a cpu
worker's folder holds only cpu buffer files; every worker's Python starts with -P and a
PYTHONPATH of our own (app.isolation.sandbox.python_command, python_environment), so no working
folder
is on its sys.path; a worker's log and, for every worker but a cpu one, its working folder lie
in a private folder no sandbox can reach.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from app.base import codec, paths, settings
from app.base.paths import ROOT
from app.engine.worker import freeze, protocol, stderr_log
from app.engine.worker.backends.base import BackendError
from app.engine.worker.backends.cpu import build, faults, toolchain
from app.isolation import sandbox
from app.spec.cases import MAX_TOTAL_BYTES

POLL_SECONDS = 0.05
# Frozen workers kept per handle for other kernel folders (each holds its process's memory).
PARKED = 2
START_SECONDS = 60.0
# A backstop only (the parent's deadlines govern): a warm worker adds up the CPU time of every
# launch on every thread.
WORKER_CPU_SECONDS = 24 * 3600
# No file a sandboxed worker writes may exceed every buffer of a case together.
FILE_LIMIT = MAX_TOTAL_BYTES + (1 << 30)


def absolute(folder: str | Path) -> Path:
    """A folder as a sandbox binds it: absolute, links not followed."""
    return Path(os.path.abspath(folder))


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
        # Its session folder: buffer files, and all a sandboxed worker may write. Without one
        # named, a private folder of its own (removed at close), never the temporary folder.
        self._own_folder = log_dir is None
        self.log_dir = log_dir or sandbox.private_folder(f"ks-{backend}-session-")
        self.process: subprocess.Popen[bytes] | None = None
        self.info: dict[str, Any] = {}
        # Kernels this process has loaded, as keys chosen by the caller (verify.py).
        self.loaded: set[str] = set()
        self._pending = b""
        self._next_id = 1
        self._stderr: IO[bytes] | None = None
        self._capture: stderr_log.Capture | None = None
        self.stderr_path: Path | None = None
        # The kernel folder a sandboxed worker may read (it cannot be changed once started).
        self.readable: Path | None = None
        # Its log, and the working folder of a worker that runs no kernel host code.
        self.private: Path | None = None

    @property
    def alive(self) -> bool:
        """Whether the process is running and still trusted."""
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = START_SECONDS) -> dict[str, Any]:
        """Launch the process and greet it; WorkerFault("start") when it cannot serve."""
        command = [*self.wrapper, *sandbox.python_command("-m", "app.engine.worker.server"),
                   "--backend", self.backend, "--device", str(self.device)]
        self.private = self.private or sandbox.private_folder(f"ks-{self.backend}-worker-")
        handle, name = tempfile.mkstemp(prefix="worker-", suffix=".log", dir=self.private)
        self.stderr_path = Path(name)
        self._stderr = os.fdopen(handle, "wb")
        env = sandbox.python_environment(os.environ, ROOT)
        if self.sandboxed:
            env[settings.CACHE_DIR.variable] = str(paths.cache_dir())  # its HOME is its own /tmp
            command = self._sandbox(env).command(command)
        self._pending = b""
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, env=env, cwd=str(self._working_folder()))
        # Drained by a thread into a bounded head and tail: a kernel printing without end
        # cannot fill the disk or /dev/shm (the head also goes to the log file).
        self._capture = stderr_log.capture(self.process.stderr, self._stderr)
        try:
            reply = self.request(codec.to_object(protocol.HelloRequest()), timeout)
        except WorkerFault as fault:
            raise WorkerFault("start", f"the {self.backend} worker did not start: {fault}") \
                from None
        if not reply.get("ok"):
            self.kill()
            raise WorkerFault("start", f"the {self.backend} worker cannot serve: "
                                       f"{reply.get('message')}")
        self.info = reply
        return reply

    def _working_folder(self) -> Path:
        """Never the checkout (a kernel's relative writes landed there once). A cpu worker, the
        one whose kernels run host code, works in its session folder, which only the cpu
        workers of its handle write; every other worker in its private folder, which nothing
        but this process writes. No working folder is on a worker's sys.path (-P)."""
        if self.backend == "cpu" and not self.wrapper:
            return self.log_dir
        assert self.private is not None
        return self.private

    @property
    def sandboxed(self) -> bool:
        """Whether this worker runs inside a sandbox: the cpu backend runs kernels' host code,
        so it does wherever one can be had (a GPU's device code cannot reach the host)."""
        return self.backend == "cpu" and not self.wrapper and sandbox.available()[0]

    def _sandbox(self, env: dict[str, str]) -> sandbox.Sandbox:
        """The cpu worker's sandbox: reads Python, the build cache and its kernel's folder,
        writes its session folder only."""
        cache = toolchain.cache_folder()
        cache.mkdir(parents=True, exist_ok=True)
        readable = [*sandbox.python_paths(), cache, *([self.readable] if self.readable else [])]
        limits = sandbox.Limits(data=sandbox.memory_share(), cpu_seconds=WORKER_CPU_SECONDS,
                                file_size=FILE_LIMIT, open_files=1024, processes=1024)
        return sandbox.Sandbox(read_only=readable, writable=[self.log_dir], limits=limits,
                               cwd=self.log_dir, env=env)

    def _before_load(self, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """For a cpu worker: a worker that can read the kernel's folder, and the kernel's
        library built here (a failure reply when it cannot be). None: go ahead."""
        folder = message.get("source_dir")
        if self.sandboxed and folder and absolute(folder) != self.readable:
            self.close()
            self.readable = absolute(folder)
            self.loaded.clear()
            self.start(max(timeout, START_SECONDS))
        try:
            build.prebuild(message)
        except BackendError as error:
            return protocol.failure(-1, error.kind, str(error), False)
        return None

    def request(self, message: dict[str, Any], timeout: float,
                cancel: threading.Event | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply, at most `timeout` seconds (a cpu worker's
        load builds the kernel first, which does not count)."""
        if self.backend == "cpu" and message.get("op") == "load":
            refused = self._before_load(message, timeout)
            if refused is not None:
                return refused
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
        if self.backend == "cpu":  # the faulting instruction as the user's file and line
            tail = faults.without_pc(tail)
        if self.sandboxed:
            returncode = sandbox.exit_status(returncode)
        return f"the worker died ({_signal_name(returncode)})" + (f": {tail}" if tail else "")

    def stderr_tail(self) -> str:
        """What the worker wrote to stderr: its head and tail, saying how much was cut."""
        return self._capture.text() if self._capture is not None else ""

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
                self.request(codec.to_object(protocol.ShutdownRequest()), timeout=1.0)
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
        self._stderr = None
        if self.stderr_path is not None:
            self.stderr_path.unlink(missing_ok=True)
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)
            self.private = None
        if self._own_folder:
            shutil.rmtree(self.log_dir, ignore_errors=True)


class WorkerHandle:
    """A worker that is replaced whenever it dies or reports a device error."""

    def __init__(self, backend: str, device: int = 0, wrapper: Sequence[str] = (),
                 log_dir: Path | None = None) -> None:
        """Nothing starts until ensure(). `folder`, made now inside `log_dir` (the engine's
        private folder), is this handle's session folder: its workers' buffer files go there,
        and a sandboxed worker may write nothing else, so no other worker reads what it left."""
        self.backend = backend
        self.device = device
        self.wrapper = list(wrapper)
        self.log_dir = log_dir
        self.folder = Path(tempfile.mkdtemp(prefix=f"{backend}-", dir=log_dir))
        if log_dir is None:
            weakref.finalize(self, shutil.rmtree, self.folder, True)
        self.worker: Worker | None = None
        self.starts = 0
        # Sandboxed workers of other kernel folders, frozen, the most recently used last.
        self.parked: OrderedDict[Path, Worker] = OrderedDict()

    def ensure(self, timeout: float = START_SECONDS, readable: Path | None = None) -> Worker:
        """The live worker, starting a fresh one when needed. `readable`: the kernel folder
        the next load will name, so that a sandboxed worker is started able to read it (a
        worker that cannot is replaced now rather than at the load)."""
        worker = self.worker
        readable = absolute(readable) if readable is not None else None
        stale = (worker is not None and readable is not None and worker.sandboxed
                 and worker.readable != readable)
        if stale and readable is not None:
            assert worker is not None
            self._park(worker)
            worker = self.worker = self._unpark(readable)
        if worker is None or not worker.alive:
            if worker is not None:
                worker.close()
            self.worker = Worker(self.backend, self.device, self.wrapper, self.folder)
            self.worker.readable = readable
            self.starts += 1
            self.worker.start(timeout)
        assert self.worker is not None
        return self.worker

    def _park(self, worker: Worker) -> None:
        """Keep a live worker of another folder, frozen, for when that folder is used again;
        the least recently used beyond PARKED are closed."""
        if not worker.alive or worker.readable is None or worker.process is None:
            worker.close()
            return
        freeze.freeze(worker.process.pid)
        self.parked[worker.readable] = worker
        while len(self.parked) > PARKED:
            self._close_parked(self.parked.popitem(last=False)[1])

    def _unpark(self, readable: Path) -> Worker | None:
        """The parked worker of `readable`, woken, or None when there is none (or it died)."""
        worker = self.parked.pop(readable, None)
        if worker is None or not worker.alive or worker.process is None:
            if worker is not None:
                worker.close()
            return None
        freeze.thaw(worker.process.pid)
        return worker

    @staticmethod
    def _close_parked(worker: Worker) -> None:
        """Close a frozen worker (woken first, so that it can be asked to stop)."""
        if worker.process is not None:
            freeze.thaw(worker.process.pid)
        worker.close()

    def close(self) -> None:
        """Stop the worker and the parked ones, if any."""
        while self.parked:
            self._close_parked(self.parked.popitem()[1])
        if self.worker is not None:
            self.worker.close()
            self.worker = None
