"""Theoretical occupancy, computed the way CUDA's occupancy calculator does: resident blocks
per SM are limited by warps, registers (allocated per warp, in units of 256, within four
sub-partitions), shared memory (per block, plus a reservation, in 128-byte units) and a
block count; the smallest limit wins."""

from __future__ import annotations

from dataclasses import dataclass

from app.compile.model import KernelResources, Occupancy

WARP = 32
MAX_BLOCK = 1024
REGISTER_UNIT = 256
SUB_PARTITIONS = 4
SHARED_UNIT = 128
DEFAULT_STATIC_LIMIT = 48 * 1024  # above this a block needs an opt-in (cudaFuncSetAttribute)


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM limits of one compute capability (CUDA Programming Guide, table 'Technical
    Specifications per Compute Capability')."""

    max_warps: int
    max_blocks: int
    registers: int
    shared_per_sm: int
    shared_per_block: int
    reserved_per_block: int


_KIB = 1024
LIMITS = {
    75: ArchLimits(32, 16, 65536, 64 * _KIB, 64 * _KIB, 0),
    80: ArchLimits(64, 32, 65536, 164 * _KIB, 163 * _KIB, _KIB),
    86: ArchLimits(48, 16, 65536, 100 * _KIB, 99 * _KIB, _KIB),
    87: ArchLimits(48, 16, 65536, 164 * _KIB, 163 * _KIB, _KIB),
    89: ArchLimits(48, 24, 65536, 100 * _KIB, 99 * _KIB, _KIB),
    90: ArchLimits(64, 32, 65536, 228 * _KIB, 227 * _KIB, _KIB),
    100: ArchLimits(64, 32, 65536, 228 * _KIB, 227 * _KIB, _KIB),
    103: ArchLimits(64, 32, 65536, 228 * _KIB, 227 * _KIB, _KIB),
    120: ArchLimits(48, 32, 65536, 100 * _KIB, 99 * _KIB, _KIB),
    121: ArchLimits(48, 32, 65536, 100 * _KIB, 99 * _KIB, _KIB),
}


def limits_for(arch: str) -> ArchLimits:
    """The limits of `arch` (sm_90, sm_90a, sm_100f ...), ValueError for one not in the table."""
    digits = arch.removeprefix("sm_").rstrip("af")
    if not digits.isdigit() or int(digits) not in LIMITS:
        known = ", ".join(f"sm_{k}" for k in LIMITS)
        raise ValueError(f"no occupancy data for {arch}; known: {known}")
    return LIMITS[int(digits)]


def _round_up(value: int, unit: int) -> int:
    """`value` rounded up to a multiple of `unit`."""
    return -(-value // unit) * unit


def warps_for_registers(registers: int, limits: ArchLimits) -> int:
    """How many warps of a kernel with `registers` per thread fit in one SM's register file."""
    if registers <= 0:
        return limits.max_warps
    per_warp = _round_up(registers * WARP, REGISTER_UNIT)
    per_partition = limits.registers // SUB_PARTITIONS
    return (per_partition // per_warp) * SUB_PARTITIONS


def max_threads_per_block(registers: int, launch_bound: int | None, arch: str) -> int:
    """The largest block a kernel can launch: 1024, its __launch_bounds__, and its registers
    (a block's warps must all be resident at once)."""
    try:
        by_registers = warps_for_registers(registers, limits_for(arch)) * WARP
    except ValueError:
        by_registers = MAX_BLOCK  # unknown arch: no register limit is claimed
    return min(MAX_BLOCK, by_registers, launch_bound or MAX_BLOCK)


def occupancy(resources: KernelResources, block_size: int, dynamic_shared_bytes: int,
              arch: str) -> Occupancy:
    """Active blocks and warps per SM, the occupancy fraction and what limits it."""
    if block_size < 1:
        raise ValueError(f"block size must be at least 1, not {block_size}")
    if dynamic_shared_bytes < 0:
        raise ValueError("dynamic shared memory cannot be negative")
    limits = limits_for(arch)
    warps = -(-block_size // WARP)
    shared = _round_up(resources.shared_static_bytes + dynamic_shared_bytes
                       + limits.reserved_per_block, SHARED_UNIT)
    found = [
        ("warps", limits.max_warps // warps),
        ("registers", warps_for_registers(resources.registers, limits) // warps),
        ("shared memory", _blocks_by_shared(shared, limits)),
        ("blocks", limits.max_blocks),
    ]
    if block_size > resources.max_threads_per_block:
        found.insert(0, ("block size", 0))
    limiter, blocks = min(found, key=lambda item: item[1])
    notes = _notes(resources, block_size, dynamic_shared_bytes)
    return Occupancy(arch=arch, block_size=block_size, active_blocks_per_sm=blocks,
                     active_warps_per_sm=blocks * warps, max_warps_per_sm=limits.max_warps,
                     occupancy=blocks * warps / limits.max_warps, limiter=limiter,
                     limits=tuple(found), notes=notes)


def _blocks_by_shared(shared_per_block: int, limits: ArchLimits) -> int:
    """Blocks that fit in the SM's shared memory (0 when one block is already too big)."""
    if shared_per_block - limits.reserved_per_block > limits.shared_per_block:
        return 0
    return limits.shared_per_sm // shared_per_block if shared_per_block else limits.max_blocks


def _notes(resources: KernelResources, block_size: int, dynamic: int) -> tuple[str, ...]:
    """What the numbers assume, said where it matters."""
    notes = []
    if block_size > resources.max_threads_per_block:
        notes.append(f"{resources.name} can launch at most {resources.max_threads_per_block} "
                     f"threads per block (registers or __launch_bounds__)")
    if block_size % WARP:
        notes.append(f"block size {block_size} is not a multiple of {WARP}: the last warp is "
                     "partly idle")
    if resources.shared_static_bytes + dynamic > DEFAULT_STATIC_LIMIT:
        notes.append("more than 48 KiB of shared memory per block needs "
                     "cudaFuncSetAttribute(MaxDynamicSharedMemorySize) before launch (Kernel "
                     "Studio's GPU backend sets it; your own host code must too)")
    if resources.spill_stores_bytes or resources.spill_loads_bytes:
        notes.append("registers spill to local memory")
    return tuple(notes)
