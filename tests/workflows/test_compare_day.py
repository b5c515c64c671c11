"""Open a template and a variant of it, see that Bench cannot time on the CPU before clicking it
(and why), then compare the two in the window and read the report: the dialog starts with both
checked (the same task), both pass, the table and the summary say so. Real window, CPU backend,
real compare job."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.base.paths import RESOURCES
from ui.compare.picker import ComparePicker
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def small(source: Path, into: Path) -> Path:
    """A copy of a kernel folder that verifies two small cases once; its .cu path."""
    target = into / source.name
    shutil.copytree(source, target)
    spec = next(target.glob("*.toml"))
    text = re.sub(r"^cases = .*$", "", spec.read_text(), flags=re.MULTILINE)
    spec.write_text(re.sub(r"^seeds = .*$", "cases = [{ n = 1 }, { n = 1025 }]\nseeds = 1",
                           text, flags=re.MULTILINE))
    return next(target.glob("*.cu"))


def accept_as_offered(seen: list[list[str]]) -> None:
    """When the compare dialog opens, note what it checked and accept it as it is."""
    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ComparePicker):
            QTimer.singleShot(50, answer)
            return
        seen.append([c.label for c in dialog.chosen()[0]])
        dialog.accept()
    QTimer.singleShot(50, answer)


def test_a_template_and_its_variant_compared(qtbot: Any, window: MainWindow,
                                             tmp_path: Path) -> None:
    window.set_backend("cpu")
    fast = small(RESOURCES / "kernels" / "vector_add", tmp_path)
    slow = small(ROOT / "tests" / "fixtures" / "bench" / "strided_add", tmp_path)
    window.open_files([fast, slow])
    bench = window.actions_by_name["bench"]
    assert not bench.isEnabled() and "CPU backend" in bench.toolTip()
    seen: list[list[str]] = []
    accept_as_offered(seen)
    window.actions_by_name["compare"].trigger()
    view = window.review_pane.compare
    qtbot.waitUntil(lambda: view.report is not None or "did not finish" in view.summary.text(),
                    timeout=180_000)
    assert seen == [["vector_add.cu", "strided_add.cu"]]
    report = view.report
    assert report is not None, view.summary.text()
    assert [v.verdict.status for v in report.variants] == ["passed", "passed"]
    assert view.table.cell_text("verdict", 1) == "passed"
    assert "2/2 variants passed" in view.summary.text()
