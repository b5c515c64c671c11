"""Run > Bench with options: the dialog builds the BenchOptions the CLI would, and a run on the
engine's selftest backend (real worker processes) fills the variant bars and the sweep chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gui_support import selftest_kernel
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from selftest_spec import BENCH

from app.engine.bench.reports import BenchReport
from app.engine.bench.runner import BenchOptions
from ui.main_window import MainWindow
from ui.runs.bench_options_dialog import BenchOptionsDialog, parse_sizes


@pytest.fixture
def dialog(qtbot: Any, tmp_path: Path) -> BenchOptionsDialog:
    """The dialog for a spec whose size variable is n."""
    widget = BenchOptionsDialog(["n"], tmp_path)
    qtbot.addWidget(widget)
    return widget


def ok_button(dialog: BenchOptionsDialog) -> Any:
    """The dialog's OK (Bench) button."""
    return dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)


def test_sizes_are_numbers_or_spec_expressions() -> None:
    assert parse_sizes("1e4, 2**20 65_536") == [10000, 1048576, 65536]
    with pytest.raises(ValueError, match="'abc' is not a size"):
        parse_sizes("1024, abc")


def test_the_dialog_builds_the_options_the_cli_would(dialog: BenchOptionsDialog,
                                                      tmp_path: Path) -> None:
    assert dialog.options() == BenchOptions()  # the engine's defaults to start with
    baseline = tmp_path / "base.toml"
    baseline.write_text("")
    dialog.budget.setValue(500)
    dialog.mode.setCurrentIndex(dialog.mode.findData("hot"))
    dialog.sweep_box.setChecked(True)
    dialog.sizes.setText("1024, 4096, 2**14")
    dialog.vs_box.setChecked(True)
    dialog.vs_path.setText(str(baseline))
    assert dialog.validate() and ok_button(dialog).isEnabled()
    options = dialog.options()
    assert options == BenchOptions(mode="hot", budget_ms=500.0, sweep=("n", [1024, 4096, 16384]),
                                   vs=baseline)
    assert BenchOptions.from_message(options.to_message()) == options  # across the pipe


def test_bad_fields_say_what_is_wrong_and_block_ok(dialog: BenchOptionsDialog,
                                                   tmp_path: Path) -> None:
    dialog.sweep_box.setChecked(True)
    dialog.sizes.setText("1024")
    assert not ok_button(dialog).isEnabled()
    assert "at least two sizes" in dialog.problem.text()
    dialog.sizes.setText("1024, 2048")
    dialog.vs_box.setChecked(True)
    dialog.vs_path.setText(str(tmp_path / "missing.toml"))
    assert not ok_button(dialog).isEnabled()
    assert "existing .toml spec" in dialog.problem.text()
    dialog.vs_box.setChecked(False)
    assert ok_button(dialog).isEnabled() and dialog.problem.text() == ""


def answer_dialog(qtbot: Any, fill: Any) -> None:
    """Fill the modal options dialog once it is open, then press Bench."""
    def act() -> None:
        modal = QApplication.activeModalWidget()
        if not isinstance(modal, BenchOptionsDialog):
            QTimer.singleShot(20, act)
            return
        fill(modal)
        assert modal.validate()
        ok_button(modal).click()

    QTimer.singleShot(0, act)


def test_a_sweep_against_a_baseline_fills_the_bars_and_the_sweep_chart(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "a", "copy", bench=BENCH)])
    baseline = selftest_kernel(tmp_path / "b", "copy", bench=BENCH).with_suffix(".toml")
    window.runner.backend = "selftest"

    def fill(dialog: BenchOptionsDialog) -> None:
        dialog.budget.setValue(60)
        dialog.sweep_box.setChecked(True)
        dialog.variable.setCurrentText("n")
        dialog.sizes.setText("256, 1024, 4096")
        dialog.vs_box.setChecked(True)
        dialog.vs_path.setText(str(baseline))

    answer_dialog(qtbot, fill)
    with qtbot.waitSignal(window.runner.benched, timeout=180000) as blocker:
        window.actions_by_name["bench_options"].trigger()
    report = blocker.args[0]
    assert isinstance(report, BenchReport)
    assert report.status == "timed", report.describe()
    assert window.runs.bench_options.sweep == ("n", [256, 1024, 4096])
    charts = window.charts()
    names = sorted(charts.sweep.curves)
    assert names == ["b/k", "k"]
    for name in names:
        x, y = charts.sweep.curves[name][0].getOriginalDataset()
        assert list(x) == [256, 1024, 4096] and (y > 0).all()
    heights = np.asarray(charts.variants.bars.opts["height"])
    assert len(heights) == 2 and (heights > 0).all()
    top = charts.variants.errors.opts["top"]
    bottom = charts.variants.errors.opts["bottom"]
    assert (np.asarray(top) >= 0).all() and (np.asarray(bottom) >= 0).all()
    assert "ratio (95% CI)" in window.results_pane.details.toPlainText()
    comparison = report.points[-1].comparison
    assert comparison is not None
    assert charts.variants.note == comparison.describe()
    assert charts.variants.note.startswith("time ratio k/b/k = ")
    assert f"CI {comparison.low:.4f}..{comparison.high:.4f}" in charts.variants.note
    assert "Charts: 2 variant(s), size sweep" in window.messages.messages()[-1][1]
