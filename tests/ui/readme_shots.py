"""The README's pictures of the real window, taken on a real X server (Xvfb) at 1400x900:

    python tests/ui/readme_shots.py OUT_FOLDER [verify sass diagnostics diff]

gui-verify-failure.png: an unsaved kernel that writes one element past its output, verified on
the CPU emulator (the file is untouched); gui-sass.png: the tiled matmul built, the caret on its
busiest line, SASS with the source lines quoted between the instructions; gui-diagnostics.png:
a compile error as squiggle, marker and annotation; gui-assistant-diff.png: a proposal from the
assistant (a scripted model session) as a diff, enlarged. test_screenshot.py runs it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from stand_in import ANSWER, ScriptedSession

from app.base.paths import RESOURCES
from app.isolation import offline
from ui.editor.cuda_editor import CudaEditor
from ui.main import application
from ui.main_window import MainWindow

SIZE = (1400, 900)
TIMEOUT_S = 240.0


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


def save(window: MainWindow, path: Path) -> None:
    """Let the window settle, then save its picture."""
    QTest.qWait(400)
    QApplication.processEvents()
    if not window.grab().save(str(path)):
        raise RuntimeError(f"could not write {path}")


def verify_failure(work: Path, out: Path) -> None:
    """An off-by-one write, unsaved, verified on the CPU emulator."""
    window = make_window(work)
    editor = window.open_files([copy_template("vector_add", work)])[0]
    replace_line(editor, "if (i < n) {", "    if (i <= n) {")
    window.set_backend("cpu")
    done: list[object] = []
    window.runner.verified.connect(done.append)
    window.verify()
    wait_until(lambda: done)
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


SCENES = {"verify": verify_failure, "sass": sass, "diagnostics": diagnostics, "diff": diff}


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
