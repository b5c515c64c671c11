"""Issue 25, point 13: Bench and Bench with options are greyed out before the click where they
cannot time (the CPU backend, chosen or what auto falls back to without a GPU), saying why in
their tool tip and status tip, as memcheck is; another backend enables them again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from app.base import system
from ui.actions import BENCH_CPU_CHOSEN, BENCH_NO_GPU, bench_refusal
from ui.main_window import MainWindow

BENCH = ("bench", "bench_options")


def test_bench_is_greyed_out_on_the_cpu_backend_saying_why(qtbot: Any,
                                                          window: MainWindow) -> None:
    actions = window.actions_by_name
    window.findChild(QAction, "backend_cpu").trigger()  # Run > Backend > cpu
    assert window.runner.backend == "cpu"
    for name in BENCH:
        action = actions[name]
        assert not action.isEnabled()
        assert action.toolTip() == BENCH_CPU_CHOSEN == action.statusTip()
        assert "CPU backend" in action.toolTip() and "Backend" in action.toolTip()
    toolbar = window.findChild(QToolBar, "main_toolbar")
    assert not toolbar.widgetForAction(actions["bench"]).isEnabled()  # greyed there too
    fired: list[bool] = []
    actions["bench"].triggered.connect(lambda: fired.append(True))
    qtbot.keyClick(window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)
    assert not fired and not window.runner.running  # Ctrl+F5 does nothing: nothing started


def test_bench_comes_back_with_a_backend_that_times(qtbot: Any, window: MainWindow) -> None:
    actions = window.actions_by_name
    window.set_backend("cpu")
    assert not actions["bench"].isEnabled()
    window.set_backend("selftest")
    for name in BENCH:
        assert actions[name].isEnabled()
        assert actions[name].toolTip().startswith("Time")  # its own tip again
    assert actions["verify"].isEnabled()


def test_auto_times_only_where_there_is_a_gpu(qtbot: Any, window: MainWindow) -> None:
    gpu = bool(system.list_gpus())
    window.set_backend("auto")
    qtbot.waitUntil(lambda: window.gpu_usable == gpu, timeout=30000)  # the backend probe
    qtbot.waitUntil(lambda: window.actions_by_name["bench"].isEnabled() == gpu, timeout=30000)
    assert bench_refusal(False, "auto") == BENCH_NO_GPU and bench_refusal(True, "auto") == ""
    assert bench_refusal(True, "pycuda") == "" and bench_refusal(True, "cpu") == BENCH_CPU_CHOSEN
