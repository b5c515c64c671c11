"""Timing end to end through real worker processes, on the selftest backend (host-clock
"kernels"), so the whole path runs without a GPU: the bench request, every sample in the
report, A/B interleaving, sweeps, the checks of the first and last timed launches, the chart
arrays, flags, and the CLI's refusal to time without a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from selftest_spec import BENCH, write_selftest_spec

from app.engine.bench.assemble import finish_points
from app.engine.bench.peaks import DevicePeaks
from app.engine.bench.points import compare
from app.engine.bench.reports import BenchPoint, VariantTiming, format_ms
from app.engine.bench.runner import BenchOptions, bench_file, cases_for
from app.engine.bench.stats import summarize
from app.engine.verify.runs import Engine
from app.engine.worker import backends
from app.engine.worker.timing import TimingPlan
from app.spec.cases import CaseError
from app.spec.model import load_spec

QUICK = dict(backend="selftest", budget_ms=60.0, warmup_ms=1.0)


def make_spec(folder: Path, entry: str = "copy", name: str | None = None,
              bench: str = BENCH) -> Path:
    """A spec whose kernel is a selftest behaviour."""
    return write_selftest_spec(folder, entry, seeds=1, bench=bench, name=name or entry)


@pytest.fixture(scope="module")
def engine():
    """One engine (warm workers) for the module."""
    with Engine() as shared:
        yield shared


def test_one_kernel_is_timed_with_every_sample(tmp_path: Path, engine: Engine) -> None:
    report = bench_file(make_spec(tmp_path), BenchOptions(**QUICK), engine=engine)
    assert report.status == "timed", report.describe()
    assert report.exit_code == 0
    [point] = report.points
    [variant] = point.variants
    assert variant.stats is not None and variant.stats.count == len(variant.samples_ms) >= 10
    assert variant.stats == summarize(variant.samples_ms)
    assert variant.stop_reason in ("noise", "budget", "cap")
    # First and last timed launch of each input set (seeds 0 and 1, rotated while timing).
    assert [c.status for c in variant.checks] == ["passed"] * 4
    assert [(c.seed, c.message) for c in variant.checks] == [
        (seed, f"{when} timed launch on the inputs of seed {seed}: matches the reference")
        for seed in (0, 1) for when in ("first", "last")]
    assert variant.bytes == 8 * 4096 and variant.flops == 4096
    assert variant.gbps == pytest.approx(8 * 4096 / (variant.stats.median / 1000) / 1e9)
    assert report.verification[0]["status"] == "passed"
    assert [f.code for f in report.flags] == ["emulated"]


def test_the_json_holds_every_sample_and_the_chart_arrays(tmp_path: Path,
                                                          engine: Engine) -> None:
    report = bench_file(make_spec(tmp_path), BenchOptions(**QUICK), engine=engine)
    data = json.loads(json.dumps(report.to_json()))
    variant = data["points"][0]["variants"][0]
    assert variant["samples_ms"] == report.points[0].variants[0].samples_ms
    assert variant["stats"]["median"] == report.points[0].variants[0].stats.median  # type: ignore[union-attr]
    assert data["exit_code"] == 0
    charts = data["charts"]
    assert charts["samples"]["names"] == ["copy"]
    assert charts["samples"]["samples_ms"] == [variant["samples_ms"]]
    assert set(charts["roofline"]) == {"peak_gflops", "peak_gbps", "names", "intensity",
                                       "gflops"}
    assert charts["roofline"]["names"] == ["copy"]
    assert charts["roofline"]["intensity"] == [pytest.approx(1 / 8)]


def test_a_b_is_interleaved_on_the_same_inputs(tmp_path: Path, engine: Engine) -> None:
    first = make_spec(tmp_path)
    (tmp_path / "b").mkdir()
    second = make_spec(tmp_path / "b")
    report = bench_file(first, BenchOptions(vs=second, **QUICK), engine=engine)
    assert report.status == "timed", report.describe()
    [point] = report.points
    assert [v.name for v in point.variants] == ["copy", "b/copy"]
    count = len(point.variants[0].samples_ms)
    assert len(point.variants[1].samples_ms) == count
    assert point.order == [0, 1] * count
    comparison = point.comparison
    assert comparison is not None and comparison.same_inputs
    assert (comparison.candidate, comparison.baseline) == ("copy", "b/copy")
    assert comparison.low <= comparison.ratio <= comparison.high
    assert "time ratio copy/b/copy" in report.describe()
    assert len(report.verification) == 2


def test_a_sweep_times_each_size(tmp_path: Path, engine: Engine) -> None:
    options = BenchOptions(sweep=("n", [256, 1024, 4096]), **QUICK)
    report = bench_file(make_spec(tmp_path), options, engine=engine)
    assert report.status == "timed", report.describe()
    assert [p.case for p in report.points] == [{"n": 256}, {"n": 1024}, {"n": 4096}]
    sizes, series = report.sweep_series()
    assert sizes == [256.0, 1024.0, 4096.0]
    times, rates = series["copy"]
    assert times == [p.variants[0].median_ms for p in report.points]
    assert rates == [pytest.approx(8 * n / (t / 1000) / 1e9) for n, t in zip(sizes, times,
                                                                              strict=True)]
    assert "size sweep over n" in report.describe()
    assert report.to_json()["charts"]["sweep"]["sizes"] == sizes


def test_a_kernel_that_stops_working_after_its_first_launches_is_caught(tmp_path: Path) -> None:
    # lazy_copy copies on its first three launches in a worker: the warm-up launches of the two
    # input sets and the first timed launch pass; the later ones leave the (restored) poison.
    options = BenchOptions(verify_first=False, **{**QUICK, "warmup_ms": 0.0})
    report = bench_file(make_spec(tmp_path, "lazy_copy"), options)
    assert report.status == "unwritten", report.describe()
    assert report.exit_code == 1
    first, last, *_ = report.points[0].variants[0].checks
    assert first.status == "passed"
    assert last.status == "unwritten"
    assert "last timed launch" in report.message


def test_a_kernel_that_replays_a_remembered_answer_is_caught(tmp_path: Path) -> None:
    # memo_copy answers its first launch right, then replays that answer on any inputs: the
    # timed launches rotate between two input sets, so the second set's checks catch it.
    options = BenchOptions(verify_first=False, **QUICK)
    report = bench_file(make_spec(tmp_path, "memo_copy"), options)
    assert report.status == "mismatch", report.describe()
    failing = [c for c in report.points[0].variants[0].checks if not c.passed]
    assert failing and all(c.seed == 1 for c in failing)
    assert "inputs of seed 1" in report.message


def test_passing_verification_is_not_enough(tmp_path: Path) -> None:
    # Verification launches lazy_copy twice (one case: the spec's seed and a fresh one), in a
    # worker of its own: both work. Timing catches it.
    spec = make_spec(tmp_path, "lazy_copy")
    spec.write_text(spec.read_text().replace("cases = [{ n = 1 }, { n = 1025 }]",
                                             "cases = [{ n = 1025 }]"))
    report = bench_file(spec, BenchOptions(**QUICK))
    assert report.verification[0]["status"] == "passed"
    assert report.verification[0]["runs"] == 2 and len(report.verification[0]["fresh_seeds"]) == 1
    assert report.status == "unwritten", report.describe()
    assert report.exit_code == 1


def test_a_kernel_that_fails_verification_is_not_timed(tmp_path: Path, engine: Engine) -> None:
    report = bench_file(make_spec(tmp_path, "overrun"), BenchOptions(**QUICK), engine=engine)
    assert report.status == "guard_zone"
    assert report.exit_code == 1
    assert report.points == []
    assert "did not pass verification" in report.message


def test_writing_past_a_buffer_while_timed_is_caught(tmp_path: Path, engine: Engine) -> None:
    report = bench_file(make_spec(tmp_path, "overrun"), BenchOptions(verify_first=False,
                                                                     **QUICK), engine=engine)
    assert report.status == "guard_zone"
    assert report.exit_code == 1


def test_a_crash_while_timed_is_a_result(tmp_path: Path, engine: Engine) -> None:
    report = bench_file(make_spec(tmp_path, "segfault"), BenchOptions(verify_first=False,
                                                                      **QUICK), engine=engine)
    assert report.status == "crash"
    assert report.exit_code == 1
    assert "SIGSEGV" in report.message


def test_the_cpu_emulator_is_refused(tmp_path: Path) -> None:
    report = bench_file(make_spec(tmp_path), BenchOptions(backend="cpu"))
    assert report.status == "unverified"
    assert report.exit_code == 3
    assert "timing needs an NVIDIA GPU" in report.message


def test_a_spec_without_a_bench_case_needs_one(tmp_path: Path) -> None:
    path = make_spec(tmp_path, bench="")
    report = bench_file(path, BenchOptions(**QUICK))
    assert report.status == "spec_error" and report.exit_code == 2
    assert "no [bench] case" in report.message
    assert cases_for(load_spec(path), BenchOptions(case={"n": 8})) == [{"n": 8}]
    with pytest.raises(CaseError):
        cases_for(load_spec(path), BenchOptions())


def test_a_bad_case_is_a_spec_error(tmp_path: Path, engine: Engine) -> None:
    report = bench_file(make_spec(tmp_path), BenchOptions(case={"n": -5}, **QUICK),
                        engine=engine)
    assert report.status == "spec_error" and report.exit_code == 2


def variant(name: str, samples: list[float], gbps: float | None = None) -> VariantTiming:
    """A timed variant built from given samples."""
    return VariantTiming(name, "", {"n": 1}, "timed", samples_ms=samples,
                         stats=summarize(samples), stop_reason="noise", bytes=1e9, gbps=gbps)


def test_a_speedup_over_ten_is_flagged() -> None:
    fast, slow = variant("a", [1.0, 1.01, 0.99] * 5), variant("b", [12.0, 12.1, 11.9] * 5)
    comparison = compare([fast, slow], True, seed=0)
    assert comparison is not None and comparison.speedup > 10
    from app.engine.bench.points import _point_flags

    assert [f.code for f in _point_flags({}, comparison)] == ["suspicious_speedup"]
    assert _point_flags({}, compare([fast, fast], True, seed=0)) == []


def test_a_result_above_the_roofline_is_flagged() -> None:
    point = BenchPoint({"n": 1}, [variant("a", [1.0] * 12, gbps=9000.0)])
    peaks = DevicePeaks("u", "H200", "sm_90", copy_gbps=4300.0, theoretical_gbps=4916.0,
                        fp32_gflops=66908.0)
    [done] = finish_points([(point, {"l2_bytes": 60 * 2**20})], peaks, TimingPlan())
    flags = [f.code for f in done.variants[0].flags]
    assert flags == ["above_roofline"]
    assert done.variants[0].bandwidth_share == pytest.approx(9000.0 / 4300.0)


def test_hot_or_l2_sized_data_is_not_judged_against_dram() -> None:
    peaks = DevicePeaks("u", "H200", "sm_90", copy_gbps=4300.0, theoretical_gbps=4916.0)
    hot = BenchPoint({"n": 1}, [variant("a", [1.0] * 12, gbps=9000.0)])
    finish_points([(hot, {"l2_bytes": 60 * 2**20})], peaks, TimingPlan(mode="hot"))
    assert hot.variants[0].flags == []
    small = BenchPoint({"n": 1}, [variant("a", [1.0] * 12, gbps=9000.0)])
    finish_points([(small, {"l2_bytes": 2 * 2**30})], peaks, TimingPlan())
    assert small.variants[0].flags == []


def test_durations_read_well() -> None:
    assert format_ms(0.0000123) == "12.3 ns"
    assert format_ms(0.05231) == "52.31 us"
    assert format_ms(1.5) == "1.5 ms"
    assert format_ms(2500.0) == "2.5 s"
    assert format_ms(None) == "-"


def kernel_studio(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m app ARGS` in a child process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.skipif(backends.usable("pycuda") is None, reason="this machine can time kernels")
def test_the_cli_refuses_to_time_without_a_gpu(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    done = kernel_studio("bench", str(spec))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "timing needs an NVIDIA GPU" in done.stdout
    done = kernel_studio("bench", str(spec), "--json")
    assert done.returncode == 3
    assert json.loads(done.stdout)["status"] == "unverified"
    done = kernel_studio("bench", str(spec), "--backend", "cpu")
    assert done.returncode == 3
    assert "CPU emulator" in done.stdout


def test_the_cli_rejects_bad_flags(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    done = kernel_studio("bench", str(spec), "--sweep", "n=1e4,abc")
    assert done.returncode == 2
    assert "'abc' is not a number" in done.stderr
    done = kernel_studio("bench", str(spec), "--budget-ms", "0")
    assert done.returncode == 2
    assert "--budget-ms must be positive" in done.stderr
    done = kernel_studio("bench", str(tmp_path / "missing.toml"))
    assert done.returncode == 2


def test_an_untrusted_spec_is_not_timed_without_a_sandbox(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # bench follows verify's trust rule: no sandbox and no trust, so nothing of the spec runs.
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    path = write_selftest_spec(tmp_path, "copy", seeds=1, bench=BENCH,
                               reference="open(__file__ + '.ran', 'w'); return {'c': a}")
    report = bench_file(path, BenchOptions(**QUICK))
    assert report.status == "unverified", report.describe()
    assert "kernel-studio trust" in report.message and "--trust-reference" not in report.message
    assert not list(tmp_path.glob("*.ran"))
