"""Charts take plain arrays, create their items once, update them with setData, export
PNG and SVG; the bench adapter feeds them an engine BenchReport."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.engine.bench.chart_data import feed_charts, median_interval
from app.engine.bench.reports import BenchPoint, BenchReport, Comparison, VariantTiming
from app.engine.bench.stats import summarize
from app.engine.verify.results import Status
from ui.charts.charts_pane import ChartsPane
from ui.theme import load_theme


@pytest.fixture
def charts(qtbot: Any) -> ChartsPane:
    """The charts pane, shown."""
    pane = ChartsPane(load_theme("light"))
    qtbot.addWidget(pane)
    pane.resize(900, 600)
    pane.show()
    return pane


def item_counts(pane: ChartsPane) -> list[int]:
    """How many graphics items each chart holds."""
    return [len(pane.samples.getPlotItem().items), len(pane.variants.getPlotItem().items),
            len(pane.sweep.time_plot.items), len(pane.roofline.getPlotItem().items)]


def feed(pane: ChartsPane, scale: float) -> None:
    """Every chart, with data scaled by `scale`."""
    rng = np.random.default_rng(1)
    pane.samples.set_samples(["naive", "tiled"], [rng.normal(2, 0.1, 30) * scale,
                                                  rng.normal(1, 0.05, 30) * scale])
    pane.variants.set_variants(["naive", "tiled"], [2 * scale, scale], [1.9 * scale, 0.95 * scale],
                               [2.1 * scale, 1.05 * scale])
    sizes = [1e3, 1e4, 1e5, 1e6]
    pane.sweep.set_sweep(sizes, {"naive": ([0.01 * scale, 0.02, 0.1, 0.9], [10, 80, 400, 900])})
    pane.roofline.set_roofline(60000, 4000, ["naive", "tiled"], [0.25, 8.0],
                               [300 * scale, 9000 * scale])


def test_items_are_created_once_and_updated(charts: ChartsPane) -> None:
    feed(charts, 1.0)
    counts = item_counts(charts)
    first_points = charts.samples.points
    feed(charts, 2.0)
    assert item_counts(charts) == counts and charts.samples.points is first_points
    x, y = charts.samples.medians.getData()
    assert list(x) == [0, 1] and y[0] > y[1] > 0  # medians: naive is the slower one
    assert charts.variants.bars.opts["height"][0] == pytest.approx(4.0)


def test_hovered_points_have_tips(charts: ChartsPane) -> None:
    feed(charts, 1.0)
    spot = charts.roofline.points.scatter.points()[1]
    assert charts.roofline.points.scatter.opts["hoverable"]
    tip = charts.roofline.points.scatter.opts["tip"](x=0, y=0, data=spot.data())
    assert tip.startswith("tiled: 8 FLOP/B, 9000 GFLOP/s (") and "of roof" in tip


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_every_chart_exports(charts: ChartsPane, tmp_path: Path, suffix: str) -> None:
    feed(charts, 1.0)
    for index in range(charts.tabs.count()):
        charts.tabs.setCurrentIndex(index)
        path = charts.export_current(tmp_path / f"chart{index}{suffix}")
        assert path.stat().st_size > 2000
        if suffix == ".svg":
            assert ET.parse(path).getroot().tag.endswith("svg")


def variant(name: str, n: int, samples: list[float], **rates: float | None) -> VariantTiming:
    """One timed variant at size n."""
    return VariantTiming(name, f"{name}.toml", {"n": n}, Status.TIMED, samples_ms=samples,
                         stats=summarize(samples), **rates)


def sweep_report() -> BenchReport:
    """Two variants over two sizes, with rates, peaks and an A/B comparison at the last size."""
    small = BenchPoint({"n": 10}, [variant("v1", 10, [0.5, 0.6, 0.4], gbps=5.0),
                                   variant("v2", 10, [0.9, 1.0, 1.1])])
    comparison = Comparison("v1", "v2", 0.5, 0.45, 0.55, 0.95, False, True)
    large = BenchPoint({"n": 100}, [
        variant("v1", 100, [1.0, 1.1, 0.9, 1.0], gbps=50.0, intensity=0.1, gflops=100.0),
        variant("v2", 100, [2.0, 2.1, 1.9])], comparison=comparison)
    return BenchReport(Status.TIMED, "2 variants timed", sweep_variable="n",
                       peaks={"fp32_gflops": 50000.0, "copy_gbps": 3000.0},
                       points=[small, large])


def test_a_bench_report_feeds_the_charts(charts: ChartsPane) -> None:
    report = sweep_report()
    assert feed_charts(charts, report) == "2 variant(s), size sweep, roofline"
    assert list(charts.variants.bars.opts["height"]) == [1.0, 2.0]  # medians at the last size
    x, y = charts.sweep.curves["v1"][0].getOriginalDataset()
    assert list(x) == [10, 100] and list(y) == [0.5, 1.0]
    assert charts.variants.note == report.points[-1].comparison.describe()
    assert charts.variants.note.endswith("v1 is 2x faster")
    assert len(charts.roofline.points.scatter.points()) == 1
    spot = charts.roofline.points.scatter.points()[0]
    tip = charts.roofline.points.scatter.opts["tip"](x=0, y=0, data=spot.data())
    assert tip.startswith("v1: 0.1 FLOP/B, 100 GFLOP/s")  # v2 has no rates: not on the roofline


def test_a_report_across_the_pipe_feeds_the_same_charts(charts: ChartsPane) -> None:
    report = BenchReport.from_json(sweep_report().to_json())
    assert feed_charts(charts, report) == "2 variant(s), size sweep, roofline"
    assert charts.variants.note.startswith("time ratio v1/v2 = 0.5000 (95% CI 0.4500..0.5500)")


def test_an_empty_report_shows_nothing(charts: ChartsPane) -> None:
    report = BenchReport(Status.UNVERIFIED, "no GPU")
    assert feed_charts(charts, report) == "no timing data in the result"
    assert charts.variants.note == ""


def test_median_interval_brackets_the_median() -> None:
    median, low, high = median_interval([1.0, 1.2, 0.8, 1.1, 0.9, 1.05])
    assert low <= median <= high and median == pytest.approx(1.025)
