"""Running a spec's Python reference: in a process of its own (app.engine.verify.reference_child),
inside the sandbox where one can be had, so that the expected values never sit in memory a
kernel can reach and the reference itself can neither leave its scratch folder nor end the
verification. Whether a reference may run at all where no sandbox exists is app.isolation.trust's
decision, taken by the caller.

Inputs and outputs travel as .npy files in a private scratch folder. A reference that cannot be
loaded, raises, calls sys.exit, hangs past its time limit, dies, or returns outputs of the
wrong names, sizes or kinds is a ReferenceError naming the file: a problem of the spec, never a
verdict on the kernel.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from app.base import settings
from app.base.paths import ROOT
from app.isolation import sandbox
from app.spec.cases import MAX_TOTAL_BYTES, Resolved
from app.spec.model import Spec

Array = np.ndarray[Any, Any]
# No file the reference process writes may exceed every buffer of a case together.
FILE_LIMIT = MAX_TOTAL_BYTES + (1 << 30)
STDERR_TAIL = 600
# A .npy header NumPy writes for any numeric array is under 200 bytes.
NPY_HEADER_BYTES = 10_000


class ReferenceError(Exception):
    """The reference cannot be loaded, raised an error, or returned something unusable."""


def time_limit() -> float:
    """Seconds the reference may take to load, and for each call."""
    return settings.number(settings.REFERENCE_TIMEOUT)


def check_location(path: Path, folder: Path) -> Path:
    """The reference's real path; ReferenceError when it is missing or lies outside the spec's
    folder (a link leading elsewhere would run code the folder does not hold)."""
    if not path.is_file():
        raise ReferenceError(f"{path.name}: the reference file does not exist in {folder}")
    real, home = path.resolve(), folder.resolve()
    if not real.is_relative_to(home):
        raise ReferenceError(f"{path.name} is a link to {real}, outside the spec's folder "
                             f"{home}; copy the reference into the folder instead")
    return real


def _scratch_parent() -> str | None:
    """Memory-backed /dev/shm where everyone may write there, else the usual temporary folder."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and shm.stat().st_mode & 0o002 else None


def _child_command(real: Path, folder: Path, scratch: Path, env: dict[str, str]) -> list[str]:
    """The reference process's command line, sandboxed when a sandbox can be had."""
    # -P and our own PYTHONPATH: nothing in a working folder is ever imported
    # (app.isolation.sandbox).
    command = sandbox.python_command("-m", "app.engine.verify.reference_child", str(real),
                                     str(scratch))
    if not sandbox.available()[0]:
        return command
    limits = sandbox.Limits(data=sandbox.memory_share(), cpu_seconds=CPU_SECONDS,
                            file_size=FILE_LIMIT, open_files=256)
    box = sandbox.Sandbox(read_only=[*sandbox.python_paths(), folder.resolve()],
                          writable=[scratch], limits=limits, cwd=scratch, env=env)
    return box.command(command)


