"""Build, verify and cancel from the real window, through the real job process and worker.

Verification uses the engine's selftest backend: its "kernels" are named behaviours run in a
real worker process, so a pass, a mismatch and a hang are real on a machine without a GPU.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gui_support import processes_tagged, selftest_kernel
from PySide6.QtCore import Qt
from selftest_spec import BENCH

from app.engine.verify.seeds import FRESH_FLOOR
from ui.main_window import MainWindow


def test_verify_runs_in_a_real_worker_and_shows_the_verdict(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "ok", "copy")])
    window.runner.backend = "selftest"
    with qtbot.waitSignal(window.runner.verified, timeout=60000) as blocker:
        qtbot.keyClick(window.tabs.current(), Qt.Key.Key_F5)
    pane = window.results_pane
    assert pane.status() == "PASSED"
    # Each case runs the spec's seeds 0 and 1, then the one seed drawn for this verification,
    # marked fresh; the message names it for a replay.
    fresh = blocker.args[0].fresh_seeds
    assert len(fresh) == 1 and fresh[0] >= FRESH_FLOOR
    rows = [tuple(pane.runs.item(r, c).text() for c in range(3))
            for r in range(pane.runs.rowCount())]
    assert rows == [(case, seed, "passed") for case in ("n=1", "n=1025")
                    for seed in ("0", "1", f"{fresh[0]} (fresh)")]
    assert pane.message.text().endswith(
        f"fresh seeds drawn for this run: {fresh[0]} (replay one with kernel-studio verify "
        f"SPEC --seed {fresh[0]})")
    assert pane.details.toPlainText() == "Every run passed."


def test_a_mismatch_shows_the_first_bad_indices_in_plain_words(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    path = selftest_kernel(tmp_path / "bad", "copy", "return {'c': a + (a > 0.5) * 1.0}")
    window.open_files([path])
    window.runner.backend = "selftest"
    with qtbot.waitSignal(window.runner.verified, timeout=60000):
        assert window.verify()
    pane = window.results_pane
    assert pane.status() == "MISMATCH"
    details = pane.details.toPlainText()
    assert "outputs differ from the reference" in details
    assert "c: " in details and ": expected " in details and "largest errors" in details


def test_cancel_stops_a_hanging_kernel_and_its_worker(
        qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tag = uuid.uuid4().hex
    monkeypatch.setenv("KS_TEST_TAG", tag)
    window.open_files([selftest_kernel(tmp_path / "hang", "hang")])
    window.runner.backend = "selftest"
    window.runner.timeout = 300.0
    assert window.verify()
    assert window.actions_by_name["cancel"].isEnabled()
    assert not window.actions_by_name["verify"].isEnabled()
    # Wait until the kernel really runs: the job process and its worker are both alive.
    qtbot.waitUntil(lambda: len(processes_tagged(tag)) >= 2, timeout=30000)
    with qtbot.waitSignal(window.runner.failed, timeout=10000):
        window.actions_by_name["cancel"].trigger()
    assert window.results_pane.status() == "CANCELLED"
    assert window.status.worker_label.text() == "worker: idle"
    qtbot.waitUntil(lambda: not processes_tagged(tag), timeout=10000)
    assert window.actions_by_name["verify"].isEnabled()


def test_a_build_shows_a_diagnostic_marker_and_a_click_jumps_to_it(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    compile_api = pytest.importorskip("app.compile")
    if not hasattr(compile_api, "compile_source"):
        pytest.skip("app.compile.compile_source has not landed yet (issue 3)")
    editor = window.open_files([kernel_copy])[0]
    line = 14
    editor.gotoPos(editor.lineEndPosition(line - 1))
    editor.insertText(editor.currentPos(), " int j = undefined_name;")
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert not blocker.args[0]["ok"]
    assert line in editor.diagnostic_lines()
    assert editor.annotationText(line - 1).data()
    pane = window.compile_pane
    assert pane.diagnostics.rowCount() >= 1 and "undefined_name" in pane.diagnostics.item(
        0, 3).text()
    editor.gotoPos(0)
    pane.diagnostics.cellClicked.emit(0, 3)
    assert editor.cursor_line() == line


def test_bench_times_through_a_worker_and_feeds_the_charts(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    window.open_files([selftest_kernel(tmp_path / "timed", "copy", bench=BENCH)])
    window.runner.backend = "selftest"
    with qtbot.waitSignal(window.runner.benched, timeout=120000):
        qtbot.keyClick(window.tabs.current(), Qt.Key.Key_F5,
                       Qt.KeyboardModifier.ControlModifier)
    assert window.results_pane.status() == "TIMED"
    assert "median" in window.results_pane.details.toPlainText()
    charts = window.charts()
    x, y = charts.samples.points.getData()
    assert len(y) >= 10 and (y > 0).all()
    assert list(charts.variants.bars.opts["height"]) == [pytest.approx(float(np.median(y)))]
    assert "Charts: 1 variant(s)" in window.messages.messages()[-1][1]


def test_source_lines_and_sass_select_each_other(qtbot: Any, window: MainWindow,
                                                 kernel_copy: Path) -> None:
    compile_api = pytest.importorskip("app.compile")
    if not hasattr(compile_api, "compile_source"):
        pytest.skip("app.compile.compile_source has not landed yet (issue 3)")
    editor = window.open_files([kernel_copy])[0]
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        assert window.build()
    assert blocker.args[0]["ok"]
    assert window.compile_pane.resources.item(0, 0).text() == "vector_add"
    assert window.compile_pane.resources.item(0, 1).text()  # registers
    view = window.assembly_view
    assert view.kernel_box.currentText() == "vector_add"
    assert view.mix_label.text().startswith("SASS: memory ")
    editor.go_to(19)  # c[i] = a[i] + b[i];  (Scintilla reports the caret move when idle)
    qtbot.waitUntil(lambda: bool(view.highlighted_rows(view.sass_view)), timeout=5000)
    blocks = view.highlighted_rows(view.sass_view)
    assert blocks and all(view.rows[view.row_at_block(b)].line == 19 for b in blocks)
    assert view.highlighted_rows(view.ptx_view)
    other = next(i for i, row in enumerate(view.rows) if row.line == 14)
    cursor = view.sass_view.textCursor()
    cursor.setPosition(view.sass_view.document().findBlockByNumber(
        view.block_of_row(other)).position())
    view.sass_view.setTextCursor(cursor)
    assert editor.markerGet(13) & (1 << 3)  # line 14 carries the correlated-line marker
