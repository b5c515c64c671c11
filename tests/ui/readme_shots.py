"""The README's pictures of the real window, taken on a real X server (Xvfb) at 1400x900:

    python tests/ui/readme_shots.py OUT_FOLDER [SCENE ...]   (every scene by default)

What a user meets first: gui-first-open.png, the vector_add template just opened from File >
New; gui-verify-pass.png, it verified on the CPU emulator; gui-verify-failure.png, an unsaved
off-by-one (the file is untouched) that fails with the thread, element and line that went past
the buffer; gui-bench-refused.png, Bench greyed out on the CPU backend with its reason;
gui-compare.png, vector_add against a strided variant in the Compare pane; gui-bundle-review.png,
a review bundle made with the CLI, checked in the window, its kernel open beside Accept and
Reject. Then gui-sass.png, the
tiled matmul's SASS with source lines quoted; gui-diagnostics.png, a compile error as squiggle,
marker and annotation; gui-assistant-diff.png, a proposal from the assistant (a scripted model
session) as a diff, enlarged. Each is saved with a palette of 256 colours (the window's few
flat colours and its antialiased text survive; about a third of the bytes). test_screenshot.py
runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QToolTip
from stand_in import ANSWER, ScriptedSession

from app.base.paths import RESOURCES
from app.isolation import offline
from ui.compare.picker import ComparePicker
from ui.editor.cuda_editor import CudaEditor
from ui.editor.prompter import Prompter
from ui.main import application
from ui.main_window import MainWindow

SIZE = (1400, 900)
TIMEOUT_S = 240.0
ROOT = Path(__file__).resolve().parents[2]
COLOURS = 256


def wait_until(condition: Callable[[], object], timeout: float = TIMEOUT_S) -> None:
    """Process events until `condition()` holds (RuntimeError after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for the window")
        QTest.qWait(50)


def make_window(work: Path, **extra: object) -> MainWindow:
    """A window of its own (private settings), shown at the README's size."""
    window = MainWindow(settings_path=work / f"settings-{time.monotonic_ns()}.ini",
                        offer_recovery=False, **extra)  # type: ignore[arg-type]
    window.resize(*SIZE)
    window.show()
    QTest.qWaitForWindowExposed(window)
    return window


def copy_template(name: str, work: Path) -> Path:
    """A private copy of a template folder; its .cu path."""
    target = Path(tempfile.mkdtemp(dir=work)) / name
    shutil.copytree(RESOURCES / "kernels" / name, target)
    return target / f"{name}.cu"


def replace_line(editor: CudaEditor, needle: str, text: str) -> int:
    """Replace the first line holding `needle` (as an edit, unsaved); its number."""
    line = next(n for n in range(1, editor.lineCount() + 1) if needle in editor.line_text(n))
    editor.setTargetRange(editor.position_of(line), editor.lineEndPosition(line - 1))
    editor.replaceTarget(-1, text)
    return line


def palette_image(image: QImage) -> QImage:
    """The picture with at most 256 colours: the most frequent ones (counted on 5 bits a
    channel), every other pixel mapped to the nearest of them. A window is mostly flat colours,
    so the text's antialiasing survives and the PNG takes about a third of the bytes."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    width, height = image.width(), image.height()
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(height, image.bytesPerLine())
    pixels = rows[:, :4 * width].reshape(height, width, 4)[..., 2::-1].astype(np.int64)  # RGB
    keys = ((pixels[..., 0] >> 3) << 10 | (pixels[..., 1] >> 3) << 5 | pixels[..., 2] >> 3).ravel()
    counts = np.bincount(keys, minlength=1 << 15)
    top = np.argsort(counts)[::-1][:COLOURS]
    top = top[counts[top] > 0]
    sums = np.stack([np.bincount(keys, weights=pixels[..., c].ravel(), minlength=1 << 15)
                     for c in range(3)], axis=1)
    palette = (sums[top] / counts[top, None]).round().astype(np.int64)
    centres = np.stack([(np.arange(1 << 15) >> shift & 31) * 8 + 4 for shift in (10, 5, 0)], 1)
    nearest = np.empty(1 << 15, np.uint8)
    for start in range(0, 1 << 15, 4096):
        distance = ((centres[start:start + 4096, None] - palette[None]) ** 2).sum(axis=2)
        nearest[start:start + 4096] = distance.argmin(axis=1)
    nearest[top] = np.arange(len(top))
    out = QImage(width, height, QImage.Format.Format_Indexed8)
    out.setColorTable([0xFF000000 | int(r) << 16 | int(g) << 8 | int(b) for r, g, b in palette])
    np.frombuffer(out.bits(), np.uint8).reshape(height, out.bytesPerLine())[:, :width] = \
        nearest[keys].reshape(height, width)
    return out


def write_png(image: QImage, path: Path) -> None:
    """Save a picture with its palette of 256 colours."""
    if not palette_image(image).save(str(path)):
        raise RuntimeError(f"could not write {path}")


def save(window: MainWindow, path: Path) -> None:
    """Let the window settle, then save its picture."""
    QTest.qWait(400)
    QApplication.processEvents()
    write_png(window.grab().toImage(), path)


def save_screen(window: MainWindow, path: Path) -> None:
    """The screen where the window is, popups and tool tips included (they are windows of
    their own, which the window's own picture leaves out)."""
    QApplication.processEvents()
    corner = window.mapToGlobal(QPoint(0, 0))
    shot = QApplication.primaryScreen().grabWindow(0, corner.x(), corner.y(), window.width(),
                                                   window.height())
    write_png(shot.toImage(), path)


def small_cases(folder: Path) -> None:
    """The folder's spec verifies two small cases once (a compare or a bundle in seconds)."""
    spec = next(folder.glob("*.toml"))
    text = re.sub(r"^cases = .*$", "", spec.read_text(), flags=re.MULTILINE)
    spec.write_text(re.sub(r"^seeds = .*$", "cases = [{ n = 1 }, { n = 1025 }]\nseeds = 1",
                           text, flags=re.MULTILINE))


def verified(window: MainWindow) -> None:
    """Verify the active tab and wait for the verdict."""
    done: list[object] = []
    window.runner.verified.connect(done.append)
    window.verify()
    wait_until(lambda: done)


def first_open(work: Path, out: Path) -> None:
    """The vector_add template as File > New from template opens it."""
    window = make_window(work)
    window.new_from_template("vector_add", Path(tempfile.mkdtemp(dir=work)), "vector_add")
    save(window, out / "gui-first-open.png")
    window.close()


def verify_pass(work: Path, out: Path) -> None:
    """The vector_add template verified on the CPU emulator."""
    window = make_window(work)
    window.open_files([copy_template("vector_add", work)])
    window.set_backend("cpu")
    verified(window)
    window.results_pane.runs.setFocus()
    save(window, out / "gui-verify-pass.png")
    window.close()


def bench_refused(work: Path, out: Path) -> None:
    """Run > Bench greyed out on the CPU backend, its reason shown where the mouse rests."""
    window = make_window(work)
    window.open_files([copy_template("vector_add", work)])
    window.set_backend("cpu")
    bench = window.actions_by_name["bench"]
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Run")
    assert isinstance(menu, QMenu) and not bench.isEnabled()
    bar = window.menuBar()
    menu.popup(bar.mapToGlobal(bar.actionGeometry(menu.menuAction()).bottomLeft()))
    QTest.qWaitForWindowExposed(menu)
    place = menu.actionGeometry(bench).center()
    QTest.mouseMove(menu, place)
    QToolTip.showText(menu.mapToGlobal(place + QPoint(24, 8)), bench.toolTip(), menu)
    QTest.qWait(600)
    save_screen(window, out / "gui-bench-refused.png")
    QToolTip.hideText()
    menu.close()
    window.close()


def accept_compare_dialog() -> None:
    """When the compare dialog opens, accept it with the two kernels it starts with."""
    dialog = QApplication.activeModalWidget()
    if not isinstance(dialog, ComparePicker):
        QTimer.singleShot(50, accept_compare_dialog)
        return
    dialog.accept()


def compare(work: Path, out: Path) -> None:
    """vector_add against a strided variant in the Compare pane (CPU backend: no timing)."""
    window = make_window(work)
    window.set_backend("cpu")
    sources = [copy_template("vector_add", work),
               copy_folder(ROOT / "tests" / "fixtures" / "bench" / "strided_add", work)]
    for source in sources:
        small_cases(source.parent)
    window.open_files(sources)
    QTimer.singleShot(50, accept_compare_dialog)
    window.actions_by_name["compare"].trigger()
    view = window.review_pane.compare
    wait_until(lambda: view.report is not None or "did not finish" in view.summary.text())
    window.show_pane("compare")
    window.resizeDocks([window.docks["compare"]], [520], Qt.Orientation.Vertical)
    save(window, out / "gui-compare.png")
    window.close()


def copy_folder(folder: Path, work: Path) -> Path:
    """A private copy of a kernel folder; its .cu path."""
    target = Path(tempfile.mkdtemp(dir=work)) / folder.name
    shutil.copytree(folder, target)
    return next(target.glob("*.cu"))


class OpenThese(Prompter):
    """A prompter whose open dialog answers with given paths."""

    def __init__(self, paths: list[str]) -> None:
        """Answer every open dialog with `paths`."""
        super().__init__()
        self.paths = paths

    def ask_open_paths(self, folder: str, filters: str = "") -> list[str]:
        """The given paths, whatever was asked."""
        return self.paths


def bundle_review(work: Path, out: Path) -> None:
    """A bundle made with `kernel-studio bundle create` in one folder, checked in the window
    in another, its kernel's source open."""
    source = copy_template("vector_add", work)
    small_cases(source.parent)
    bundle = work / "reviewer" / "vector_add.ksb"
    bundle.parent.mkdir()
    made = subprocess.run([sys.executable, "-m", "app", "bundle", "create",
                           str(source.with_suffix(".toml")), "-o", str(bundle), "--backend",
                           "cpu", "--note", "vector_add for review"], cwd=ROOT,
                          env=dict(os.environ), capture_output=True, text=True, timeout=300,
                          check=False)
    if made.returncode != 0:
        raise RuntimeError(f"bundle create failed: {made.stderr[-2000:]}")
    window = make_window(work, prompter=OpenThese([str(bundle)]))
    page = window.review_pane.bundle
    window.actions_by_name["open_bundle"].trigger()
    wait_until(lambda: page.check is not None)
    names = [page.sources.item(i).text() for i in range(page.sources.count())]
    page.sources.setCurrentRow(next(i for i, n in enumerate(names) if n.endswith(".cu")))
    page.note.setText("read the kernel and its spec; the claims hold here")
    window.show_pane("compare")
    window.resizeDocks([window.docks["compare"]], [640], Qt.Orientation.Vertical)
    page.pages.setCurrentIndex(1)  # "Sources and decision", under the claims' summary
    save(window, out / "gui-bundle-review.png")
    window.close()


def verify_failure(work: Path, out: Path) -> None:
    """An off-by-one write, unsaved, verified on the CPU emulator."""
    window = make_window(work)
    editor = window.open_files([copy_template("vector_add", work)])[0]
    replace_line(editor, "if (i < n) {", "    if (i <= n) {")
    window.set_backend("cpu")
    verified(window)
    window.results_pane.runs.setFocus()
    editor.go_to(15)
    save(window, out / "gui-verify-failure.png")
    editor.setSavePoint()  # closing asks nothing: the edit was for the picture
    window.close()


def sass(work: Path, out: Path) -> None:
    """The tiled matmul built, its busiest line's instructions highlighted."""
    window = make_window(work)
    editor = window.open_files([copy_template("matmul", work)])[0]
    built: list[object] = []
    window.buildFinished.connect(built.append)
    window.build()
    wait_until(lambda: built)
    line = next(n for n in range(1, editor.lineCount() + 1)
                if "acc = fmaf(" in editor.line_text(n))
    window.show_pane("assembly")
    window.resizeDocks([window.docks["assembly"]], [640], Qt.Orientation.Horizontal)
    editor.go_to(line)
    wait_until(lambda: window.assembly_view.line_label.text().startswith(f"Line {line}:"), 10)
    window.assembly_view.step(1)
    save(window, out / "gui-sass.png")
    window.close()


def diagnostics(work: Path, out: Path) -> None:
    """A compile error shown in the editor and the Compile pane."""
    window = make_window(work)
    editor = window.open_files([copy_template("vector_add", work)])[0]
    line = replace_line(editor, "c[i] = a[i] + b[i];", "        c[i] = a[i] + b[j];")
    built: list[object] = []
    window.buildFinished.connect(built.append)
    window.build()
    wait_until(lambda: built)
    editor.go_to(line)
    save(window, out / "gui-diagnostics.png")
    editor.setSavePoint()
    window.close()


def diff(work: Path, out: Path) -> None:
    """The assistant's proposal as a diff against the buffer, the diff enlarged."""
    def session(progress: Callable[[str, float], None], _adapter: str) -> ScriptedSession:
        progress("ready", 1.0)
        return ScriptedSession(ANSWER, 100_000)

    window = make_window(work, assistant_session=session)
    window.open_files([copy_template("vector_add", work)])
    window.show_pane("assistant")
    window.resizeDocks([window.docks["assistant"]], [760], Qt.Orientation.Horizontal)
    pane = window.assistant_pane
    pane.set_action("propose")
    pane.question.setPlainText("c = a + b with a grid-stride loop")
    pane.send_button.click()
    wait_until(lambda: pane.proposal.isVisible() and pane.send_button.isEnabled(), 30)
    pane.enlarge_button.click()
    save(window, out / "gui-assistant-diff.png")
    window.assistant_commands.shutdown()
    window.close()


SCENES = {"first-open": first_open, "verify-pass": verify_pass, "verify": verify_failure,
          "bench-refused": bench_refused, "compare": compare, "bundle": bundle_review,
          "sass": sass, "diagnostics": diagnostics, "diff": diff}


def main(argv: list[str]) -> int:
    """Take the pictures asked for (all by default) into argv[0]."""
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    offline.enforce()  # as the app does: the status bar shows OFFLINE
    application()
    with tempfile.TemporaryDirectory(prefix="kernel-studio-shots-") as folder:
        for name in argv[1:] or list(SCENES):
            SCENES[name](Path(folder), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