def _stop(process: subprocess.Popen[bytes], scratch: Path, stderr: IO[bytes]) -> None:
    """Kill the process's whole session and remove the scratch folder (also at collection)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout, stderr):
        if stream is not None:
            stream.close()
    shutil.rmtree(scratch, ignore_errors=True)


# The sandbox's CPU-time limit for a reference process, over its whole life.
CPU_SECONDS = 3600
# A warm reference is retired once its calls took this long (wall time; with NumPy's threads on
# every core the CPU time can be that many times more): half the CPU limit, shared by the
# cores, so a long session never meets the limit in the middle of a verification.
RETIRE_BUSY_S = CPU_SECONDS / 2 / (os.cpu_count() or 1)


class Reference:
    """A loaded reference in its own process: call it like the `reference` function."""

    def __init__(self, path: Path, folder: Path | None = None,
                 scratch_parent: Path | None = None) -> None:
        """Check where the file lies and start the process loading it (wait() for that)."""
        self.name = path.name
        folder = folder or path.parent
        real = check_location(path, folder)
        self.limit = time_limit()
        self.sandboxed = sandbox.available()[0]
        # No /dev/shm for everyone (a chroot, say): the usual temporary folder, never "None/".
        self.scratch = Path(tempfile.mkdtemp(prefix="reference-",
                                             dir=scratch_parent or _scratch_parent()))
        self._stderr = tempfile.TemporaryFile()
        self._pending = b""
        env = sandbox.python_environment(os.environ, ROOT)
        self.process = subprocess.Popen(
            _child_command(real, folder, self.scratch, env), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True, env=env,
            cwd=str(self.scratch))
        self._finalizer = weakref.finalize(self, _stop, self.process, self.scratch, self._stderr)
        self._loaded = False
        self.failed = False  # any error from it: an Engine never uses it again (warm.py)
        self.busy_s = 0.0  # wall time spent in calls, over the process's life

    @property
    def usable(self) -> bool:
        """Whether another request may be sent: no error so far, the process lives, and it has
        not used up most of its CPU-time limit (a warm one serves many verifications)."""
        return not self.failed and self._finalizer.alive and self.process.poll() is None \
            and self.busy_s < RETIRE_BUSY_S

    def wait(self) -> None:
        """Wait until the process has loaded the file (ReferenceError when it could not)."""
        if self._loaded:
            return
        try:
            self._reply("loading it")
        except ReferenceError:
            self.failed = True
            self.close()
            raise
        self._loaded = True

    def __call__(self, **arguments: Any) -> dict[str, Array]:
        """The outputs the reference returns for these inputs (arrays) and scalars."""
        return self.outputs(arguments)

    def outputs(self, arguments: dict[str, Any],
                expected: dict[str, int] | None = None) -> dict[str, Array]:
        """__call__, where `expected` gives the element count the spec wants of each output:
        a file whose header says otherwise is refused before any of its data is read."""
        if not self._finalizer.alive:
            raise ReferenceError(f"{self.name}: the reference process was stopped earlier")
        self.wait()
        started = time.monotonic()
        try:
            return self._call(arguments, expected or {})
        except BaseException:
            self.failed = True  # a request may be left unanswered: never send another
            raise
        finally:
            self.busy_s += time.monotonic() - started

    def _call(self, arguments: dict[str, Any], expected: dict[str, int]) -> dict[str, Array]:
        """One request and its reply (see __call__)."""
        arrays: dict[str, str] = {}
        scalars: dict[str, Any] = {}
        for index, (name, value) in enumerate(arguments.items()):
            if isinstance(value, np.ndarray):
                arrays[name] = f"in-{index}.npy"
                with sandbox.create_shared(self.scratch / arrays[name]) as handle:
                    np.save(handle, value, allow_pickle=False)
            else:
                scalars[name] = value
        outputs: dict[str, Any] = {}
        try:
            self._send({"arrays": arrays, "scalars": scalars})
            outputs = dict(self._reply("computing the outputs").get("outputs", {}))
            return {str(name): self._output(str(name), str(file), expected.get(str(name)))
                    for name, file in outputs.items()}
        finally:  # read into memory by now: a warm process must not keep them in /dev/shm
            self._remove([*arrays.values(), *map(str, outputs.values())])

    def _remove(self, files: list[str]) -> None:
        """Delete these files of the scratch folder (the links themselves, never a target)."""
        for file in files:
            try:
                os.unlink(self.scratch / Path(file).name)
            except OSError:
                pass  # already gone, or the folder with it

    def _output(self, name: str, file: str, count: int | None) -> Array:
        """One output file the reference wrote, read as data only and within bounds (see
        read_npy); `count`: the elements the spec wants of it, when known."""
        path = self.scratch / Path(file).name
        try:
            return read_npy(path, count, name)
        except (OSError, ValueError) as error:
            raise ReferenceError(f"{self.name}: output {name!r} could not be read back: "
                                 f"{error}") from None

    def _send(self, message: dict[str, Any]) -> None:
        """One request line; a process that is gone is a ReferenceError."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except OSError:
            raise ReferenceError(self._ended("computing the outputs")) from None

    def _reply(self, doing: str) -> dict[str, Any]:
        """The next reply, within the time limit; a failure reply is a ReferenceError."""
        line = self._read_line(doing)
        try:
            reply = json.loads(line)
        except ValueError:
            raise ReferenceError(f"{self.name}: the reference process sent garbage") from None
        if not isinstance(reply, dict) or not reply.get("ok"):
            message = reply.get("message") if isinstance(reply, dict) else None
            raise ReferenceError(f"{self.name}: {message or 'the reference failed'}")
        return reply

    def _read_line(self, doing: str) -> bytes:
        """Read until a whole line arrives; kill the process at the deadline."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + self.limit
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while b"\n" not in self._pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.close()
                    raise ReferenceError(f"{self.name}: the reference took more than "
                                         f"{self.limit:g} s {doing} and was stopped")
                if selector.select(remaining):
                    chunk = os.read(self.process.stdout.fileno(), 1 << 16)
                    if not chunk:
                        raise ReferenceError(self._ended(doing))
                    self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line

    def _ended(self, doing: str) -> str:
        """Why the process is gone: its exit status and the end of what it printed."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.close()
            code = self.process.returncode
        code = sandbox.exit_status(code) if self.sandboxed else code
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        self._stderr.seek(0)
        tail = self._stderr.read()[-STDERR_TAIL:].decode("utf-8", "replace").strip()
        return (f"{self.name}: the reference process ended ({how}) while {doing}"
                + (f": {tail}" if tail else ""))

    def interrupt(self) -> None:
        """Kill the process (a request in flight on another thread then fails) and never use
        it again; close() still tidies up."""
        self.failed = True
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()

    def close(self) -> None:
        """Stop the process and remove its scratch folder."""
        self._finalizer()

    def __enter__(self) -> Reference:
        """Use as a context manager."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close on exit."""
        self.close()


