"""Issue 17, point 5: a machine without a GPU. Bench's refusal does not replace a verdict, the
Charts pane shows no empty axes (nor negative times, nor "mms"), and memcheck and racecheck are
disabled with a tool tip saying why, in the window's words. Through the real window on this
machine, which has no GPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_support import selftest_kernel
from selftest_spec import BENCH

from app.base import system
from app.engine.bench.reports import BenchReport
from app.engine.verify.results import Verdict
from ui.actions import CPU_CHOSEN, sanitizer_refusal
from ui.main_window import MainWindow

pytestmark = pytest.mark.skipif(bool(system.list_gpus()), reason="this machine has a GPU")


def test_memcheck_and_racecheck_are_disabled_saying_why(qtbot: Any, window: MainWindow,
                                                        tmp_path: Path) -> None:
    actions = window.actions_by_name
    qtbot.waitUntil(lambda: not actions["memcheck"].isEnabled(), timeout=30000)
    for name in ("memcheck", "racecheck"):
        assert actions[name].toolTip().startswith(f"Needs an NVIDIA GPU: {name} runs the kernel")
        assert "--sanitize" not in actions[name].toolTip()
    assert window.menuBar().actions()[3].menu().toolTipsVisible()  # Run's entries say why
    window.open_files([selftest_kernel(tmp_path / "ok", "copy")])
    window.runner.set_backend("selftest")
    with qtbot.waitSignal(window.runner.verified, timeout=60000):
        assert window.verify()
    assert actions["verify"].isEnabled()  # the end of a job re-enables what can run...
    assert not actions["memcheck"].isEnabled()  # ...and only that
    assert sanitizer_refusal(True, "cpu") == CPU_CHOSEN and sanitizer_refusal(True, "auto") == ""


def test_bench_without_a_gpu_keeps_the_passed_verdict_and_says_why_apart(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    window.open_files([kernel_copy])
    window.set_backend("cpu")
    with qtbot.waitSignal(window.runner.verified, timeout=180000) as verified:
        assert window.verify()
    assert isinstance(verified.args[0], Verdict) and verified.args[0].passed
    with qtbot.waitSignal(window.runner.benched, timeout=60000) as benched:
        assert window.bench()
    report = benched.args[0]
    assert isinstance(report, BenchReport) and report.status == "unverified"
    pane = window.results_pane
    assert pane.status() == "PASSED"
    assert pane.runs.rowCount() == len(verified.args[0].runs)
    assert pane.timing.isVisibleTo(pane)
    assert pane.timing.text().startswith("Not timed: timing needs an NVIDIA GPU")
    charts = window.charts()
    assert not charts.showing_charts()  # words, not empty axes
    assert charts.empty.text().startswith("Not timed: timing needs an NVIDIA GPU")


def test_charts_show_only_what_was_fed_with_times_in_ms_from_zero(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "timed", "copy", bench=BENCH)])
    window.runner.set_backend("selftest")
    with qtbot.waitSignal(window.runner.benched, timeout=120000):
        assert window.bench()
    charts = window.charts()
    assert charts.showing_charts()
    qtbot.waitUntil(lambda: charts.samples.isVisible(), timeout=5000)
    for chart in (charts.samples, charts.variants):
        axis = chart.getAxis("left")
        assert axis.labelString().count("ms") == 1 and "mms" not in axis.labelString()
        assert chart.getViewBox().viewRange()[1][0] >= 0
    sweep = charts.tabs.indexOf(charts.sweep)
    assert not charts.tabs.isTabEnabled(sweep)
    assert charts.tabs.tabToolTip(sweep) == "Needs a size sweep (Run > Bench with options)."
