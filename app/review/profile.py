"""What the compiler made of a variant: registers, shared memory, spills, occupancy at the
spec's block size, and the SASS instruction mix (how many memory, arithmetic, control and other
instructions, and the most frequent opcodes)."""

from __future__ import annotations

import math
import re
from collections import Counter

from app.compile import (
    CompileResult,
    KernelResources,
    SassError,
    compile_file,
    default_arch,
    occupancy,
    sass_listing,
)
from app.review.model import MIX_CATEGORIES, CompileFacts
from app.spec.cases import CaseError, resolve
from app.spec.model import Spec

TOP_OPCODES = 8
_MEMORY = ("LD", "ST", "ATOM", "RED", "CCTL", "MEMBAR", "ERRBAR", "UTMA", "UBLKCP")
_CONTROL = ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "BAR",
            "WARPSYNC", "BPT", "KILL", "YIELD", "SYNCS", "BREAK", "NANOSLEEP", "VOTE")
_OTHER = frozenset({"MOV", "S2R", "S2UR", "CS2R", "NOP", "SHFL", "PRMT", "R2UR", "UMOV", "ULDC",
                    "P2R", "R2P", "PLOP3", "DEPBAR", "SEL", "B2R", ""})
_PREDICATE = re.compile(r"^@!?\w+\s+")


def opcode(instruction: str) -> str:
    """The opcode of a SASS instruction, without predicate or modifiers ('@!P0 LDG.E R2' is
    LDG)."""
    text = _PREDICATE.sub("", instruction.strip().lstrip("{").strip())
    return text.split(" ", 1)[0].split(".", 1)[0].rstrip(";")


def category(name: str) -> str:
    """memory, control, other or arithmetic, for one SASS opcode."""
    if name.startswith(_MEMORY) or name in ("LDGSTS", "LDSM"):
        return "memory"
    if name.startswith(_CONTROL):
        return "control"
    return "other" if name in _OTHER else "arithmetic"


def instruction_mix(texts: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Counts per category and of the most frequent opcodes, for SASS instruction texts."""
    # NOPs pad the function's end for alignment: they are never executed.
    names = [n for n in (opcode(t) for t in texts if t.strip() and not t.strip().endswith(":"))
             if n != "NOP"]
    categories = Counter(category(n) for n in names)
    return ({c: categories.get(c, 0) for c in MIX_CATEGORIES},
            dict(Counter(n for n in names if n).most_common(TOP_OPCODES)))


def _launch_shape(spec: Spec) -> tuple[int | None, int]:
    """Threads per block and dynamic shared bytes at the bench case (else the last verify
    case); (None, 0) when neither resolves."""
    for case in [spec.bench_case, *reversed(spec.cases)]:
        if not case:
            continue
        try:
            resolved = resolve(spec, case)
        except (CaseError, ValueError):
            continue
        return math.prod(resolved.block), resolved.shared_bytes
    return None, 0


def _with_resources(facts: CompileFacts, kernel: KernelResources, spec: Spec) -> None:
    """Registers, memory, spills and occupancy into `facts`."""
    facts.registers = kernel.registers
    facts.shared_static_bytes = kernel.shared_static_bytes
    facts.local_bytes = kernel.local_bytes
    facts.spill_stores_bytes = kernel.spill_stores_bytes
    facts.spill_loads_bytes = kernel.spill_loads_bytes
    block, dynamic = _launch_shape(spec)
    facts.block_size = block
    if block:
        try:
            found = occupancy(kernel, block, dynamic, facts.arch)
        except ValueError as error:
            facts.notes.append(f"occupancy: {error}")
            return
        facts.occupancy, facts.occupancy_limiter = found.occupancy, found.limiter
        facts.notes += list(found.notes)


def _with_mix(facts: CompileFacts, result: CompileResult, symbol: str) -> None:
    """The SASS instruction mix into `facts` (a note when no disassembler could run)."""
    try:
        lines = sass_listing(result, symbol)
    except SassError as error:
        facts.notes.append(f"no SASS: {error}")
        return
    facts.mix, facts.opcodes = instruction_mix([line.text for line in lines])
    facts.instructions = sum(facts.mix.values())


def compile_facts(spec: Spec, arch: str | None = None, compiler: str | None = None) -> CompileFacts:
    """Compile a variant's kernel (the real compiler, in its sandboxed child) and describe it."""
    arch = arch or default_arch()
    backend = compiler or spec.compiler
    result = compile_file(spec.source_path, arch=arch, options=list(spec.options),
                          backend=backend, entries=spec.entries)
    facts = CompileFacts(ok=result.ok, arch=arch, compiler=str(backend))
    if not result.ok:
        errors = [d.format() for d in result.errors[:3]]
        facts.message = result.message or "; ".join(errors) or "the kernel did not compile"
        return facts
    symbol = result.kernel_symbol(spec.entry)
    kernel = result.kernel(symbol) if symbol else None
    if symbol is None or kernel is None:
        facts.ok, facts.message = False, f"no __global__ function named {spec.entry!r}"
        return facts
    _with_resources(facts, kernel, spec)
    _with_mix(facts, result, symbol)
    return facts
