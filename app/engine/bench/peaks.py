"""A device's peaks, the roofs that timing results are measured against, cached by device UUID.

- Copy bandwidth: measured once per device by timing a float4 copy kernel
  (resources/bench/peak_copy) cold, over 2 x 256 MiB, with the same engine as any kernel.
- Theoretical DRAM bandwidth: memory clock x bus width x 2 (double data rate).
- FP32 rate: SMs x FP32 lanes per SM x 2 x the maximum SM clock (app.engine.bench.roofline's table).
The cache is one JSON file in the user's cache folder, written atomically.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from app.base import fsutil, paths
from app.engine.bench.roofline import fp32_lanes, peak_fp32_gflops, theoretical_bandwidth_gbps
from app.engine.worker.clocks import nvml_uuid

CACHE_NAME = "device-peaks.json"
COPY_SPEC = paths.RESOURCES / "bench" / "peak_copy" / "peak_copy.toml"
COPY_ELEMENTS = 64 * 2**20  # float32 elements: 256 MiB read and 256 MiB written
CACHE_VERSION = 1


@dataclass
class DevicePeaks:
    """The roofs of one device."""

    uuid: str
    name: str
    arch: str
    copy_gbps: float | None = None
    copy_note: str = "not measured"
    theoretical_gbps: float | None = None
    fp32_gflops: float | None = None
    fp32_note: str = ""
    measured_at: str = ""
    version: int = CACHE_VERSION

    def to_json(self) -> dict[str, Any]:
        """As JSON data."""
        return asdict(self)


def cache_file() -> Path:
    """Where peaks are cached."""
    return paths.cache_dir() / CACHE_NAME


def _read_cache() -> dict[str, Any]:
    """The whole cache; empty when missing or unreadable (it is only a cache)."""
    try:
        data = json.loads(cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_cached(uuid: str) -> DevicePeaks | None:
    """The cached peaks of a device with a measured copy bandwidth, or None."""
    entry = _read_cache().get(uuid) if uuid else None
    if not isinstance(entry, dict) or entry.get("version") != CACHE_VERSION:
        return None
    known = {f.name for f in fields(DevicePeaks)}
    try:
        peaks = DevicePeaks(**{k: v for k, v in entry.items() if k in known})
    except TypeError:
        return None
    return peaks if peaks.copy_gbps else None


def store(peaks: DevicePeaks) -> None:
    """Add or replace a device's entry (atomic write; a failure only loses the cache)."""
    if not peaks.uuid:
        return
    data = _read_cache()
    data[peaks.uuid] = peaks.to_json()
    try:
        fsutil.atomic_write_text(cache_file(), json.dumps(data, indent=2, sort_keys=True))
    except OSError:
        pass


def _clock_mhz(facts: dict[str, Any]) -> tuple[float | None, str]:
    """The maximum SM clock and where it came from."""
    if facts.get("max_sm_mhz"):
        return float(facts["max_sm_mhz"]), f"max SM clock from {facts.get('clock_source')}"
    if facts.get("clock_khz"):
        return float(facts["clock_khz"]) / 1000.0, "clock from the CUDA device attribute"
    return None, "no SM clock known"


def device_key(device: dict[str, Any], facts: dict[str, Any]) -> str:
    """The key of a device in the cache: its UUID (GPU-... form), else its PCI bus id."""
    uuid = str(device.get("uuid") or "")
    return nvml_uuid(uuid) if uuid else str(facts.get("gpu_uuid") or facts.get("pci_bus_id")
                                            or "")


def derived_peaks(device: dict[str, Any], facts: dict[str, Any]) -> DevicePeaks:
    """The peaks that follow from the device's facts alone (no measurement)."""
    arch = str(device.get("arch", ""))
    sms = int(facts.get("sm_count") or device.get("multiprocessors") or 0)
    clock, where = _clock_mhz(facts)
    fp32 = peak_fp32_gflops(arch, sms, clock) if clock else None
    lanes = fp32_lanes(arch)
    note = (f"{sms} SMs x {lanes} FP32 lanes x 2 x {clock:.0f} MHz ({where})" if fp32 and clock
            else f"unknown: {arch or 'no arch'} is not in the FP32 table, or {where}")
    theoretical = theoretical_bandwidth_gbps(float(facts.get("memory_clock_khz") or 0),
                                             int(facts.get("bus_width_bits") or 0))
    return DevicePeaks(uuid=device_key(device, facts),
                       name=str(device.get("name", "")), arch=arch,
                       theoretical_gbps=theoretical, fp32_gflops=fp32, fp32_note=note,
                       measured_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
