"""Compare in the real window: open kernels picked in the dialog, compared by a real
`kernel-studio compare` process (real NVRTC, real CPU workers); sources side by side with the
differences marked and scrolling together; verdicts, resources and the missing timing below.
Also: panes that follow the active tab, same-named tabs told apart, a bundle opened."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from gui_support import processes_tagged, selftest_kernel
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from app.base.paths import RESOURCES, ROOT
from app.cli.entry import main
from app.review.audit import check_log
from ui.compare.compare_view import CompareView
from ui.compare.picker import Candidate, ComparePicker
from ui.editor.prompter import SPEC_FILTER
from ui.main_window import MainWindow

SMALL = "cases = [{ n = 1 }, { n = 1025 }]\nseeds = 1"
COMPARE_MS = 180_000


def small_kernel(source: Path, into: Path) -> Path:
    """A copy of a kernel folder verifying two small cases once; returns its .cu path."""
    target = into / source.name
    shutil.copytree(source, target)
    spec = next(target.glob("*.toml"))
    text = re.sub(r"^cases = .*$", "", spec.read_text(), flags=re.MULTILINE)
    spec.write_text(re.sub(r"^seeds = .*$", SMALL, text, flags=re.MULTILINE))
    return next(target.glob("*.cu"))


def wait_for_report(qtbot: Any, view: CompareView) -> None:
    """Until the compare shows a report or says why it has none (then fail with that)."""
    qtbot.waitUntil(lambda: view.report is not None or "did not finish" in view.summary.text(),
                    timeout=COMPARE_MS)
    assert view.report is not None, view.summary.text()


def answer_picker(checked: list[int], baseline: int = 0) -> None:
    """When the compare dialog opens, check these rows, pick the baseline and accept."""
    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ComparePicker):
            QTimer.singleShot(50, answer)
            return
        dialog.set_checked(checked)
        dialog.baseline.setCurrentIndex(baseline)
        dialog.accept()
    QTimer.singleShot(50, answer)


def test_two_open_kernels_compared_side_by_side(qtbot: Any, window: MainWindow,
                                                tmp_path: Path) -> None:
    """Pick vector_add and a strided variant in the dialog: the Compare pane shows both
    sources with changed lines marked on each side, scrolling together, and the facts."""
    fast = small_kernel(RESOURCES / "kernels" / "vector_add", tmp_path)
    slow = small_kernel(ROOT / "tests" / "fixtures" / "bench" / "strided_add", tmp_path)
    window.open_files([fast, slow])
    view = window.review_pane.compare
    answer_picker([0, 1], baseline=0)
    window.actions_by_name["compare"].trigger()
    wait_for_report(qtbot, view)
    report = view.report
    assert report is not None and report.baseline == "vector_add"
    assert [v.verdict.status for v in report.variants] == ["passed", "passed"]
    left, right = view.sources.panes
    assert "vector_add" in left.title.text() and "strided_add" in right.title.text()
    assert left.marked and right.marked
    assert "strided_add" in right.view.toPlainText()
    left.view.verticalScrollBar().setValue(5)
    assert right.view.verticalScrollBar().value() == 5
    # The spec's one seed and the fresh seed drawn for this compare, the same for both.
    fresh = report.variants[0].verdict.fresh_seeds
    assert len(fresh) == 1 and fresh == report.variants[1].verdict.fresh_seeds
    assert [[(r.case, r.seed) for r in v.verdict.runs] for v in report.variants] == [
        [({"n": n}, seed) for n in (1, 1025) for seed in (0, fresh[0])]] * 2
    assert view.table.cell_text("n=1025", 1) == "2/2 passed"
    assert view.table.cell_text("verdict", 0) == "passed"
    assert int(view.table.cell_text("registers", 1)) > 0
    assert "GPU" in view.bars.note and not view.bars.items
    assert "2/2 variants passed" in view.summary.text()


def test_unsaved_edits_compare_against_the_saved_file(qtbot: Any, window: MainWindow,
                                                      tmp_path: Path) -> None:
    """A modified buffer is offered twice; its unsaved text is compared with the file on disk
    and the edited line is the one marked."""
    source = small_kernel(RESOURCES / "kernels" / "vector_add", tmp_path)
    editor = window.open_files([source])[0]
    editor.set_text(editor.text().replace("a[i] + b[i]", "b[i] + a[i]"))
    editor.insertText(0, "// edited\n")
    candidates = window.compare_commands.candidates()
    assert [c.label for c in candidates] == ["vector_add.cu", "vector_add.cu (unsaved edits)"]
    assert window.compare_commands.compare_candidates(candidates, baseline=0)
    view = window.review_pane.compare
    wait_for_report(qtbot, view)
    assert view.report is not None
    assert [v.verdict.status for v in view.report.variants] == ["passed", "passed"]
    saved, unsaved = view.sources.panes
    assert unsaved.view.toPlainText().startswith("// edited")
    assert 1 in unsaved.marked and source.read_text().startswith("//")


def test_results_compile_and_status_follow_the_active_tab(
        qtbot: Any, window: MainWindow, tmp_path: Path, private_data: Path) -> None:
    """A verdict belongs to the tab it ran for: another tab shows that it has none, and going
    back shows it again; the status bar says which. The run is in the audit log."""
    first = selftest_kernel(tmp_path / "one", "copy")
    second = selftest_kernel(tmp_path / "two", "copy")
    window.open_files([first, second])
    window.runner.backend = "selftest"
    window.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(window.runner.verified, timeout=60000):
        assert window.verify()
    assert window.results_pane.status() == "PASSED"
    window.tabs.setCurrentIndex(1)
    assert window.results_pane.status() == "NOT RUN"
    assert "No results for" in window.results_pane.message.text()
    assert "has not been built yet" in window.compile_pane.summary.text()
    assert window.assembly_view.kernels() == []
    window.tabs.setCurrentIndex(0)
    assert window.results_pane.status() == "PASSED"
    assert "verification passed" in window.status.currentMessage()
    check = check_log(private_data / "audit" / "audit.jsonl")
    assert check.intact and check.actions == {"verify": 1}


def test_same_named_tabs_are_told_apart(window: MainWindow, tmp_path: Path) -> None:
    """Two vector_add.cu from different folders get their folders in the tab; closing one
    gives the other its plain name back."""
    one = small_kernel(RESOURCES / "kernels" / "vector_add", tmp_path / "mine")
    two = small_kernel(RESOURCES / "kernels" / "vector_add", tmp_path / "theirs")
    window.open_files([one, two])
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles == ["vector_add.cu \u2014 mine/vector_add",
                      "vector_add.cu \u2014 theirs/vector_add"]
    window.tabs.close_tab(1)
    assert window.tabs.tabText(0) == "vector_add.cu"


def test_a_bundle_opens_in_the_compare_pane(qtbot: Any, window: MainWindow,
                                            tmp_path: Path) -> None:
    """A bundle made with the CLI is checked and re-run from the window; a file that is not a
    bundle is refused with the CLI's message."""
    spec = small_kernel(RESOURCES / "kernels" / "vector_add", tmp_path).with_suffix(".toml")
    bundle = tmp_path / "review.ksb"
    assert main(["bundle", "create", str(spec), "-o", str(bundle), "--backend", "cpu"]) == 0
    pane = window.review_pane.bundle
    window.prompter.open_paths = [str(bundle)]
    window.actions_by_name["open_bundle"].trigger()
    qtbot.waitUntil(lambda: pane.check is not None, timeout=COMPARE_MS)
    assert pane.check is not None and pane.check.claims_hold
    assert "every claim holds" in pane.summary.text() and pane.table.rowCount() > 3
    junk = tmp_path / "junk.ksb"
    junk.write_text("not a bundle")
    assert window.compare_commands.open_bundle(str(junk))
    qtbot.waitUntil(lambda: "Bundle not checked" in pane.summary.text(), timeout=60000)
    assert "is not a review bundle" in pane.summary.text()


