"""Reading the SM clock (NVML through a stand-in module, or nvidia-smi's text) and the device
peaks cache keyed by UUID."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from app.engine.bench import peaks
from app.engine.worker import clocks
from app.engine.worker.clocks import ClockReader, nvml_uuid, parse_number, reason_names


def test_uuid_in_nvml_form() -> None:
    raw = bytes(range(16)).hex()
    assert nvml_uuid(raw) == "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert nvml_uuid("GPU-abc") == "GPU-abc"
    assert nvml_uuid("") == ""


def test_nvidia_smi_numbers() -> None:
    assert parse_number("1980\n") == 1980.0
    assert parse_number(" 1755 \n1980\n") == 1755.0
    assert parse_number("[N/A]") is None
    assert parse_number("") is None
    assert parse_number(None) is None


def test_reasons_that_hold_the_clock_down() -> None:
    assert reason_names(0x1) == []  # idle is not a slowdown
    assert reason_names(0x4 | 0x40) == ["software power cap", "hardware thermal slowdown"]


def fake_nvml(clock: list[float]) -> types.ModuleType:
    """A pynvml stand-in whose SM clock reads from `clock`."""
    module = types.ModuleType("pynvml")
    module.nvmlInit = lambda: None  # type: ignore[attr-defined]
    module.nvmlShutdown = lambda: None  # type: ignore[attr-defined]

    def by_uuid(uuid: str) -> str:
        if uuid != "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f":
            raise RuntimeError("not found")
        return "handle"

    module.nvmlDeviceGetHandleByUUID = by_uuid  # type: ignore[attr-defined]
    module.nvmlDeviceGetHandleByPciBusId = lambda bus: "handle"  # type: ignore[attr-defined]
    module.nvmlDeviceGetClockInfo = lambda h, kind: clock[0]  # type: ignore[attr-defined]
    module.nvmlDeviceGetMaxClockInfo = lambda h, kind: 1980  # type: ignore[attr-defined]
    module.nvmlSystemGetDriverVersion = lambda: b"580.159.04"  # type: ignore[attr-defined]
    module.nvmlDeviceGetCurrentClocksEventReasons = (  # type: ignore[attr-defined]
        lambda h: 0x4)
    module.nvmlDeviceGetUUID = lambda h: "GPU-0001"  # type: ignore[attr-defined]
    return module


def test_nvml_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1980.0]
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(clock))
    reader = ClockReader(bytes(range(16)).hex(), "0000:3B:00.0")
    assert reader.source == "nvml" and reader.cheap
    assert reader.sm_mhz() == 1980.0
    clock[0] = 1700.0
    assert reader.sm_mhz() == 1700.0
    assert reader.facts() == {"clock_source": "nvml", "driver_version": "580.159.04",
                              "max_sm_mhz": 1980.0, "gpu_uuid": "GPU-0001"}
    assert reader.held_down_by() == ["software power cap"]
    reader.close()


def test_nvidia_smi_reader_when_nvml_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    asked: list[list[str]] = []

    def run_text(command: list[str], timeout: float = 10.0) -> str:
        asked.append(command)
        return "1410\n"

    monkeypatch.setattr(clocks.system, "find_tool", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(clocks.system, "run_text", run_text)
    reader = ClockReader("", "00000000:3B:00.0")
    assert reader.source == "nvidia-smi" and not reader.cheap
    assert reader.sm_mhz() == 1410.0
    assert asked[-1][1:3] == ["-i", "00000000:3B:00.0"]
    assert "--query-gpu=clocks.sm" in asked[-1]
    assert reader.held_down_by() == []


def test_no_clock_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(clocks.system, "find_tool", lambda name: None)
    reader = ClockReader("", "")
    assert reader.source == "none"
    assert reader.sm_mhz() is None


H200 = {"name": "NVIDIA H200", "kind": "gpu", "arch": "sm_90", "uuid": "ab" * 16,
        "multiprocessors": 132}
H200_FACTS = {"sm_count": 132, "max_sm_mhz": 1980.0, "clock_source": "nvml",
              "memory_clock_khz": 3_201_000, "bus_width_bits": 6144}


def test_derived_peaks_of_an_h200() -> None:
    derived = peaks.derived_peaks(H200, H200_FACTS)
    assert derived.fp32_gflops == pytest.approx(66908.16)
    assert derived.fp32_note.startswith("132 SMs x 128 FP32 lanes x 2 x 1980 MHz")
    assert derived.theoretical_gbps == pytest.approx(4916.7, rel=1e-4)
    assert derived.copy_gbps is None
    assert derived.uuid == nvml_uuid("ab" * 16)
    no_uuid = peaks.derived_peaks({**H200, "uuid": ""}, {**H200_FACTS, "gpu_uuid": "GPU-1"})
    assert no_uuid.uuid == "GPU-1"


def test_fp32_peak_falls_back_to_the_cuda_clock_attribute() -> None:
    derived = peaks.derived_peaks(H200, {"sm_count": 132, "clock_khz": 1_980_000})
    assert derived.fp32_gflops == pytest.approx(66908.16)
    unknown = peaks.derived_peaks({**H200, "arch": "sm_99"}, H200_FACTS)
    assert unknown.fp32_gflops is None and "not in the FP32 table" in unknown.fp32_note


def test_peaks_are_cached_by_uuid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_CACHE", str(tmp_path / "cache"))
    key, other_key = nvml_uuid("ab" * 16), nvml_uuid("cd" * 16)
    assert peaks.load_cached(key) is None
    first = peaks.derived_peaks(H200, H200_FACTS)
    peaks.store(first)  # no copy bandwidth yet: stored, but not a usable cache entry
    assert peaks.load_cached(first.uuid) is None
    first.copy_gbps, first.copy_note = 4321.0, "measured"
    peaks.store(first)
    other = peaks.derived_peaks({**H200, "uuid": "cd" * 16}, H200_FACTS)
    other.copy_gbps = 3000.0
    peaks.store(other)
    loaded = peaks.load_cached(key)
    assert loaded is not None and loaded.copy_gbps == 4321.0
    assert peaks.load_cached(other_key).copy_gbps == 3000.0  # type: ignore[union-attr]
    data = json.loads(peaks.cache_file().read_text())
    assert set(data) == {key, other_key}
    assert not list(peaks.cache_file().parent.glob(".*.tmp"))  # atomic: no leftovers


def test_a_broken_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_CACHE", str(tmp_path / "cache"))
    peaks.cache_file().parent.mkdir(parents=True)
    peaks.cache_file().write_text("{not json")
    assert peaks.load_cached("ab" * 16) is None
    peaks.cache_file().write_text(json.dumps({"ab" * 16: {"version": 0, "copy_gbps": 1.0}}))
    assert peaks.load_cached("ab" * 16) is None
