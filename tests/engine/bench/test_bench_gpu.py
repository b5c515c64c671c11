"""Timing on an NVIDIA GPU (pycuda backend): every template is timed and checked, the copy
peak is measured and cached, an A/B tells a slow variant from a fast one (and a kernel from
itself), a sweep grows as it should, cold is slower than hot on L2-sized data, and a kernel
that skips work after its first launch is caught. Skipped without a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.bench import peaks
from app.engine.bench.runner import BenchOptions, BenchReport, bench_file
from app.engine.verify.runs import Engine

TEMPLATES = sorted(p.name for p in (RESOURCES / "kernels").iterdir() if p.is_dir())
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
QUICK = dict(backend="pycuda", budget_ms=300.0)


def template(name: str) -> Path:
    """A template's spec."""
    return RESOURCES / "kernels" / name / f"{name}.toml"


def fixture(name: str) -> Path:
    """A timing fixture's spec."""
    return FIXTURES / name / f"{name}.toml"


@pytest.fixture(scope="module")
def engine():
    """One engine for the module (warm workers)."""
    with Engine() as shared:
        yield shared


def codes(report: BenchReport) -> list[str]:
    """Every flag code of a report."""
    return [flag.code for flag in report.all_flags()]


@pytest.mark.gpu
@pytest.mark.parametrize("name", TEMPLATES)
def test_template_is_timed_and_checked(name: str, engine: Engine) -> None:
    report = bench_file(template(name), BenchOptions(verify_first=False, **QUICK), engine=engine)
    assert report.status == "timed", report.describe()
    [variant] = report.points[0].variants
    assert variant.stats is not None and variant.stats.count >= 10, report.describe()
    assert variant.stats.median > 0
    assert [c.status for c in variant.checks] == ["passed"] * 4  # two input sets
    env = report.environment
    assert env["gpu_name"] and env["gpu_uuid"] and env["driver_version"], env
    assert env["cuda_driver"] and env["sm_clock_start_mhz"] and env["sm_clock_end_mhz"], env
    assert env["helpers"] == "loaded", env  # the spin and read-flush kernels were used
    assert env["flush"] == "write then read"
    assert env["flush_bytes"] >= 2 * env["l2_bytes"]
    # Hopper has persisting L2: it is reset before every sample (and every warm-up's sample).
    assert env["persisting_l2_resets"] >= len(variant.samples_ms), env
    assert "above_roofline" not in codes(report), report.describe()
    assert "launch_overhead" not in codes(report)
    if variant.bytes:
        assert variant.gbps and variant.bandwidth_share and 0 < variant.bandwidth_share < 1.3


@pytest.mark.gpu
def test_the_copy_peak_is_measured_once_and_cached(engine: Engine) -> None:
    report = bench_file(template("vector_add"), BenchOptions(**QUICK), engine=engine)
    assert report.status == "timed", report.describe()
    measured = report.peaks
    assert measured["copy_gbps"] and measured["theoretical_gbps"], measured
    assert 0.5 * measured["theoretical_gbps"] < measured["copy_gbps"] \
        <= 1.02 * measured["theoretical_gbps"]
    assert measured["fp32_gflops"] and "SMs x" in measured["fp32_note"]
    cached = peaks.load_cached(measured["uuid"])
    assert cached is not None and cached.copy_gbps == measured["copy_gbps"]
    again = bench_file(template("vector_add"), BenchOptions(verify_first=False, **QUICK),
                       engine=engine)
    assert again.peaks["copy_gbps"] == measured["copy_gbps"]
    assert again.peaks["measured_at"] == measured["measured_at"]


@pytest.mark.gpu
def test_a_b_tells_a_slow_variant_from_a_fast_one(engine: Engine) -> None:
    options = BenchOptions(vs=fixture("strided_add"), **QUICK)
    report = bench_file(template("vector_add"), options, engine=engine)
    assert report.status == "timed", report.describe()
    point = report.points[0]
    comparison = point.comparison
    assert comparison is not None and comparison.same_inputs
    assert not comparison.no_difference, report.describe()
    assert comparison.high < 1.0 and comparison.speedup > 1.2, report.describe()
    count = len(point.variants[0].samples_ms)
    assert point.order == [0, 1] * count


@pytest.mark.gpu
def test_a_kernel_against_itself_is_about_even(engine: Engine) -> None:
    options = BenchOptions(vs=template("saxpy"), verify_first=False, **QUICK)
    report = bench_file(template("saxpy"), options, engine=engine)
    assert report.status == "timed", report.describe()
    comparison = report.points[0].comparison
    assert comparison is not None
    assert 0.95 < comparison.ratio < 1.05, report.describe()
    assert comparison.low < comparison.high


@pytest.mark.gpu
def test_a_sweep_grows_with_the_size(engine: Engine) -> None:
    options = BenchOptions(sweep=("n", [10_000, 100_000, 1_000_000, 10_000_000]),
                           verify_first=False, **QUICK)
    report = bench_file(template("vector_add"), options, engine=engine)
    assert report.status == "timed", report.describe()
    sizes, series = report.sweep_series()
    times, rates = series["vector_add"]
    assert sizes == [1e4, 1e5, 1e6, 1e7]
    assert times[-1] > times[0] and rates[-1] > rates[0], report.describe()


@pytest.mark.gpu
def test_cold_is_slower_than_hot_when_the_data_fits_in_l2(engine: Engine) -> None:
    case = {"n": 1_000_000}  # 12 MB: inside the L2 of any recent data-centre GPU
    cold = bench_file(template("vector_add"), BenchOptions(case=case, verify_first=False,
                                                           **QUICK), engine=engine)
    hot = bench_file(template("vector_add"), BenchOptions(case=case, verify_first=False,
                                                          mode="hot", **QUICK), engine=engine)
    assert cold.status == hot.status == "timed"
    assert hot.environment["flush"] == "none (hot)"
    cold_ms = cold.points[0].variants[0].median_ms
    hot_ms = hot.points[0].variants[0].median_ms
    assert cold_ms and hot_ms and hot_ms < cold_ms, (cold.describe(), hot.describe())


@pytest.mark.gpu
def test_a_kernel_that_skips_later_launches_is_caught(engine: Engine) -> None:
    report = bench_file(fixture("lazy_add"), BenchOptions(verify_first=False, **QUICK),
                        engine=engine)
    assert report.status == "unwritten", report.describe()
    assert report.exit_code == 1


@pytest.mark.gpu
def test_the_cli_prints_json_with_the_environment(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "app", "bench", str(template("saxpy")),
                           "--json", "--budget-ms", "300"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["status"] == "timed"
    assert len(data["points"][0]["variants"][0]["samples_ms"]) >= 10
    assert data["environment"]["gpu_name"]
    assert data["charts"]["samples"]["samples_ms"]
