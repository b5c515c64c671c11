"""Roofline arithmetic and the flags a timing result may carry.

Achieved rates come from the spec's `[bench] bytes` and `flops` over the median time. Peaks:
bandwidth measured once per device with a copy kernel (app.engine.bench.peaks), the theoretical
bandwidth from the memory clock and bus width, and the FP32 rate from the table below
(SMs x FP32 lanes per SM x 2 operations per fused multiply-add x the maximum SM clock).
"""

from __future__ import annotations

from dataclasses import dataclass

# FP32 lanes (CUDA cores) per SM by compute capability, from NVIDIA's architecture whitepapers
# and the CUDA programming guide's throughput table.
FP32_LANES_PER_SM: dict[tuple[int, int], int] = {
    (5, 0): 128, (5, 2): 128, (5, 3): 128,             # Maxwell
    (6, 0): 64, (6, 1): 128, (6, 2): 128,              # Pascal (P100 has 64)
    (7, 0): 64, (7, 2): 64, (7, 5): 64,                # Volta, Xavier, Turing
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,  # A100; GA10x, Orin, Ada
    (9, 0): 128,                                       # Hopper (H100, H200)
    (10, 0): 128, (10, 3): 128, (11, 0): 128,          # Blackwell data centre, Thor
    (12, 0): 128, (12, 1): 128,                        # Blackwell workstation, DGX Spark
}
# Clock drop (relative to the clock at the start of sampling) that marks a run as throttled.
# Boost clocks move in steps of about 15 MHz (under 1% of 1980 MHz); power or thermal capping
# takes 100 MHz and more.
THROTTLE_DROP = 0.03
SUSPICIOUS_SPEEDUP = 10.0
# Slack over a roof before a result counts as above it (rounding of clocks and of the spec's
# byte count).
ROOF_SLACK = 0.02
# Without a theoretical bandwidth, a measured copy can be beaten a little by read-heavy kernels.
MEASURED_ROOF_SLACK = 0.15
# Bytes one SM's L1 can deliver per clock (128 on every architecture since Volta). Data that
# sits in L2 or L1 has no DRAM roof, but nothing reaches the SMs faster than all their L1s
# together: a time below that is a kernel skipping work, whatever the caches hold.
L1_BYTES_PER_CLOCK = 128


@dataclass(frozen=True)
class Flag:
    """Something a reader of a timing result must know: a code and a sentence."""

    code: str
    message: str


@dataclass(frozen=True)
class Throughput:
    """Achieved rates at one time: GB/s, GFLOP/s and FLOP per byte (None where unknown)."""

    gbps: float | None
    gflops: float | None
    intensity: float | None


def cache_roof_gbps(sm_count: int | None, max_sm_mhz: float | None) -> float | None:
    """The fastest any data can reach the SMs, in GB/s (None without the device's facts)."""
    if not sm_count or not max_sm_mhz:
        return None
    return sm_count * L1_BYTES_PER_CLOCK * max_sm_mhz * 1e6 / 1e9


def cache_roof_flags(rate: Throughput, roof_gbps: float | None) -> list[Flag]:
    """'above_roofline' when a rate beats the SMs' combined L1 bandwidth (cached data too)."""
    if rate.gbps is None or roof_gbps is None or rate.gbps <= roof_gbps * (1 + ROOF_SLACK):
        return []
    return [Flag("above_roofline", f"{rate.gbps:.0f} GB/s is above what the SMs can load even "
                 f"from their caches ({roof_gbps:.0f} GB/s): the spec's bytes may be too high, "
                 "or the kernel skips work (a remembered result, say)")]


def parse_arch(arch: str) -> tuple[int, int] | None:
    """(9, 0) from 'sm_90' or 'sm_90a'; (10, 0) from 'sm_100'; None when unreadable."""
    digits = "".join(ch for ch in arch.removeprefix("sm_") if ch.isdigit())
    if len(digits) < 2:
        return None
    return int(digits[:-1]), int(digits[-1])


def fp32_lanes(arch: str) -> int | None:
    """FP32 lanes per SM for an arch, None when the table does not know it."""
    version = parse_arch(arch)
    return FP32_LANES_PER_SM.get(version) if version else None


