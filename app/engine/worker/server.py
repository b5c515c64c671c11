"""The worker process: holds one device (or its emulation) and runs launches for the parent.

Started by the parent with `python -m app.engine.worker.server --backend NAME` in a new session (so
the parent can kill its whole process group). It speaks app.engine.worker.protocol on a private copy
of stdout; file descriptor 1 is pointed at stderr so that a kernel's printf, or any library
that prints, can never corrupt the protocol. After a device error it replies and exits: a CUDA
context that saw a fault is never reused.
"""

from __future__ import annotations

import argparse
import mmap
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from app.engine.worker import protocol
from app.engine.worker.backends import create
from app.engine.worker.backends.base import (
    Backend,
    BackendError,
    BufferArg,
    LaunchRequest,
    ScalarArg,
)
from app.isolation import offline, sandbox

EXIT_AFTER_FAULT = 3


def _args(items: tuple[protocol.Argument, ...],
          shared: dict[str, np.ndarray[Any, Any]] | None = None) -> list[BufferArg | ScalarArg]:
    """Buffer images and scalars. A run's images are its files mapped into memory (what the
    launch leaves in them is in the files, with no copy); with `shared` (the launches of one
    bench variant) each file is read once and every item naming it gets that same image."""
    args: list[BufferArg | ScalarArg] = []
    for item in items:
        if isinstance(item, protocol.BufferItem):
            if shared is None:
                image = _mapped(item.path)
            elif item.path in shared:
                image = shared[item.path]
            else:
                with sandbox.open_shared(Path(item.path)) as handle:
                    image = shared[item.path] = np.fromfile(handle, dtype=np.uint8)
            args.append(BufferArg(image, item.offset, item.dtype, item.upload, item.edge))
        elif isinstance(item, protocol.ScalarItem):
            args.append(ScalarArg(item.value, item.dtype))
    return args


def _mapped(path: str) -> np.ndarray[Any, Any]:
    """A buffer file as a writable image sharing the file's pages, opened never through a
    link and never a FIFO or device (a session folder may hold what a sandboxed kernel left
    there). Mapping saves a warm run of a large buffer two copies and a file rewrite."""
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(f"{Path(path).name} is not a plain file; its content is not used")
        if status.st_size == 0:
            return np.zeros(0, dtype=np.uint8)
        return np.frombuffer(mmap.mmap(fd, status.st_size), dtype=np.uint8)
    finally:
        os.close(fd)


def _is_mapped(image: np.ndarray[Any, Any]) -> bool:
    """Whether an image is its file's own pages (_mapped): nothing to write back."""
    base = image.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def _rewrite(path: str, image: np.ndarray[Any, Any]) -> None:
    """Write an image into its file, never through a link and never into a FIFO or device (a
    session folder may hold what a sandboxed kernel left there)."""
    if _is_mapped(image):  # truncating the file under its own mapping would fault
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{Path(path).name} is not a plain file; nothing was written to it")
        handle.truncate(0)
        image.tofile(handle)


def _read_optional(path: str | None) -> bytes | None:
    """A file's bytes, when a path is given."""
    return Path(path).read_bytes() if path else None


def _three(dims: tuple[int, ...]) -> tuple[int, int, int]:
    """A grid or block as three sizes."""
    items = [*dims, 1, 1, 1]
    return items[0], items[1], items[2]


def _launch_request(kernel: protocol.KernelRef, launch: protocol.Launch | None = None,
                    shared: dict[str, np.ndarray[Any, Any]] | None = None) -> LaunchRequest:
    """What a backend needs for a kernel (load) or one launch of it (run, bench); `shared`:
    the images already read for the other launches of a bench variant, by file."""
    try:
        source = _read_optional(kernel.source_path)
        return LaunchRequest(
            symbol=kernel.symbol, entry=kernel.entry, module=kernel.module,
            grid=_three(launch.grid) if launch else (1, 1, 1),
            block=_three(launch.block) if launch else (1, 1, 1),
            shared_bytes=launch.shared_bytes if launch else 0,
            args=_args(launch.args, shared) if launch else [],
            cubin=_read_optional(kernel.cubin_path),
            source=source.decode("utf-8") if source is not None else None,
            source_dir=kernel.source_dir, source_path=kernel.source_path,
            options=list(kernel.options), descending=bool(launch and launch.descending))
    except (OSError, ValueError) as error:
        raise BackendError("bad_request", f"cannot read the request's files: {error}") from None


def _write_back(launch: protocol.Launch, request: LaunchRequest) -> None:
    """Rewrite every buffer file with the image as the launch left it."""
    buffers = [a for a in request.args if isinstance(a, BufferArg)]
    items = [i for i in launch.args if isinstance(i, protocol.BufferItem)]
    for arg, item in zip(buffers, items, strict=True):
        _rewrite(item.path, arg.image)


