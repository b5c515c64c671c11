"""Whether every case of a verification fits this machine, decided before anything runs.

A case costs far more than its buffers: the buffer files (in /dev/shm where it is writable),
the worker's copy of each image and its guarded arena, the parent's inputs and expected
values (and their .npy copies for the reference process), the image read back, and the
checks, which widen each output to 8-byte numbers and build a few temporaries of that size.
Measured on the CPU backend (benchmarks/memory_estimate.py, 2 cores, 24 GiB): vector_add with
0.75 GiB of buffers peaked at 3.9 GiB (estimate 4.8), a uint8 copy with 0.5 GiB at 6.0 GiB
(estimate 7.5: integer outputs are widened to 8 bytes for the checks).

A case estimated above SHARE of the memory available now is refused as "unverified" (exit 3):
the spec is not wrong (the same case may pass on a larger machine), this machine could not
decide. The message names the case, the estimate and what is available.
"""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.engine.verify.results import RunResult, Status, Verdict
from app.spec.cases import Resolved
from app.spec.dtypes import lookup
from app.spec.model import Case, Spec

# Refuse a case estimated above this share of MemAvailable (the rest is for the GUI, the
# compiler and the reference's own temporaries, which no estimate can see).
SHARE = 0.8
# Of a GPU's memory, allow this share (the context, the L2 flush buffer and the runtime's
# own allocations take the rest).
DEVICE_SHARE = 0.9
# Bytes per output element during the checks: the expected and actual values widened to 8
# bytes, and (for floats) three temporaries of the tolerance test; integers compare exactly.
CHECK_BYTES_FLOAT = 44
CHECK_BYTES_INT = 24
# Errors of a write that found its file system full.
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


@dataclass(frozen=True)
class Need:
    """What one case needs: peak host bytes, bytes of buffer files, bytes of device memory."""

    host: int
    files: int
    device: int


def _count(resolved: Resolved, name: str) -> int:
    """Elements of one buffer."""
    return math.prod(resolved.shapes[name])


def need(spec: Spec, resolved: Resolved, guard: int) -> Need:
    """The estimate for one case whose buffers carry `guard` bytes on each side."""
    images = inputs = expected = largest = checks = 0
    for arg in spec.args:
        if not arg.is_buffer:
            continue
        dtype = lookup(arg.dtype)
        data = _count(resolved, arg.name) * dtype.itemsize
        images += data + 2 * guard
        largest = max(largest, data + 2 * guard)
        if arg.kind in ("in", "inout"):
            inputs += data
        if arg.is_output:
            expected += data
            per = CHECK_BYTES_FLOAT if dtype.is_float else CHECK_BYTES_INT
            checks = max(checks, _count(resolved, arg.name) * per)
    held = images + inputs + expected  # buffer files, inputs and expected values, all along
    launch = held + 2 * images  # the worker's images and guarded arenas
    reference = held + 2 * (inputs + expected)  # .npy files, and the reference's copies
    check = held + 2 * largest + checks  # images read back one after another, then checked
    # The buffer files share the engine's folder with the reference's .npy files.
    return Need(max(launch, reference, check), held, images)


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, in bytes (None where there is no such file)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def free_space(folder: Path) -> int | None:
    """Bytes that may still be written in `folder`'s file system (tmpfs included)."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def gib(count: float) -> str:
    """Bytes as GiB for a message."""
    return f"{count / 2**30:.1f} GiB"


def _case_text(resolved: Resolved) -> str:
    """A case as verdicts write it."""
    return "{" + ", ".join(f"{k}={v}" for k, v in resolved.case.items()) + "}"


# How problem() begins its two memory refusals (the host's, the GPU's): is_memory_refusal.
HOST_SHORT = "of memory (its buffers, the worker's copies of them and the checks)"
DEVICE_SHORT = "of GPU memory, more than"


def is_memory_refusal(message: str) -> bool:
    """Whether a verdict's message is problem()'s refusal of a case too large for this machine
    (a smaller case of the same spec may fit; a full disk is not one of these)."""
    return HOST_SHORT in message or DEVICE_SHORT in message


def problem(resolved: Resolved, needed: Need, device: dict[str, Any], folder: Path,
            available: int | None) -> str | None:
    """Why this machine cannot run this case, or None."""
    case = _case_text(resolved)
    if available is not None and needed.host > SHARE * available:
        return (f"case {case} needs about {gib(needed.host)} {HOST_SHORT}, more than "
                f"{SHARE:.0%} of the "
                f"{gib(available)} available now; verify a smaller case (--case) or free memory")
    space = free_space(folder)
    if space is not None and needed.files > space:
        return (f"case {case} needs {gib(needed.files)} for its buffer and reference files in "
                f"{folder}, which "
                f"has {gib(space)} free; free space there or verify a smaller case")
    total = device.get("total_memory")
    if isinstance(total, int) and needed.device > DEVICE_SHARE * total:
        return (f"case {case} needs {gib(needed.device)} {DEVICE_SHORT} "
                f"{DEVICE_SHARE:.0%} of the {gib(total)} of {device.get('name', 'the GPU')}; "
                "verify a smaller case (--case)")
    return None


def refusal(spec: Spec, resolved: list[Resolved], device: dict[str, Any], folder: Path,
            guard: int) -> Verdict | None:
    """An "unverified" verdict for the first case this machine cannot hold, or None when
    every case fits. Called once per verification, before the first run."""
    available = available_memory()
    for case in resolved:
        reason = problem(case, need(spec, case, guard), device, folder, available)
        if reason:
            return Verdict(Status.UNVERIFIED, reason)
    return None


def guarded(run: Callable[[], RunResult], case: Case, seed: int) -> RunResult:
    """`run()`, with running out of memory or of space for the buffer files (which the estimate
    can miss when something else takes memory meanwhile) turned into an "unverified" run."""
    try:
        return run()
    except MemoryError:
        return RunResult(case, seed, Status.UNVERIFIED, "the verifier ran out of memory for "
                         "this case; verify a smaller case (--case) or free memory")
    except OSError as error:
        if error.errno not in FULL and not _short_write(error):
            raise
        return RunResult(case, seed, Status.UNVERIFIED, f"no space left for the buffer files "
                         f"({error.strerror}); free space in /dev/shm or verify a smaller case")


def _short_write(error: OSError) -> bool:
    """NumPy's tofile reports a full file system as a short write, without an errno."""
    return error.errno is None and "requested and" in str(error) and "written" in str(error)
