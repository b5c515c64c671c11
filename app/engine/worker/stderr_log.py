"""A worker's stderr, kept within bounds: a kernel's printf in a loop can write gigabytes, and
the log used to be a file in /dev/shm that grew with it (1 GiB seen).

A daemon thread drains the worker's stderr pipe. The first HEAD_BYTES go to the log file (so
that short logs read as before) and stay in memory; after that only the last TAIL_BYTES are
kept, and the text says how many bytes were cut between the two. The pipe also slows a kernel
that prints without end to the pace of the reader, which its time limit then bounds.
"""

from __future__ import annotations

import os
import select
import threading
from typing import IO

HEAD_BYTES = 2000
TAIL_BYTES = 2000
CHUNK = 1 << 16


class HeadTail:
    """The head and the tail of a stream, and how much lies between them (not thread-safe:
    Capture serialises its use)."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        """Start empty."""
        self.head_limit, self.tail_limit = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> bytes:
        """Take one chunk; returns the part of it that went to the head."""
        self.total += len(chunk)
        room = max(self.head_limit - len(self.head), 0)
        self.head += chunk[:room]
        self.tail += chunk[room:]
        del self.tail[:max(len(self.tail) - self.tail_limit, 0)]
        return chunk[:room]

    @property
    def cut(self) -> int:
        """Bytes dropped between the head and the tail."""
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """Everything kept, as text, with a line saying how much was cut where it was."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.cut:
            return (head + tail).strip()
        return f"{head}\n[... {self.cut} bytes cut ...]\n{tail}".strip()


class Capture:
    """A HeadTail fed from a pipe by a daemon thread; reading the text first takes in what the
    pipe holds, so that a line the worker wrote before a reply is never missing after it."""

    def __init__(self, pipe: IO[bytes], head_file: IO[bytes] | None = None) -> None:
        """Start draining `pipe`; the head is also written to `head_file` when given."""
        self.log = HeadTail()
        self._pipe, self._file, self._open = pipe, head_file, True
        self._fd = pipe.fileno()
        os.set_blocking(self._fd, False)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="worker-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        """Wait for data and take it in, until the pipe closes (the worker and all its
        children are gone)."""
        while self._open:
            select.select([self._fd], [], [])
            with self._lock:
                self._pump()

    def _pump(self) -> None:
        """Take in what the pipe holds now (the caller holds the lock)."""
        while self._open:
            try:
                chunk = os.read(self._fd, CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._open = False
                self._pipe.close()
                return
            self._keep(chunk)

    def _keep(self, chunk: bytes) -> None:
        """Feed the log; the head also goes to the file."""
        to_head = self.log.feed(chunk)
        if to_head and self._file is not None:
            try:
                self._file.write(to_head)
                self._file.flush()
            except (OSError, ValueError):  # closed by the client, or full: memory keeps it
                self._file = None

    def text(self) -> str:
        """The log so far, including what the pipe holds at this moment."""
        with self._lock:
            self._pump()
            return self.log.text()


def capture(pipe: IO[bytes] | None, head_file: IO[bytes] | None = None) -> Capture | None:
    """Drain a worker's stderr pipe (Popen(..., stderr=subprocess.PIPE).stderr)."""
    return Capture(pipe, head_file) if pipe is not None else None