def _sequence(variant: protocol.BenchVariant) -> list[LaunchRequest]:
    """A bench variant's launches, in order, their buffers shared by file (each read once)."""
    shared: dict[str, np.ndarray[Any, Any]] = {}
    return [_launch_request(launch.kernel, launch, shared) for launch in variant.launches]


def _write_variant(variant: protocol.BenchVariant, sequence: list[LaunchRequest],
                   firsts: list[np.ndarray[Any, Any] | None]) -> None:
    """Rewrite each buffer file of a variant once with its last image, and write each `first`
    file once with its image after the first timed sample (`firsts` lists one entry per
    argument of each launch in turn)."""
    written: set[str] = set()
    for launch, request in zip(variant.launches, sequence, strict=True):
        for item, arg in zip(launch.args, request.args, strict=True):
            if isinstance(item, protocol.BufferItem) and isinstance(arg, BufferArg) \
                    and item.path not in written:
                written.add(item.path)
                _rewrite(item.path, arg.image)
    items = [item for launch in variant.launches for item in launch.args]
    for item, image in zip(items, firsts, strict=False):
        if image is not None and isinstance(item, protocol.BufferItem) and item.first \
                and item.first not in written:
            written.add(item.first)
            _rewrite(item.first, image)


def _bench(backend: Backend, message: protocol.BenchRequest) -> dict[str, Any]:
    """Time the variants of a `bench` request, interleaved, each a sequence of launches on
    buffers it shares; write back first and last images."""
    sequences = [_sequence(variant) for variant in message.variants]
    helpers = _read_optional(message.helpers_cubin_path)
    record = backend.time(sequences, message.plan, helpers, message.per_launch)
    for variant, sequence, firsts in zip(message.variants, sequences, record.first_images,
                                         strict=True):
        _write_variant(variant, sequence, firsts)
    return protocol.reply(protocol.BenchReply.of(record.outcome, record.facts))


def handle(backend: Backend, message: dict[str, Any]) -> dict[str, Any]:
    """Answer one request (raises BackendError on failures)."""
    try:
        request = protocol.request_from_message(message)
    except protocol.ProtocolError as error:
        raise BackendError("bad_request", str(error)) from None
    if isinstance(request, protocol.HelloRequest):
        return protocol.reply(protocol.HelloReply(backend.name, backend.describe(), os.getpid()))
    if isinstance(request, protocol.BenchRequest):
        return _bench(backend, request)
    if isinstance(request, protocol.LoadRequest):
        backend.prepare(_launch_request(request.kernel))
        return {"ok": True}
    if isinstance(request, protocol.RunRequest):
        launch_request = _launch_request(request.launch.kernel, request.launch)
        seconds = backend.run(launch_request)
        _write_back(request.launch, launch_request)
        return protocol.reply(protocol.RunReply(seconds))
    raise BackendError("bad_request", f"{request.op} is answered by serve()")


def serve(backend: Backend, requests: BinaryIO, replies: BinaryIO) -> int:
    """Answer requests until shutdown, end of input, or a fatal error."""
    for line in requests:
        try:
            message = protocol.decode(line)
        except protocol.ProtocolError as error:
            replies.write(protocol.encode(protocol.failure(-1, "bad_request", str(error), False)))
            replies.flush()
            continue
        request_id = int(message.get("id", -1))
        if message.get("op") == protocol.Op.SHUTDOWN:
            replies.write(protocol.encode({"id": request_id, "ok": True}))
            replies.flush()
            return 0
        try:
            reply = {"id": request_id, **handle(backend, message)}
        except BackendError as error:
            fatal = error.kind.fatal
            reply = protocol.failure(request_id, error.kind, str(error), fatal)
        except Exception as error:  # anything unexpected: report it, then stop being trusted
            reply = protocol.failure(request_id, "internal", f"{type(error).__name__}: {error}",
                                     True)
        replies.write(protocol.encode(reply))
        replies.flush()
        if not reply["ok"] and reply["fatal"]:
            return EXIT_AFTER_FAULT
    return 0


def _private_stdout() -> BinaryIO:
    """A protocol channel on a copy of stdout; fd 1 then goes to stderr."""
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def main(argv: list[str] | None = None) -> int:
    """Parse flags, open the backend, serve."""
    parser = argparse.ArgumentParser(prog="kernel-studio-worker")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args(argv)
    offline.enforce()  # the kernel's host code runs in this process: no socket leaves it
    replies = _private_stdout()
    try:
        backend = create(args.backend, args.device)
    except BackendError as error:
        replies.write(protocol.encode(protocol.failure(0, error.kind, str(error), True)))
        return EXIT_AFTER_FAULT
    try:
        return serve(backend, sys.stdin.buffer, replies)
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(main())
