"""The parent's side of the compile child: start it (a fresh interpreter, never a fork), send
one request at a time, enforce the time limit, and replace the child after a timeout, a crash
or an out-of-memory compile. The child stays warm between compiles, so NVRTC is loaded once."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from app.base import paths
from app.compile import limits
from app.isolation import sandbox

DEFAULT_MEMORY_MB = limits.COMPILER_MEMORY_MB
DEFAULT_FILE_MB = limits.COMPILER_FILE_MB
# A backstop only: each compile has its own time limit, and a warm child adds them all up.
CHILD_CPU_SECONDS = 24 * 3600
START_TIMEOUT = 60.0  # loading Python and NVRTC on a slow, busy machine
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from app.compile.child import main; main(sys.argv[2:])")


def _folder(request: dict[str, Any]) -> Path | None:
    """The kernel folder a compile request reads headers from."""
    folder = request.get("folder")
    return Path(folder) if folder else None


class ChildFailed(Exception):
    """The child did not answer: it timed out (`timed_out`) or ended (with `detail`)."""

    def __init__(self, detail: str, timed_out: bool = False) -> None:
        """`detail` says what happened, for the user."""
        super().__init__(detail)
        self.detail = detail
        self.timed_out = timed_out


def neutral_folder() -> Path:
    """An empty folder of our own: the child's working directory when a kernel has no folder,
    so nothing the compiler finds there can come from elsewhere."""
    folder = paths.cache_dir() / "compile" / "empty"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def contained(command: list[str], folder: Path | None) -> list[str]:
    """The child's command inside a sandbox, where one can be had: it reads the toolchain,
    Python, the CUDA headers and the kernel's folder, writes only its private /tmp, and has no
    network. An escaping #include is then the compiler's own "file not found"."""
    if not sandbox.available()[0]:
        return command
    limits = sandbox.Limits(cpu_seconds=CHILD_CPU_SECONDS, file_size=1 << 30, open_files=256,
                            processes=64)
    readable = [*sandbox.python_paths(), neutral_folder(), *([folder] if folder else [])]
    return sandbox.Sandbox(read_only=readable, limits=limits,
                           cwd=folder or neutral_folder()).command(command)


class ChildProcess:
    """One running compile child, able to read one kernel folder (if any)."""

    def __init__(self, memory_mb: int, folder: Path | None = None,
                 file_mb: int = DEFAULT_FILE_MB) -> None:
        """Start the child and wait for its greeting."""
        self.memory_mb = memory_mb
        self.file_mb = file_mb
        self.folder = folder
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        # -P: nothing from the working directory on sys.path; PYTHONPATH still counts, since
        # an install may rely on it for its packages (as the GPU test machine does).
        command = sandbox.python_command("-c", _BOOT, str(paths.ROOT), "--memory-mb",
                                         str(memory_mb), "--file-mb", str(file_mb))
        # Its own session: on a timeout the whole group (nvcc and its helpers too) is killed.
        # Its PYTHONPATH holds no empty, relative or sandbox-writable entry (app.isolation.sandbox).
        self.process = subprocess.Popen(contained(command, folder), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self._stderr,
                                        cwd=neutral_folder(), start_new_session=True,
                                        env=sandbox.python_environment(os.environ, paths.ROOT))
        self._buffer = b""
        try:
            self.hello = self.request({"op": "hello"}, START_TIMEOUT)
        except ChildFailed:
            self.stop()
            raise

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process.poll() is None

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait at most `timeout` seconds for its reply."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except OSError as error:
            raise ChildFailed(self._ended(f"could not send the request ({error})")) from error
        line = self._read_line(time.monotonic() + timeout, timeout)
        try:
            reply: dict[str, Any] = json.loads(line)
        except ValueError as error:
            raise ChildFailed(f"unreadable reply from the compiler process: {line[:200]!r}") \
                from error
        return reply

    def _read_line(self, deadline: float, timeout: float) -> bytes:
        """The next line from the child, or ChildFailed at the deadline or when it ends."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildFailed(f"no answer within {timeout:g} s", timed_out=True)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise ChildFailed(self._ended("the compiler process ended"))
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _ended(self, what: str) -> str:
        """`what`, with the exit status or signal and the last words of its stderr."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        code = self.process.returncode
        if code is not None and code < 0:
            what += f" (killed by {signal.Signals(-code).name})"
        elif code is not None:
            what += f" (exit status {code})"
        self._stderr.seek(0)
        tail = self._stderr.read()[-600:].decode("utf-8", "replace").strip()
        return what + (f": {tail}" if tail else "")

    def stop(self) -> None:
        """End the child and everything it started."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout, self._stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


class CompileService:
    """Serialises compiles through one warm child, replacing it whenever it cannot be trusted."""

    def __init__(self) -> None:
        """No child until the first compile."""
        self._lock = threading.Lock()
        self._child: ChildProcess | None = None

    def run(self, request: dict[str, Any], timeout: float, memory_mb: int = DEFAULT_MEMORY_MB,
            file_mb: int = DEFAULT_FILE_MB) -> dict[str, Any]:
        """The child's reply to `request`, or a reply with status timeout/crash/backend."""
        with self._lock:
            try:
                child = self._ready_child(memory_mb, _folder(request), file_mb)
                reply = child.request(request, timeout)
            except ChildFailed as failed:
                self._discard()
                return {"status": "timeout" if failed.timed_out else "crash",
                        "message": failed.detail}
            except OSError as error:
                self._discard()
                return {"status": "backend", "message": f"could not start the compiler "
                                                        f"process: {error}"}
            if reply.get("status") in ("memory", "timeout", "backend"):
                self._discard()  # its heap or its nvcc may be in any state: start afresh
            return reply

    def hello(self, memory_mb: int = DEFAULT_MEMORY_MB) -> dict[str, Any]:
        """The child's greeting: NVRTC version and architectures (starts it when needed)."""
        with self._lock:
            return self._ready_child(memory_mb).hello

    def _ready_child(self, memory_mb: int, folder: Path | None = None,
                     file_mb: int = DEFAULT_FILE_MB) -> ChildProcess:
        """The warm child, started (again) when missing, dead, capped differently, or (in a
        sandbox, whose view is fixed when it starts) unable to read the kernel's folder."""
        child = self._child
        blind = sandbox.available()[0] and folder is not None and child is not None \
            and child.folder != folder
        if child is None or not child.alive() or (child.memory_mb, child.file_mb) != (
                memory_mb, file_mb) or blind:
            self._discard()
            child = self._child = ChildProcess(memory_mb, folder, file_mb)
        return child

    def _discard(self) -> None:
        """Stop the current child, if any."""
        if self._child is not None:
            self._child.stop()
            self._child = None

    def close(self) -> None:
        """Stop the child (at exit, or when a caller wants the memory back)."""
        with self._lock:
            self._discard()


SERVICE = CompileService()
atexit.register(SERVICE.close)
