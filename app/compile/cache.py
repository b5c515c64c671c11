"""The compile cache: content-addressed (the key is a sha256 over everything that decides the
output), written atomically, and verified on every read. An entry that fails verification is
deleted and rebuilt, never trusted.

Entry file: MAGIC, the sha256 (hex) of the body, a newline, then the body: the key and the
result as JSON (the cubin in base64).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.base import fsutil, paths
from app.compile.model import CompileResult

MAGIC = b"kernel-studio compile cache 1\n"
log = logging.getLogger(__name__)


def make_key(parts: Iterable[str | bytes]) -> str:
    """sha256 over the parts, each length-prefixed so that no two lists collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def entry_path(key: str) -> Path:
    """Where the entry for `key` lives."""
    return paths.cache_dir() / "compile" / key[:2] / f"{key}.entry"


def load(key: str) -> CompileResult | None:
    """The cached result for `key`, or None when absent or corrupt (a corrupt entry is
    deleted so the next compile rebuilds it)."""
    path = entry_path(key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    result = _verified(data, key)
    if result is None:
        log.warning("compile cache entry %s is corrupt; it is removed and rebuilt", path)
        with contextlib.suppress(OSError):
            path.unlink()
    return result


def _verified(data: bytes, key: str) -> CompileResult | None:
    """The result in an entry, if its checksum, its key and its fields all hold."""
    if not data.startswith(MAGIC):
        return None
    checksum, newline, body = data[len(MAGIC):].partition(b"\n")
    if not newline or hashlib.sha256(body).hexdigest().encode() != checksum:
        return None
    try:
        entry: dict[str, Any] = json.loads(body)
        if entry.get("key") != key:
            return None
        return CompileResult.from_json(entry["result"])
    except (ValueError, KeyError, TypeError):
        return None


def store(key: str, result: CompileResult) -> None:
    """Write the entry for `key` atomically; a cache that cannot be written is skipped."""
    body = json.dumps({"key": key, "result": result.to_json(include_binary=True)}).encode()
    data = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    try:
        fsutil.atomic_write_bytes(entry_path(key), data)
    except OSError as error:
        log.warning("compile cache entry not written (%s); compiles still work", error)
