"""The last steps of a bench: each variant's share of the device's peaks and its flags, then
the report with its status, message, environment and report-wide flags."""

from __future__ import annotations

from typing import Any

from app.base import system
from app.engine.bench.peaks import DevicePeaks, device_key
from app.engine.bench.reports import BenchPoint, BenchReport, VariantTiming, format_ms
from app.engine.bench.roofline import (
    Flag,
    Throughput,
    cache_roof_flags,
    cache_roof_gbps,
    roof_flags,
    share,
)
from app.engine.verify.results import Status
from app.engine.worker.timing import StopReason, TimingPlan


def _label(variant: VariantTiming) -> str:
    """`saxpy at n=1000` for flag messages."""
    case = ", ".join(f"{k}={v}" for k, v in variant.case.items())
    return f"{variant.name} at {case}" if case else variant.name


def _sample_flags(variant: VariantTiming, plan: TimingPlan) -> list[Flag]:
    """Too few samples, or noise still above the target when sampling stopped."""
    stats = variant.stats
    if stats is None:
        return []
    flags = []
    if stats.count < plan.min_samples:
        flags.append(Flag("few_samples", f"{_label(variant)}: only {stats.count} samples (the "
                          f"time limit came first; {plan.min_samples} were wanted)"))
    noisy = stats.rse is not None and stats.rse >= plan.rse_target
    if variant.stop_reason != StopReason.NOISE and noisy:
        flags.append(Flag("noisy", f"{_label(variant)}: the noise (relative standard error "
                          f"{stats.rse:.2%}) is above the {plan.rse_target:.2%} target: compare "
                          "with care"))
    return flags


def _finish_variant(variant: VariantTiming, peaks: DevicePeaks, plan: TimingPlan,
                    facts: dict[str, Any]) -> None:
    """Shares of the peaks, and every flag of one variant."""
    variant.bandwidth_share = share(variant.gbps, peaks.copy_gbps)
    variant.fp32_share = share(variant.gflops, peaks.fp32_gflops)
    rate = Throughput(variant.gbps, variant.gflops, variant.intensity)
    l2_bytes = int(facts["l2_bytes"]) if facts.get("l2_bytes") else None
    # DRAM is the roof only when the data cannot sit in L2: cold mode, and more than L2 moved.
    dram_bound = plan.mode == "cold" and (not l2_bytes or (variant.bytes or 0) > l2_bytes)
    variant.flags += roof_flags(rate, peaks.copy_gbps if dram_bound else None,
                                peaks.theoretical_gbps if dram_bound else None,
                                peaks.fp32_gflops)
    if not dram_bound:  # cached data still has a roof: every SM's L1 at full speed
        roof = cache_roof_gbps(facts.get("sm_count"), facts.get("max_sm_mhz"))
        variant.flags += cache_roof_flags(rate, roof)
    variant.flags += _sample_flags(variant, plan)


def finish_points(timed: list[tuple[BenchPoint, dict[str, Any]]], peaks: DevicePeaks,
                  plan: TimingPlan) -> list[BenchPoint]:
    """Every point with its variants finished."""
    for point, facts in timed:
        for variant in point.variants:
            _finish_variant(variant, peaks, plan, facts)
    return [point for point, _ in timed]


def _cuda_version(value: Any) -> str | None:
    """13000 as '13.0'."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return f"{number // 1000}.{number % 1000 // 10}"


def _driver_from_smi(uuid: str) -> str | None:
    """The driver version nvidia-smi reports for a GPU (when NVML did not)."""
    for gpu in system.list_gpus():
        if not uuid or gpu.uuid == uuid:
            return gpu.driver
    return None


def environment(device: dict[str, Any], facts: dict[str, Any],
                points: list[BenchPoint]) -> dict[str, Any]:
    """The GPU, its driver and CUDA versions, the clocks and how timing was done."""
    uuid = device_key(device, {"gpu_uuid": facts.get("gpu_uuid")})
    first = points[0].clocks if points else {}
    last = points[-1].clocks if points else {}
    keys = ("pci_bus_id", "sm_count", "max_sm_mhz", "l2_bytes", "timer", "flush",
            "flush_bytes", "helpers", "spin_us", "clock_source", "held_down_by",
            "persisting_l2_resets")
    env: dict[str, Any] = {k: facts.get(k) for k in keys}
    env.update({
        "gpu_name": device.get("name"), "gpu_uuid": uuid, "arch": device.get("arch"),
        "driver_version": facts.get("driver_version") or (
            _driver_from_smi(uuid) if device.get("kind") == "gpu" else None),
        "cuda_driver": _cuda_version(facts.get("cuda_driver_version")),
        "pycuda_cuda": facts.get("pycuda_cuda_version"),
        "sm_clock_start_mhz": first.get("start_mhz"), "sm_clock_end_mhz": last.get("end_mhz"),
    })
    return env


def _report_flags(device: dict[str, Any], facts: dict[str, Any], helpers_note: str) -> list[Flag]:
    """Flags about the whole run: an emulated device, launch overhead, no clock readings."""
    if device.get("kind") != "gpu":
        return [Flag("emulated", "these times come from the host clock of a test backend, "
                     "not from a GPU")]
    flags = []
    if facts.get("helpers") != "loaded":
        flags.append(Flag("launch_overhead", f"the timing helper kernels were not used "
                          f"({helpers_note}; worker: {facts.get('helpers')}): a sample may "
                          "include a few microseconds of host launch overhead"))
    if facts.get("clock_source") in (None, "none"):
        flags.append(Flag("no_clock", "the SM clock could not be read (no NVML, no "
                          "nvidia-smi): throttling cannot be detected"))
    return flags


def _status(points: list[BenchPoint], sweep: str | None) -> tuple[Status, str]:
    """'timed' and a summary, or the first failing variant's status and message."""
    for point in points:
        for variant in point.variants:
            if variant.status != Status.TIMED:
                return variant.status, f"{variant.name} at {point.case}: {variant.message}"
    if sweep:
        return Status.TIMED, f"{len(points)} sizes of {sweep}, every timed launch checked"
    point = points[-1]
    if point.comparison is not None:
        return Status.TIMED, point.comparison.describe()
    variant = point.variants[0]
    count = variant.stats.count if variant.stats else 0
    if variant.sequence:
        return Status.TIMED, (f"{variant.name}: median {format_ms(variant.median_ms)} over "
                              f"{count} samples of the whole sequence of "
                              f"{len(variant.sequence)} launches; first and last timed runs "
                              "match the reference")
    return Status.TIMED, (f"{variant.name}: median {format_ms(variant.median_ms)} over {count} "
                     "samples; first and last timed launches match the reference")


def assemble(backend: str, device: dict[str, Any], points: list[BenchPoint],
             facts_list: list[dict[str, Any]], peaks: DevicePeaks,
             verification: list[dict[str, Any]], helpers_note: str,
             sweep: str | None) -> BenchReport:
    """The finished report."""
    facts = facts_list[0] if facts_list else {}
    status, message = _status(points, sweep)
    return BenchReport(status, message, backend=backend, device=device,
                       environment=environment(device, facts, points), peaks=peaks.to_json(),
                       sweep_variable=sweep, points=points, verification=verification,
                       flags=_report_flags(device, facts, helpers_note))
