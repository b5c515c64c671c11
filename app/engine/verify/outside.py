"""An access outside a buffer that the CPU backend caught, in words: which thread read or
wrote which element of which buffer, and at which line of the kernel's source.

The CPU backend reports such an access as the worker dies (cpu.faults reads its line back);
this module names the spec's buffer and the element, counted as the spec's shape counts them:
"thread (255, 0, 0) of block (3, 0, 0) read a[1023] at off_by_one.cu:15, past the end of a
(1023 elements)". compute-sanitizer's memcheck says the same on a GPU.
"""

from __future__ import annotations

import math

from app.engine.worker.backends.cpu import memory
from app.engine.worker.backends.cpu.faults import OutsideAccess, outside_access
from app.spec.cases import Resolved
from app.spec.dtypes import lookup
from app.spec.model import Spec


def _triple(values: tuple[int, ...]) -> str:
    """(3, 0, 0) as the runtime and CUDA's dim3 print it."""
    return "(" + ", ".join(str(v) for v in values) + ")"


def index_text(flat: int, shape: tuple[int, ...] | list[int]) -> str:
    """A flat element index as the buffer's own indices, row-major ('64, 0' in a 64 x 64
    buffer); the first index may be out of range, which is the point."""
    parts: list[int] = []
    for size in reversed(list(shape)[1:]):
        flat, rest = divmod(flat, max(size, 1))
        parts.append(rest)
    return ", ".join(str(p) for p in [flat, *reversed(parts)])


def _verb(access: OutsideAccess) -> str:
    """read, wrote, or accessed (where the platform does not say which)."""
    return "accessed" if access.write is None else "wrote" if access.write else "read"


def describe(access: OutsideAccess, spec: Spec, resolved: Resolved, guard: int,
             edge: str) -> str:
    """One sentence: the thread, the element and the line of an access outside a buffer made
    in a launch whose buffers were placed at `edge` (protocol.Edge) with `guard`-byte zones."""
    who = f"thread {_triple(access.thread)} of block {_triple(access.block)}"
    line = f" at {access.line}" if access.line else ""
    args = spec.args
    if not 0 <= access.param < len(args) or not args[access.param].is_buffer:
        return f"{who} {_verb(access)} outside kernel parameter {access.param}{line}"
    arg = args[access.param]
    shape = tuple(resolved.shapes[arg.name])
    itemsize, length = lookup(arg.dtype).itemsize, math.prod(shape)
    offset = memory.from_data_start(edge, 2 * guard + length * itemsize, guard, access.bytes,
                                    access.before)
    index = offset // itemsize
    side = "before the start" if index < 0 else "past the end"
    size = " x ".join(str(s) for s in shape)
    held = f"{length} element{'' if length == 1 else 's'}" + (f", {size}" if len(shape) > 1
                                                               else "")
    return (f"{who} {_verb(access)} {arg.name}[{index_text(index, shape)}]{line}, {side} of "
            f"{arg.name} ({held})")


def where(message: str, spec: Spec, resolved: Resolved, guard: int, edge: str) -> str | None:
    """describe() for the access a run's fault message reports, or None when it reports none."""
    access = outside_access(message)
    return None if access is None else describe(access, spec, resolved, guard, edge)