def peak_fp32_gflops(arch: str, sm_count: int, clock_mhz: float) -> float | None:
    """SMs x lanes x 2 x clock, in GFLOP/s (None for an unknown arch or missing numbers)."""
    lanes = fp32_lanes(arch)
    if lanes is None or sm_count <= 0 or clock_mhz <= 0:
        return None
    return sm_count * lanes * 2 * clock_mhz / 1000.0


def theoretical_bandwidth_gbps(memory_clock_khz: float, bus_width_bits: int) -> float | None:
    """DRAM bandwidth from the memory clock and bus width (double data rate), in GB/s."""
    if memory_clock_khz <= 0 or bus_width_bits <= 0:
        return None
    return 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8.0 / 1e9


def throughput(milliseconds: float, bytes_moved: float | None,
               flops: float | None) -> Throughput:
    """GB/s and GFLOP/s over `milliseconds`, and arithmetic intensity."""
    if milliseconds <= 0:
        return Throughput(None, None, None)
    seconds = milliseconds / 1000.0
    gbps = bytes_moved / seconds / 1e9 if bytes_moved is not None else None
    gflops = flops / seconds / 1e9 if flops is not None else None
    intensity = flops / bytes_moved if flops is not None and bytes_moved else None
    return Throughput(gbps, gflops, intensity)


def share(value: float | None, peak: float | None) -> float | None:
    """value / peak, when both are known."""
    if value is None or not peak:
        return None
    return value / peak


def throttled(start_mhz: float | None, end_mhz: float | None,
              lowest_mhz: float | None = None, drop: float = THROTTLE_DROP) -> bool:
    """Whether the SM clock fell by more than `drop` from the start of sampling."""
    if not start_mhz:
        return False
    seen = [v for v in (end_mhz, lowest_mhz) if v is not None]
    return bool(seen) and min(seen) < start_mhz * (1.0 - drop)


def throttle_flag(start_mhz: float | None, end_mhz: float | None,
                  lowest_mhz: float | None = None) -> Flag | None:
    """A 'throttled' flag naming the clocks, or None."""
    if not throttled(start_mhz, end_mhz, lowest_mhz):
        return None
    low = min(v for v in (end_mhz, lowest_mhz) if v is not None)
    return Flag("throttled", f"the SM clock dropped from {start_mhz:.0f} MHz to {low:.0f} MHz "
                             "while sampling (power or thermal limit): times may be too slow")


def speedup_flag(speedup: float | None) -> Flag | None:
    """A 'suspicious_speedup' flag when a variant beats its baseline by more than 10x."""
    if speedup is None or speedup <= SUSPICIOUS_SPEEDUP:
        return None
    return Flag("suspicious_speedup", f"{speedup:.1f}x faster than the baseline: more than "
                f"{SUSPICIOUS_SPEEDUP:.0f}x is rare; check that both do the same work")


def roof_flags(rate: Throughput, peak_gbps: float | None, theoretical_gbps: float | None,
               peak_gflops: float | None) -> list[Flag]:
    """'above_roofline' flags when a rate beats what the device can do.

    Bandwidth is judged against the theoretical DRAM peak when known, else the measured copy
    peak with some slack; compute against the FP32 peak."""
    flags = []
    if rate.gbps is not None:
        roof = theoretical_gbps * (1 + ROOF_SLACK) if theoretical_gbps else (
            peak_gbps * (1 + MEASURED_ROOF_SLACK) if peak_gbps else None)
        if roof is not None and rate.gbps > roof:
            flags.append(Flag("above_roofline", f"{rate.gbps:.0f} GB/s is above the device's "
                              f"memory bandwidth ({roof:.0f} GB/s): the spec's bytes may be too "
                              "high, or the kernel skips work"))
    if rate.gflops is not None and peak_gflops and rate.gflops > peak_gflops * (1 + ROOF_SLACK):
        flags.append(Flag("above_roofline", f"{rate.gflops:.0f} GFLOP/s is above the FP32 peak "
                          f"({peak_gflops:.0f} GFLOP/s): the spec's flops may be too high, the "
                          "kernel skips work, or it uses tensor cores or packed half math"))
    return flags
