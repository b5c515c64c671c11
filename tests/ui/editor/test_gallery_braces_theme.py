"""The template gallery dialog creates a kernel, brace matching lights the partner brace, and
the charts follow a theme switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from ui.editor.template_gallery import TemplateGallery
from ui.main_window import MainWindow
from ui.theme import load_theme


def test_the_gallery_dialog_creates_a_kernel_from_a_template(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    seen: list[str] = []

    def choose() -> None:
        gallery = QApplication.activeModalWidget()
        if not isinstance(gallery, TemplateGallery):
            QTimer.singleShot(20, choose)
            return
        assert gallery.select("saxpy")
        seen.append(gallery.preview.toPlainText())
        gallery.folder_field.setText(str(tmp_path / "mine"))
        gallery.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()

    QTimer.singleShot(0, choose)
    window.actions_by_name["new"].trigger()
    folder = tmp_path / "mine" / "saxpy"
    assert sorted(p.name for p in folder.iterdir()) == ["saxpy.cu", "saxpy.toml", "saxpy_ref.py"]
    editor = window.tabs.current()
    assert editor is not None and window.tabs.document(editor).path == folder / "saxpy.cu"
    assert editor.text() == (folder / "saxpy.cu").read_text() == seen[0]  # what was previewed
    assert window.spec_panel.path == folder / "saxpy.toml" and window.spec_panel.spec()


def test_cancelling_the_gallery_creates_nothing(qtbot: Any, window: MainWindow) -> None:
    def cancel() -> None:
        gallery = QApplication.activeModalWidget()
        if not isinstance(gallery, TemplateGallery):
            QTimer.singleShot(20, cancel)
            return
        gallery.reject()

    QTimer.singleShot(0, cancel)
    assert window.new_from_template() is None
    assert window.tabs.count() == 0


def brace_pixels(editor: Any, position: int, colour: str) -> int:
    """How many pixels of the character cell at `position` are close to `colour`."""
    x, y = int(editor.pointXFromPosition(position)), int(editor.pointYFromPosition(position))
    width = int(editor.textWidth(32, "}"))
    height = int(editor.textHeight(0))
    image = editor.grab().toImage()
    target = QColor(colour)
    close = 0
    for px in range(x, x + width):
        for py in range(y, y + height):
            pixel = image.pixelColor(px, py)
            if max(abs(pixel.red() - target.red()), abs(pixel.green() - target.green()),
                   abs(pixel.blue() - target.blue())) < 40:
                close += 1
    return close


def test_brace_matching_lights_the_partner_brace(qtbot: Any, window: MainWindow,
                                                 kernel_copy: Path) -> None:
    editor = window.open_files([kernel_copy])[0]
    text = editor.text().encode()
    opening = text.index(b"{")
    closing = text.rindex(b"}")
    editor.gotoPos(opening + 1)  # the caret just after the kernel's opening brace
    qtbot.waitUntil(lambda: editor.brace_pair is not None, timeout=3000)
    assert editor.brace_pair == (opening, closing)
    editor.ensureVisibleEnforcePolicy(int(editor.lineFromPosition(closing)))
    colour = window.themes.theme.editor["brace_match"]
    qtbot.waitUntil(lambda: brace_pixels(editor, closing, colour) > 0, timeout=3000)
    editor.gotoPos(text.index(b"int i"))  # away from any brace: nothing lit
    qtbot.waitUntil(lambda: editor.brace_pair is None, timeout=3000)
    assert brace_pixels(editor, closing, colour) == 0


def test_charts_recolour_when_the_theme_switches(qtbot: Any, window: MainWindow) -> None:
    charts = window.charts()
    charts.variants.set_variants(["a", "b"], [1.0, 2.0], [0.9, 1.9], [1.1, 2.1])
    charts.samples.set_samples(["a"], [[1.0, 1.1, 0.9]])
    charts.sweep.set_sweep([1e3, 1e4], {"a": ([0.1, 0.2], [10.0, 20.0])})
    window.set_theme("dark")
    dark = load_theme("dark").charts
    assert charts.variants.backgroundBrush().color().name() == dark["background"]
    window.set_theme("light")
    light = load_theme("light").charts
    for chart in (charts.samples, charts.variants, charts.roofline, charts.sweep):
        assert chart.backgroundBrush().color().name() == light["background"]
    axis = charts.variants.getAxis("left")
    assert axis.pen().color().name() == light["foreground"]
    brushes = charts.variants.bars.opts["brushes"]
    assert [QColor(b).name() for b in brushes] == light["series"][:2]
    sample_brush = charts.samples.points.data["brush"][0].color().name()
    assert sample_brush == light["series"][0]
    pen = charts.sweep.curves["a"][0].opts["pen"]
    assert pen.color().name() == light["series"][0]
    assert list(np.asarray(charts.variants.bars.opts["height"])) == [1.0, 2.0]  # data kept


def test_the_proposal_diff_recolours_with_the_theme(qtbot: Any, window: MainWindow) -> None:
    from ui.assistant.diff_view import COLOURS

    view = window.assistant_pane.diff_view
    view.show_diff("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n")
    assert view.marked_lines() == {2: COLOURS[True]["hunk"], 3: COLOURS[True]["removed"],
                                   4: COLOURS[True]["added"]}
    window.set_theme("light")
    qtbot.waitUntil(lambda: view.marked_lines()[4] == COLOURS[False]["added"], timeout=3000)