def test_cancel_stops_the_compare_and_its_workers(
        qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compare stuck in a hanging kernel: Cancel ends the compare process and its worker."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv("KS_TEST_TAG", tag)
    hang = ROOT / "tests" / "fixtures" / "hostile" / "hang"
    first = small_kernel(hang, tmp_path / "a").with_suffix(".toml")
    second = small_kernel(hang, tmp_path / "b").with_suffix(".toml")
    assert window.compare_commands.compare_candidates([Candidate("a", first),
                                                       Candidate("b", second)])
    assert window.review_pane.cancel_button.isVisibleTo(window.review_pane)
    # The compare, its sandboxed worker and the reference process: the kernel is running.
    qtbot.waitUntil(lambda: len(processes_tagged(tag)) >= 5, timeout=60000)
    window.review_pane.cancel_button.click()
    qtbot.waitUntil(lambda: "cancelled" in window.review_pane.compare.summary.text(),
                    timeout=15000)
    qtbot.waitUntil(lambda: not processes_tagged(tag), timeout=15000)
    assert not window.review_pane.cancel_button.isVisibleTo(window.review_pane)


def checked_labels(picker: ComparePicker) -> list[str]:
    """The rows the dialog starts with checked."""
    return [picker.list.item(i).text() for i in range(picker.list.count())
            if picker.list.item(i).checkState() == Qt.CheckState.Checked]


def test_the_dialog_starts_with_two_kernels_of_one_task_and_asks_for_specs(
        window: MainWindow, prompter: Any, tmp_path: Path) -> None:
    """Issue 25, point 6: vector_add, saxpy and a strided vector_add open: saxpy (other
    arguments) is not pre-checked beside vector_add; "Add a spec file" offers spec files."""
    fast = small_kernel(RESOURCES / "kernels" / "vector_add", tmp_path)
    other = small_kernel(RESOURCES / "kernels" / "saxpy", tmp_path)
    window.open_files([fast, other])
    alone = ComparePicker(window.compare_commands.candidates(), lambda: [], window)
    try:
        assert checked_labels(alone) == ["vector_add.cu"]
        assert "No other open kernel takes the same arguments" in alone.hint.text()
    finally:
        alone.deleteLater()
    slow = small_kernel(ROOT / "tests" / "fixtures" / "bench" / "strided_add", tmp_path)
    window.open_files([slow])
    prompter.open_paths = [str(slow.with_suffix(".toml"))]
    picker = ComparePicker(window.compare_commands.candidates(),
                           lambda: window.compare_commands.ask_paths(SPEC_FILTER), window)
    try:
        assert checked_labels(picker) == ["vector_add.cu", "strided_add.cu"]
        picker.add_from_disk()
        assert prompter.filters_asked[-1].startswith("Kernel specs (*.toml)")
    finally:
        picker.deleteLater()
