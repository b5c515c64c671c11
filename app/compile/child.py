"""The compile child process: `python -I -c ... app.compile.child.main()`, started (never
forked) by app.compile.service. It caps its own address space before loading any compiler,
asks the kernel to kill it if its parent dies, then answers one JSON request per line on stdin
with one JSON reply per line on its private copy of stdout."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
from typing import Any, TextIO

from app.compile import backends, limits  # NVRTC loads only when asked (nvrtc_hello)

PR_SET_PDEATHSIG = 1


def limit_resources(memory_mb: int, file_mb: int) -> None:
    """Cap the address space (RLIMIT_AS) and the size of any file written (RLIMIT_FSIZE): a
    compile that wants more fails inside this process, or inside the nvcc it starts (which
    inherits both caps), and is reported, instead of pushing the machine into swap, the OOM
    killer or a full disk."""
    limits.cap(memory_mb, file_mb)


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent goes, so no compile outlives the app."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return


def private_stdout() -> TextIO:
    """A stream on the original stdout for replies; fd 1 itself now goes to stderr, so a
    library that prints cannot corrupt the protocol."""
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(reply_fd, "w", encoding="utf-8", buffering=1)


def handle(request: dict[str, Any], hello: dict[str, Any]) -> dict[str, Any]:
    """One reply for one request."""
    if request.get("op") == "hello":
        return hello
    if request.get("backend") == "nvcc":
        return backends.nvcc_compile(request)
    if not hello.get("nvrtc"):
        return backends.make_reply("backend", message="NVRTC could not load: "
                               f"{hello.get('nvrtc_error')}; run `kernel-studio doctor`")
    return backends.nvrtc_compile(request, hello)


def serve(replies: TextIO) -> None:
    """Answer requests until stdin closes."""
    hello = {"op": "hello", "pid": os.getpid(), **backends.nvrtc_hello()}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = handle(json.loads(line), hello)
        except Exception as error:  # noqa: BLE001 - report, then keep serving
            reply = backends.make_reply("backend", message=f"{type(error).__name__}: {error}")
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the child."""
    parser = argparse.ArgumentParser(prog="kernel-studio-compile-child")
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--file-mb", type=int, default=limits.COMPILER_FILE_MB)
    args = parser.parse_args(argv)
    die_with_parent()
    limit_resources(args.memory_mb, args.file_mb)
    serve(private_stdout())
