"""The worker process: holds one device (or its emulation) and runs launches for the parent.

Started by the parent with `python -m app.engine.worker.server --backend NAME` in a new session (so
the parent can kill its whole process group). It speaks app.engine.worker.protocol on a private copy
of stdout; file descriptor 1 is pointed at stderr so that a kernel's printf, or any library
that prints, can never corrupt the protocol. After a device error it replies and exits: a CUDA
context that saw a fault is never reused.
"""

from __future__ import annotations

import argparse
import os
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

EXIT_AFTER_FAULT = 3


def _dims(value: Any) -> tuple[int, int, int]:
    """A grid or block as three ints."""
    items = [int(v) for v in value] + [1, 1, 1]
    return items[0], items[1], items[2]


def _args(items: list[dict[str, Any]]) -> list[BufferArg | ScalarArg]:
    """Buffer images read from their files, and scalars."""
    args: list[BufferArg | ScalarArg] = []
    for item in items:
        if "buffer" in item:
            image = np.fromfile(item["buffer"], dtype=np.uint8)
            args.append(BufferArg(image, int(item["offset"]), str(item["dtype"]),
                                  bool(item.get("upload", True))))
        else:
            args.append(ScalarArg(item["scalar"], str(item["dtype"])))
    return args


def _read_optional(path: str | None) -> bytes | None:
    """A file's bytes, when a path is given."""
    return Path(path).read_bytes() if path else None


def _launch_request(message: dict[str, Any]) -> LaunchRequest:
    """A LaunchRequest from a `run` message."""
    source = _read_optional(message.get("source_path"))
    return LaunchRequest(
        symbol=str(message["symbol"]), entry=str(message["entry"]),
        module=str(message.get("module", "")),
        grid=_dims(message.get("grid", [1])), block=_dims(message.get("block", [1])),
        shared_bytes=int(message.get("shared_bytes", 0)), args=_args(message.get("args", [])),
        cubin=_read_optional(message.get("cubin_path")),
        source=source.decode("utf-8") if source is not None else None,
        source_dir=message.get("source_dir"), source_path=message.get("source_path"),
        options=list(message.get("options", [])))


def _write_back(message: dict[str, Any], request: LaunchRequest) -> None:
    """Rewrite every buffer file with the image as the launch left it."""
    buffers = [a for a in request.args if isinstance(a, BufferArg)]
    paths = [item["buffer"] for item in message.get("args", []) if "buffer" in item]
    for arg, path in zip(buffers, paths, strict=True):
        arg.image.tofile(path)


def _write_firsts(message: dict[str, Any], firsts: list[np.ndarray[Any, Any] | None]) -> None:
    """Write the images of a variant's first timed launch where its buffer items say ("first")."""
    for item, image in zip(message.get("args", []), firsts, strict=False):
        if image is not None and item.get("first"):
            image.tofile(item["first"])


def _bench(backend: Backend, message: dict[str, Any]) -> dict[str, Any]:
    """Time the variants of a `bench` request, interleaved; write back first and last images."""
    from app.engine.worker.timing import PlanError, TimingPlan

    try:
        variants = list(message["variants"])
        requests = [_launch_request(variant) for variant in variants]
        plan = TimingPlan.from_message(dict(message.get("plan", {})))
        helpers = _read_optional(message.get("helpers_cubin_path"))
    except (KeyError, TypeError, ValueError, OSError, PlanError) as error:
        raise BackendError("bad_request", f"malformed bench request: {error}") from None
    record = backend.time(requests, plan, helpers)
    for variant, request, firsts in zip(variants, requests, record.first_images, strict=True):
        _write_back(variant, request)
        _write_firsts(variant, firsts)
    return {"ok": True, **record.outcome.to_reply(), "facts": record.facts}


def handle(backend: Backend, message: dict[str, Any]) -> dict[str, Any]:
    """Answer one request (raises BackendError on failures)."""
    op = message.get("op")
    if op == "hello":
        return {"ok": True, "backend": backend.name, "device": backend.describe(),
                "pid": os.getpid()}
    if op == "bench":
        return _bench(backend, message)
    if op not in ("load", "run"):
        raise BackendError("bad_request", f"unknown op {op!r}")
    try:
        request = _launch_request(message)
    except (KeyError, TypeError, ValueError, OSError) as error:
        raise BackendError("bad_request", f"malformed {op} request: {error}") from None
    if op == "load":
        backend.prepare(request)
        return {"ok": True}
    seconds = backend.run(request)
    _write_back(message, request)
    return {"ok": True, "seconds": seconds}


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
        if message.get("op") == "shutdown":
            replies.write(protocol.encode({"id": request_id, "ok": True}))
            replies.flush()
            return 0
        try:
            reply = {"id": request_id, **handle(backend, message)}
        except BackendError as error:
            fatal = error.kind in ("device", "internal")
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