def read_npy(path: Path, count: int | None = None, label: str = "") -> Array:
    """A .npy file a sandboxed process wrote, never trusted: a plain file (no link, FIFO or
    device); its header read first and within bounds; numbers only (no pickle, no object or
    structured data); `count` elements when given; and the file exactly as long as the header
    plus that data, so a sparse file with a huge header is refused before anything of its
    size is allocated. ValueError or OSError say what is wrong (`label`: the output)."""
    with sandbox.open_shared(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > FILE_LIMIT:
            raise ValueError(f"{path.name} holds {size} bytes, more than any output can")
        version = np.lib.format.read_magic(handle)
        shape, fortran, dtype = _header(handle, version)
        if dtype.hasobject or dtype.fields is not None or dtype.kind not in "biuf":
            raise ValueError(f"{path.name} holds {dtype} data; outputs must be numbers")
        elements = math.prod(shape)
        if count is not None and elements != count:
            raise ValueError(f"the reference returned {elements} element(s) for {label!r} (its "
                             f"file's header says shape {shape}); the spec wants {count}")
        data_bytes = elements * dtype.itemsize
        if handle.tell() + data_bytes != size:
            raise ValueError(f"{path.name} is {size} bytes; its header says {handle.tell()} "
                             f"+ {data_bytes} (shape {shape}, {dtype})")
        data = bytearray(data_bytes)
        if handle.readinto(data) != data_bytes:
            raise OSError(f"{path.name} changed while it was read")
    array: Array = np.frombuffer(data, dtype=dtype, count=elements)
    return array.reshape(shape, order="F" if fortran else "C")


def _header(handle: IO[bytes], version: tuple[int, int]) -> tuple[tuple[int, ...], bool, Any]:
    """The (shape, fortran order, dtype) of a .npy header, of at most NPY_HEADER_BYTES."""
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f".npy format version {version} is not one used for numbers")
    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, fortran, dtype = reader(handle, max_header_size=NPY_HEADER_BYTES)
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"the header's shape {shape} is not a shape")
    return tuple(shape), bool(fortran), dtype


def load_reference(path: Path, folder: Path | None = None, scratch_parent: Path | None = None,
                   wait: bool = True) -> Reference:
    """The reference of a file, loaded in its own process (`folder`: the spec's folder, by
    default the file's own). With `wait=False` the loading goes on while the caller does other
    work; the first call, or wait(), reports whether it worked."""
    reference = Reference(path, folder, scratch_parent)
    if wait:
        reference.wait()
    return reference


def expected_outputs(function: Callable[..., Any], spec: Spec, resolved: Resolved,
                     inputs: dict[str, Array]) -> dict[str, Array]:
    """Call the reference with copies of the inputs and the scalars; check what it returns.
    A Reference process gets its own copies through files: no copy is made here for it."""
    private = isinstance(function, Reference)
    arguments: dict[str, Any] = {name: array if private else array.copy()
                                 for name, array in inputs.items()}
    arguments.update(resolved.scalars)
    name = getattr(function, "name", "the reference")
    wanted = {arg.name: math.prod(resolved.shapes[arg.name]) for arg in spec.args
              if arg.kind in ("out", "inout")}
    try:
        returned = function.outputs(arguments, wanted) if isinstance(function, Reference) \
            else function(**arguments)
    except ReferenceError:
        raise
    except Exception as error:  # a reference called in this process (tests do)
        raise ReferenceError(f"the reference raised {type(error).__name__}: {error}") from None
    if not isinstance(returned, dict):
        raise ReferenceError(f"{name}: the reference must return a dict of outputs, not "
                             f"{type(returned).__name__}")
    return {arg.name: _shaped(returned, name, arg.name, resolved.shapes[arg.name], arg.dtype)
            for arg in spec.args if arg.kind in ("out", "inout")}


def _shaped(returned: dict[str, Any], file: str, name: str, shape: tuple[int, ...],
            dtype: str) -> Array:
    """One returned output as an array of the spec's shape."""
    if name not in returned:
        raise ReferenceError(f"{file}: the reference returned no value for output {name!r} "
                             f"(it returned: {', '.join(map(str, returned)) or 'nothing'})")
    array = np.asarray(returned[name])
    if array.size != math.prod(shape):
        raise ReferenceError(f"{file}: the reference returned {array.size} element(s) for "
                             f"{name!r}; the spec's shape {shape} has {math.prod(shape)}")
    if array.dtype.kind not in "biuf":
        raise ReferenceError(f"{file}: the reference returned {array.dtype} data for {name!r}; "
                             f"expected numbers ({dtype})")
    return array.reshape(shape)
