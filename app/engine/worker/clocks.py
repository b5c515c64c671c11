"""The SM clock and driver facts of one GPU, read in the worker while it times kernels: through
NVML (the nvidia-ml-py package, `pynvml`) when it can be imported, else through nvidia-smi.

NVML answers in microseconds, so the clock is also watched while sampling; nvidia-smi takes
tens of milliseconds, so it is read only at the start and the end of sampling.
"""

from __future__ import annotations

import importlib
from typing import Any

from app.base import system

# Bits of NVML's clock event (throttle) reasons that mean the clock was held down.
REASON_BITS = {0x4: "software power cap", 0x8: "hardware slowdown",
               0x20: "software thermal slowdown", 0x40: "hardware thermal slowdown",
               0x80: "hardware power brake"}
NVML_CLOCK_SM = 1  # nvmlClockType_t: 0 graphics, 1 SM, 2 memory


def nvml_uuid(value: str) -> str:
    """'GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx' from 32 hex digits (pycuda's UUID bytes
    in hex); other forms are returned unchanged."""
    digits = value.lower()
    if len(digits) != 32 or any(ch not in "0123456789abcdef" for ch in digits):
        return value
    parts = (digits[:8], digits[8:12], digits[12:16], digits[16:20], digits[20:])
    return "GPU-" + "-".join(parts)


def parse_number(text: str | None) -> float | None:
    """The first number of nvidia-smi's `--format=csv,noheader,nounits` answer."""
    if not text:
        return None
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    try:
        return float(first)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def reason_names(bits: int) -> list[str]:
    """The clock event reasons in a bit mask that hold the clock down."""
    return [name for bit, name in REASON_BITS.items() if bits & bit]


class ClockReader:
    """Reads one GPU's SM clock; `source` says how ("nvml", "nvidia-smi" or "none")."""

    def __init__(self, uuid: str = "", pci_bus_id: str = "") -> None:
        """Find the GPU through NVML, else check that nvidia-smi can answer for it."""
        self.selector = nvml_uuid(uuid) if uuid else pci_bus_id
        self.nvml: Any = None
        self.handle: Any = None
        self.source = "none"
        if self._open_nvml(uuid, pci_bus_id):
            self.source = "nvml"
        elif self.selector and self._smi("clocks.sm") is not None:
            self.source = "nvidia-smi"

    @property
    def cheap(self) -> bool:
        """Whether a reading costs microseconds (so it may happen while sampling)."""
        return self.source == "nvml"

    def _open_nvml(self, uuid: str, pci_bus_id: str) -> bool:
        """An NVML handle for the GPU, by UUID then by PCI bus id."""
        try:
            nvml = importlib.import_module("pynvml")
            nvml.nvmlInit()
        except Exception:  # noqa: BLE001 - not installed, or no driver library: use nvidia-smi
            return False
        for finder, key in (("nvmlDeviceGetHandleByUUID", nvml_uuid(uuid)),
                            ("nvmlDeviceGetHandleByPciBusId", pci_bus_id)):
            for form in (key, key.encode()) if key else ():
                try:
                    self.handle = getattr(nvml, finder)(form)
                    self.nvml = nvml
                    return True
                except Exception:  # noqa: BLE001 - try the next way of naming the GPU
                    continue
        return False

    def _smi(self, field: str) -> float | None:
        """One numeric field from nvidia-smi for this GPU."""
        tool = system.find_tool("nvidia-smi")
        if not tool or not self.selector:
            return None
        return parse_number(system.run_text([tool, "-i", self.selector, f"--query-gpu={field}",
                                             "--format=csv,noheader,nounits"], timeout=5.0))

    def sm_mhz(self) -> float | None:
        """The SM clock now, in MHz."""
        if self.source == "nvml":
            try:
                return float(self.nvml.nvmlDeviceGetClockInfo(self.handle, NVML_CLOCK_SM))
            except Exception:  # noqa: BLE001 - a failed reading is a missing one
                return None
        return self._smi("clocks.sm") if self.source == "nvidia-smi" else None

    def max_sm_mhz(self) -> float | None:
        """The highest SM clock the GPU may run at, in MHz."""
        if self.source == "nvml":
            try:
                return float(self.nvml.nvmlDeviceGetMaxClockInfo(self.handle, NVML_CLOCK_SM))
            except Exception:  # noqa: BLE001
                return None
        return self._smi("clocks.max.sm") if self.source == "nvidia-smi" else None

    def driver_version(self) -> str | None:
        """The driver's version string (e.g. 580.159.04)."""
        if self.source == "nvml":
            try:
                value = self.nvml.nvmlSystemGetDriverVersion()
                return value.decode() if isinstance(value, bytes) else str(value)
            except Exception:  # noqa: BLE001
                return None
        tool = system.find_tool("nvidia-smi")
        text = system.run_text([tool, "-i", self.selector, "--query-gpu=driver_version",
                                "--format=csv,noheader"], timeout=5.0) if tool else None
        return text.strip() if text else None

    def uuid(self) -> str | None:
        """The GPU's UUID as NVML and nvidia-smi write it (GPU-...)."""
        if self.source == "nvml":
            try:
                value = self.nvml.nvmlDeviceGetUUID(self.handle)
                return value.decode() if isinstance(value, bytes) else str(value)
            except Exception:  # noqa: BLE001
                return None
        tool = system.find_tool("nvidia-smi")
        text = system.run_text([tool, "-i", self.selector, "--query-gpu=uuid",
                                "--format=csv,noheader"], timeout=5.0) if tool else None
        return text.strip() if text and text.strip() else None

    def held_down_by(self) -> list[str]:
        """Why the clock is held down now (NVML only; empty when unknown)."""
        if self.source != "nvml":
            return []
        for name in ("nvmlDeviceGetCurrentClocksEventReasons",
                     "nvmlDeviceGetCurrentClocksThrottleReasons"):
            function = getattr(self.nvml, name, None)
            if function is None:
                continue
            try:
                return reason_names(int(function(self.handle)))
            except Exception:  # noqa: BLE001
                return []
        return []

    def facts(self) -> dict[str, Any]:
        """Driver version, maximum SM clock and the clock source, for the environment."""
        return {"clock_source": self.source, "driver_version": self.driver_version(),
                "max_sm_mhz": self.max_sm_mhz(), "gpu_uuid": self.uuid()}

    def close(self) -> None:
        """Release NVML."""
        if self.nvml is not None:
            try:
                self.nvml.nvmlShutdown()
            except Exception:  # noqa: BLE001
                pass
            self.nvml = None
