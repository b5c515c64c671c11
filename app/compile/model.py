"""The values a compile produces: diagnostics, per-kernel resources, SASS lines, occupancy, and
the CompileResult that carries them. Plain dataclasses, no behaviour beyond describing
themselves, so the CLI, the GUI and the verifier read the same facts."""

from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    """How bad a compiler message is; the values are the words logs, JSON and the GUI use."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


SEVERITIES = tuple(Severity)
# Stages a compile can stop at; "compile" means the compiler ran and reported errors.
STAGES = ("input", "options", "includes", "compile", "timeout", "memory", "crash", "backend")


class OptionError(ValueError):
    """A compiler option, include or architecture that Kernel Studio refuses, and why."""

    def __init__(self, option: str, reason: str, file: str = "", line: int = 0) -> None:
        """`option` is the text as given; `reason` says why it is refused and what to do;
        `file` and `line` say where a refused #include is."""
        where = f" ({file}, line {line})" if line else ""
        super().__init__(f"{option!r} is refused: {reason}{where}")
        self.option = option
        self.reason = reason
        self.file = file
        self.line = line


@dataclass(frozen=True)
class Diagnostic:
    """One compiler message on the user's own coordinates.

    `line` is 1-based, 0 when the compiler named no line (an option or ptxas message);
    `column` is 1-based in characters of that line, None when the compiler gave none.
    """

    file: str
    line: int
    column: int | None
    severity: Severity
    message: str
    raw: str

    def format(self) -> str:
        """`file:line:col: severity: message`, the form editors and terminals recognise."""
        where = self.file or "<compiler>"
        if self.line:
            where += f":{self.line}" + (f":{self.column}" if self.column else "")
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class KernelResources:
    """What ptxas gave one kernel (`name` is the lowered symbol the driver loads).

    `constant_bytes` is the module's user `__constant__` memory (shared by all its kernels);
    `shared_static_bytes` excludes the 1 KiB per block the driver reserves on sm_80 and newer;
    `max_threads_per_block` is the largest block it can launch: 1024, capped by
    `__launch_bounds__` and by its registers.
    """

    name: str
    registers: int
    shared_static_bytes: int
    constant_bytes: int
    local_bytes: int
    stack_frame_bytes: int
    spill_stores_bytes: int
    spill_loads_bytes: int
    max_threads_per_block: int
    barriers: int = 0


@dataclass(frozen=True)
class SassLine:
    """One SASS instruction (or label) with the source line it came from, when known."""

    offset: int
    text: str
    file: str | None
    line: int | None


@dataclass(frozen=True)
class Occupancy:
    """Theoretical occupancy of one kernel at one block size on one architecture."""

    arch: str
    block_size: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float
    limiter: str
    limits: tuple[tuple[str, int], ...] = ()
    notes: tuple[str, ...] = ()


def _mangled_prefix(entry: str) -> str:
    """The Itanium-mangled prefix of a free function named `entry` (`a::b::k` allowed)."""
    parts = entry.split("::")
    if len(parts) == 1:
        return f"_Z{len(entry)}{entry}"
    return "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "E"


@dataclass
class CompileResult:
    """Everything one compile produced; a failure is a result with a `stage` and a `message`.

    `seconds` is the wall time of this call (a cache hit is fast); `cached` says the cubin
    came from the cache. `source_path` is where the compiler believed the main file was: line
    information in the cubin names it, and SASS listings map it back to `filename`.
    `lowered` maps each template entry the compile was asked to instantiate (`scale<float, 4>`)
    to its kernel's symbol (app.compile.entries).
    """

    ok: bool
    arch: str
    backend: str
    cubin: bytes | None = None
    ptx: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    kernels: list[KernelResources] = field(default_factory=list)
    log: str = ""
    seconds: float = 0.0
    cached: bool = False
    stage: str | None = None
    message: str = ""
    filename: str = ""
    source_path: str = ""
    compiler: str = ""
    options: tuple[str, ...] = ()
    lowered: dict[str, str] = field(default_factory=dict)

    @property
    def errors(self) -> list[Diagnostic]:
        """The error diagnostics."""
        return [d for d in self.diagnostics if d.severity == Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        """The warning diagnostics."""
        return [d for d in self.diagnostics if d.severity == Severity.WARNING]

    def kernel_symbols(self, entry: str) -> list[str]:
        """Every kernel symbol that `entry` may name: a template entry's lowered name, the
        extern "C" name itself, or each C++ kernel (overload or template instance) whose
        mangled name starts with `_Z<len><entry>`."""
        names = [k.name for k in self.kernels]
        lowered = self.lowered.get(entry.strip())
        if lowered is not None:
            return [lowered] if lowered in names else []
        if entry in names:
            return [entry]
        prefix = _mangled_prefix(entry)
        return [n for n in names if n.startswith(prefix)]

    def kernel_symbol(self, entry: str) -> str | None:
        """The lowered name of the `__global__` function `entry`, None when it is missing or
        ambiguous (several overloads or template instances: see kernel_symbols)."""
        found = self.kernel_symbols(entry)
        return found[0] if len(found) == 1 else None

    def kernel(self, symbol: str) -> KernelResources | None:
        """The resources of the kernel with this lowered name."""
        return next((k for k in self.kernels if k.name == symbol), None)

    def to_json(self, include_binary: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; the cubin as base64 only when asked (else its size)."""
        data = dataclasses.asdict(self)
        data["options"] = list(self.options)
        data["cubin"] = (base64.b64encode(self.cubin).decode() if include_binary and self.cubin
                         else None)
        data["cubin_bytes"] = len(self.cubin) if self.cubin else 0
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompileResult:
        """The inverse of to_json(include_binary=True)."""
        values = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        values["diagnostics"] = [Diagnostic(**{**d, "severity": Severity(d["severity"])})
                                 for d in data.get("diagnostics", [])]
        values["kernels"] = [KernelResources(**k) for k in data.get("kernels", [])]
        values["options"] = tuple(data.get("options", ()))
        values["lowered"] = {str(k): str(v) for k, v in dict(data.get("lowered") or {}).items()}
        cubin = data.get("cubin")
        values["cubin"] = base64.b64decode(cubin) if cubin else None
        return cls(**values)


def failure(stage: str, message: str, *, arch: str, backend: str, filename: str = "",
            seconds: float = 0.0, diagnostics: list[Diagnostic] | None = None,
            log: str = "") -> CompileResult:
    """A result for a compile that did not produce code, with the stage it stopped at."""
    return CompileResult(ok=False, arch=arch, backend=backend, stage=stage, message=message,
                         filename=filename, seconds=seconds, diagnostics=diagnostics or [],
                         log=log)
