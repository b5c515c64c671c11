"""Timing a spec of several launches on an NVIDIA GPU (pycuda): two_pass_sum timed as its whole
sequence, with and without per-launch times, and compared against the one-launch reduce_sum
(bench --vs and compare's timing). Skipped without a GPU. Run with -s to see the measured cost
of the events between launches (the sequence's median with and without --per-launch)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.base.paths import RESOURCES
from app.engine.bench.runner import BenchOptions, bench_file
from app.engine.verify.runs import Engine
from app.review.evaluate import RunOptions, time_specs
from app.spec.model import load_spec

pytestmark = pytest.mark.gpu

TWO_PASS = RESOURCES / "kernels" / "two_pass_sum" / "two_pass_sum.toml"
REDUCE = RESOURCES / "kernels" / "reduce_sum" / "reduce_sum.toml"
QUICK = dict(backend="pycuda", budget_ms=300.0)


@pytest.fixture(scope="module")
def engine():
    """One engine for the module (warm workers)."""
    with Engine() as shared:
        yield shared


def test_two_pass_sum_is_timed_as_its_whole_sequence(engine: Engine) -> None:
    report = bench_file(TWO_PASS, BenchOptions(**QUICK), engine=engine)  # verified first
    assert report.status == "timed", report.describe()
    assert report.verification[0]["status"] == "passed"
    [variant] = report.points[0].variants
    assert variant.sequence == ["partial_sums", "finish_sum"]
    assert variant.launches == []
    assert [c.status for c in variant.checks] == ["passed"] * 4, report.describe()
    assert variant.stats is not None and variant.stats.count >= 10
    assert all(sample > 0 for sample in variant.samples_ms)
    assert report.environment["timer"] == \
        "CUDA events, one pair per sample around all of its launches"
    assert report.environment["helpers"] == "loaded"
    assert "whole sequence of 2 launches (partial_sums, finish_sum)" in report.describe()


def test_per_launch_times_sit_inside_the_sequence(engine: Engine) -> None:
    report = bench_file(TWO_PASS, BenchOptions(per_launch=True, verify_first=False, **QUICK),
                        engine=engine)
    assert report.status == "timed", report.describe()
    [variant] = report.points[0].variants
    assert [launch.entry for launch in variant.launches] == ["partial_sums", "finish_sum"]
    assert variant.stats is not None
    for number, sample in enumerate(variant.samples_ms):
        parts = [launch.samples_ms[number] for launch in variant.launches]
        assert sample > 0 and all(part > 0 for part in parts), (sample, parts)
        assert sample >= max(parts)
        # The events chain (start, between, end): the parts add up to the sample.
        assert sum(parts) == pytest.approx(sample, rel=1e-3, abs=2e-3)
    largest = max(launch.median_ms or 0.0 for launch in variant.launches)
    assert variant.stats.median >= largest
    assert "one event between consecutive launches" in report.environment["timer"]
    text = report.describe()
    assert "two_pass_sum per launch" in text and "1 partial_sums" in text
    print(text)


def test_the_events_between_launches_cost_little(engine: Engine) -> None:
    plain = bench_file(TWO_PASS, BenchOptions(verify_first=False, **QUICK), engine=engine)
    split = bench_file(TWO_PASS, BenchOptions(per_launch=True, verify_first=False, **QUICK),
                       engine=engine)
    assert plain.status == split.status == "timed"
    without = plain.points[0].variants[0].median_ms
    with_events = split.points[0].variants[0].median_ms
    assert without and with_events
    print(f"\ntwo_pass_sum n=16777216 sequence median: {without * 1000:.2f} us without "
          f"per-launch events, {with_events * 1000:.2f} us with them "
          f"({(with_events - without) * 1000:+.2f} us)")
    assert with_events < 1.5 * without + 0.02  # 20 us: far above an event record's cost


def test_two_pass_sum_against_reduce_sum(engine: Engine) -> None:
    options = BenchOptions(vs=REDUCE, per_launch=True, verify_first=False, **QUICK)
    report = bench_file(TWO_PASS, options, engine=engine)
    assert report.status == "timed", report.describe()
    [point] = report.points
    sequence, single = point.variants
    assert sequence.sequence == ["partial_sums", "finish_sum"] and single.sequence == []
    assert [launch.entry for launch in single.launches] == ["reduce_sum"]
    comparison = point.comparison
    assert comparison is not None and not comparison.same_inputs  # reduce_sum's total is inout
    assert comparison.low <= comparison.ratio <= comparison.high
    assert point.order == [0, 1] * len(sequence.samples_ms)


def test_compare_times_a_sequence_against_one_launch() -> None:
    named = [("two_pass_sum", load_spec(TWO_PASS)), ("reduce_sum", load_spec(REDUCE))]
    timing = time_specs(named, "reduce_sum", RunOptions(budget_ms=300.0, per_launch=True))
    assert timing.status == "timed", timing.note
    rows = {row.variant: row for row in timing.rows}
    assert rows["two_pass_sum"].sequence == ["partial_sums", "finish_sum"]
    assert rows["two_pass_sum"].ratio is not None and rows["reduce_sum"].ratio == 1.0
    launches = rows["two_pass_sum"].launches
    assert [launch.entry for launch in launches] == ["partial_sums", "finish_sum"]
    assert all(launch.median_ms and launch.share for launch in launches)


def test_the_cli_prints_per_launch_json() -> None:
    done = subprocess.run([sys.executable, "-m", "app", "bench", str(TWO_PASS), "--json",
                           "--per-launch", "--budget-ms", "300"], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    variant = json.loads(done.stdout)["points"][0]["variants"][0]
    assert variant["sequence"] == ["partial_sums", "finish_sum"]
    assert [launch["entry"] for launch in variant["launches"]] == ["partial_sums", "finish_sum"]
    assert all(len(launch["samples_ms"]) == len(variant["samples_ms"])
               for launch in variant["launches"])
