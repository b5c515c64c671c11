"""Run kernels on the CPU backend through a real worker process, without a spec or NVRTC:
the unit tests of the emulation header use this to check one behaviour at a time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.engine.worker.client import Worker

GUARD = 4096
KERNELS = Path(__file__).parent / "kernels"


@dataclass
class Scalar:
    """A by-value kernel argument."""

    value: int | float
    dtype: str


class LaunchFailed(Exception):
    """The worker answered a load or run request with an error."""

    def __init__(self, kind: str, message: str) -> None:
        """Keep the protocol's error kind."""
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class CpuWorker:
    """A cpu-backend worker, fed kernels from files and numpy arrays."""

    def __init__(self, folder: Path) -> None:
        """Start the worker; buffer files go to `folder`."""
        self.folder = folder
        self.worker = Worker("cpu", log_dir=folder)
        self.worker.start()
        self.loaded: set[tuple[str, str]] = set()

    def close(self) -> None:
        """Stop the worker."""
        self.worker.close()

    def load(self, source: Path, entry: str, options: list[str] | None = None) -> None:
        """Build and load `entry` of `source` (raises LaunchFailed)."""
        reply = self.request({"op": "load", "symbol": f"{source}:{entry}", "entry": entry,
                              "source_path": str(source), "source_dir": str(source.parent),
                              "options": options or []}, 180.0)
        self.loaded.add((str(source), entry))
        del reply

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One request; a worker that died is replaced for the next one."""
        if not self.worker.alive:
            self.worker.close()
            self.worker = Worker("cpu", log_dir=self.folder)
            self.worker.start()
            self.loaded.clear()
        reply = self.worker.request(message, timeout)
        if not reply.get("ok"):
            raise LaunchFailed(str(reply.get("error")), str(reply.get("message")))
        return reply

    def run(self, source: Path | str, entry: str, grid: tuple[int, ...], block: tuple[int, ...],
            args: list[np.ndarray | Scalar], shared: int = 0,
            timeout: float = 60.0) -> list[np.ndarray]:
        """Launch and return every buffer's data afterwards (guard zones checked intact)."""
        source = KERNELS / source if isinstance(source, str) else source
        if (str(source), entry) not in self.loaded:
            self.load(source, entry)
        items, paths = self._write_args(args)
        self.request({"op": "run", "symbol": f"{source}:{entry}", "entry": entry,
                      "grid": list(grid), "block": list(block), "shared_bytes": shared,
                      "args": items}, timeout)
        return [self._read_back(path, array) for path, array in paths]

    def _write_args(self, args: list[np.ndarray | Scalar]) -> tuple[list[dict[str, Any]],
                                                                     list[tuple[Path, Any]]]:
        """Buffer files (guard, data, guard) and the request's argument list."""
        items: list[dict[str, Any]] = []
        paths: list[tuple[Path, Any]] = []
        for index, arg in enumerate(args):
            if isinstance(arg, Scalar):
                items.append({"scalar": arg.value, "dtype": arg.dtype})
                continue
            path = self.folder / f"arg{index}.bin"
            body = np.ascontiguousarray(arg).reshape(-1).view(np.uint8)
            image = np.full(2 * GUARD + body.size, 0xFF, dtype=np.uint8)
            image[GUARD:GUARD + body.size] = body
            image.tofile(path)
            items.append({"buffer": str(path), "offset": GUARD, "dtype": str(arg.dtype)})
            paths.append((path, arg))
        return items, paths

    @staticmethod
    def _read_back(path: Path, like: np.ndarray) -> np.ndarray:
        """The data part of a buffer file; fails if a guard byte changed."""
        image = np.fromfile(path, dtype=np.uint8)
        assert (image[:GUARD] == 0xFF).all() and (image[-GUARD:] == 0xFF).all(), "guard zone"
        return image[GUARD:-GUARD].view(like.dtype).reshape(like.shape).copy()
