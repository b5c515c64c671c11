"""Roofline arithmetic, the FP32 table, the throttle flag and the suspicious flags."""

from __future__ import annotations

import pytest

from app.engine.bench.roofline import (
    cache_roof_flags,
    cache_roof_gbps,
    fp32_lanes,
    parse_arch,
    peak_fp32_gflops,
    roof_flags,
    share,
    speedup_flag,
    theoretical_bandwidth_gbps,
    throttle_flag,
    throttled,
    throughput,
)


def test_vector_add_rates() -> None:
    # 16M floats, 12 bytes each, in 50 us.
    n = 16_777_216
    rate = throughput(0.050, 12 * n, n)
    assert rate.gbps == pytest.approx(12 * n / 50e-6 / 1e9)
    assert rate.gbps == pytest.approx(4026.5, rel=1e-4)
    assert rate.gflops == pytest.approx(335.5, rel=1e-3)
    assert rate.intensity == pytest.approx(1 / 12)


def test_unknown_bytes_or_flops_give_no_rate() -> None:
    rate = throughput(1.0, None, None)
    assert rate.gbps is None and rate.gflops is None and rate.intensity is None
    assert throughput(1.0, 0, 0).intensity is None
    assert throughput(0.0, 10, 10).gbps is None


def test_matmul_intensity_and_fp32_share() -> None:
    m = n = k = 4096
    rate = throughput(3.0, 4 * (m * k + k * n + m * n), 2 * m * n * k)
    assert rate.intensity == pytest.approx(2 * 4096**3 / (12 * 4096**2))
    assert share(rate.gflops, 66908.16) == pytest.approx(rate.gflops / 66908.16)  # type: ignore[operator]
    assert share(None, 1.0) is None and share(1.0, None) is None and share(1.0, 0.0) is None


@pytest.mark.parametrize(("arch", "version", "lanes"), [
    ("sm_90", (9, 0), 128), ("sm_90a", (9, 0), 128), ("sm_80", (8, 0), 64),
    ("sm_86", (8, 6), 128), ("sm_75", (7, 5), 64), ("sm_100", (10, 0), 128),
    ("sm_120", (12, 0), 128), ("sm_89", (8, 9), 128)])
def test_fp32_lanes_by_arch(arch: str, version: tuple[int, int], lanes: int) -> None:
    assert parse_arch(arch) == version
    assert fp32_lanes(arch) == lanes


def test_unknown_arch_has_no_fp32_peak() -> None:
    assert parse_arch("none") is None
    assert fp32_lanes("sm_99") is None
    assert peak_fp32_gflops("sm_99", 100, 1000.0) is None
    assert peak_fp32_gflops("sm_90", 0, 1980.0) is None


def test_h200_peaks() -> None:
    # 132 SMs x 128 lanes x 2 x 1980 MHz: the datasheet's 67 TFLOP/s.
    assert peak_fp32_gflops("sm_90", 132, 1980.0) == pytest.approx(66908.16)
    # 3201 MHz x 6144 bits x 2: the datasheet's 4.8 TB/s.
    assert theoretical_bandwidth_gbps(3_201_000, 6144) == pytest.approx(4916.7, rel=1e-4)
    # H100 SXM: 2619 MHz x 5120 bits x 2 = 3.35 TB/s.
    assert theoretical_bandwidth_gbps(2_619_000, 5120) == pytest.approx(3352.3, rel=1e-4)
    assert theoretical_bandwidth_gbps(0, 6144) is None


def test_throttle_flag_when_the_clock_drops() -> None:
    assert not throttled(1980.0, 1980.0)
    assert not throttled(1980.0, 1965.0)  # one boost step
    assert throttled(1980.0, 1755.0)
    assert throttled(1980.0, 1980.0, lowest_mhz=1600.0)  # dipped, then recovered
    assert not throttled(None, 1000.0)
    assert not throttled(1980.0, None)
    flag = throttle_flag(1980.0, 1755.0)
    assert flag is not None and flag.code == "throttled"
    assert "1980 MHz to 1755 MHz" in flag.message
    assert throttle_flag(1980.0, 1980.0) is None


def test_speedup_over_ten_is_suspicious() -> None:
    assert speedup_flag(9.9) is None
    assert speedup_flag(None) is None
    flag = speedup_flag(12.0)
    assert flag is not None and flag.code == "suspicious_speedup"
    assert "12.0x" in flag.message


def test_above_the_theoretical_bandwidth_is_suspicious() -> None:
    fine = throughput(0.05, 4000e9 * 0.05e-3, None)  # 4000 GB/s
    assert roof_flags(fine, 4300.0, 4916.7, 66908.0) == []
    fast = throughput(0.05, 6000e9 * 0.05e-3, None)  # 6000 GB/s
    flags = roof_flags(fast, 4300.0, 4916.7, 66908.0)
    assert [f.code for f in flags] == ["above_roofline"]
    assert "6000 GB/s" in flags[0].message


def test_without_theory_the_measured_copy_peak_gets_slack() -> None:
    rate = throughput(1.0, 4500e9 * 1e-3, None)  # 4500 GB/s against a 4300 GB/s copy
    assert roof_flags(rate, 4300.0, None, None) == []
    rate = throughput(1.0, 5200e9 * 1e-3, None)
    assert [f.code for f in roof_flags(rate, 4300.0, None, None)] == ["above_roofline"]


def test_above_the_fp32_peak_is_suspicious() -> None:
    rate = throughput(1.0, None, 80_000e9 * 1e-3)  # 80 TFLOP/s
    flags = roof_flags(rate, None, None, 66908.16)
    assert [f.code for f in flags] == ["above_roofline"]
    assert "tensor cores" in flags[0].message


def test_cached_data_still_has_a_roof() -> None:
    roof = cache_roof_gbps(132, 1980.0)  # an H200: 132 SMs at 1980 MHz
    assert roof == pytest.approx(132 * 128 * 1.98)
    fast = throughput(0.0001, 64e6, None)  # 64 MB in 0.1 us: no cache moves that much
    flags = cache_roof_flags(fast, roof)
    assert [f.code for f in flags] == ["above_roofline"] and "caches" in flags[0].message
    assert cache_roof_flags(throughput(1.0, 64e6, None), roof) == []
    assert cache_roof_gbps(None, 1980.0) is None and cache_roof_flags(fast, None) == []
