"""The worker protocol: versioned JSON lines over the worker's stdin and stdout.

Requests: {"v": 1, "id": N, "op": "hello" | "load" | "run" | "bench" | "shutdown", ...}
"bench" carries "variants" (each shaped like a run request, whose buffer items may name a
"first" file for the images after the first timed launch), a "plan" (app.engine.worker.timing) and
an optional "helpers_cubin_path"; its reply holds every sample (app.engine.worker.sampler).
Replies:  {"v": 1, "id": N, "ok": true, ...} or {"v": 1, "id": N, "ok": false, "error": KIND,
           "message": TEXT, "fatal": BOOL}
Buffer contents never travel in the JSON: they are files in a private session folder, named
in the request and rewritten in place by the worker after the launch.
"""

from __future__ import annotations

import json
from typing import Any

VERSION = 1
# Errors a worker can report. "device" errors are fatal: the worker exits after replying,
# because a CUDA context that saw a fault is poisoned (seen on an H200: every later call fails).
ERROR_KINDS = ("bad_request", "load", "device", "unsupported", "internal")


class ProtocolError(ValueError):
    """A line that is not a valid message of this protocol version."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line."""
    return (json.dumps({"v": VERSION, **message}, separators=(",", ":")) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """One JSON line as a message; refuses other versions and non-objects."""
    try:
        message = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ProtocolError(f"not a JSON line: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    if message.get("v") != VERSION:
        raise ProtocolError(f"protocol version {message.get('v')!r}, expected {VERSION}")
    return message


def failure(request_id: int, kind: str, message: str, fatal: bool) -> dict[str, Any]:
    """A failure reply."""
    return {"id": request_id, "ok": False, "error": kind, "message": message, "fatal": fatal}
