"""Issue 17, point 1: Verify and Bench run the buffers' text, never writing it to the user's
files (the file changes only on Save)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gui_support import selftest_kernel

from app.engine.verify.results import Verdict
from app.isolation import trust
from app.workspace import snapshot
from ui.main_window import MainWindow


def verify_and_wait(qtbot: Any, window: MainWindow, timeout: int = 180_000) -> Verdict:
    """Verify the current kernel and return the verdict shown."""
    with qtbot.waitSignal(window.runner.verified, timeout=timeout) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict)
    return verdict


def test_an_unsaved_wrong_kernel_is_verified_and_the_file_never_changes(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    saved = kernel_copy.read_bytes()
    editor = window.open_files([kernel_copy])[0]
    line = next(n for n in range(1, editor.lineCount() + 1)
                if "c[i] = a[i] + b[i];" in editor.line_text(n))
    start = editor.position_of(line)
    editor.setTargetRange(start, editor.lineEndPosition(line - 1))
    editor.replaceTarget(-1, "        c[i] = a[i] - b[i];")
    window.runner.set_backend("cpu")
    verdict = verify_and_wait(qtbot, window)
    assert verdict.status == "mismatch"  # the buffer's text ran...
    assert kernel_copy.read_bytes() == saved  # ...and the file was not written
    assert editor.is_modified()
    assert window.runner.folders.holds(window.runner.last_spec)
    window.tabs.close_tab(window.tabs.currentIndex())  # the scripted prompter discards
    assert kernel_copy.read_bytes() == saved


def test_a_saved_kernel_runs_from_its_own_folder(qtbot: Any, window: MainWindow,
                                                 tmp_path: Path) -> None:
    source = selftest_kernel(tmp_path / "ok", "copy")
    window.open_files([source])
    window.runner.set_backend("selftest")
    assert verify_and_wait(qtbot, window).status == "passed"
    assert window.runner.last_spec == source.with_name("k.toml")


def test_unsaved_reference_and_spec_edits_run_and_stay_unsaved(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    source = selftest_kernel(tmp_path / "edits", "copy")
    reference, spec = source.with_name("ref.py"), source.with_name("k.toml")
    on_disk = {path: path.read_bytes() for path in (reference, spec)}
    window.open_files([source])
    ref_editor = window.open_files([reference])[0]
    ref_editor.replace_text_undoably("def reference(a, n):\n    return {'c': a + 1}\n")
    window.tabs.setCurrentIndex(0)
    window.spec_panel.cases.setPlainText("n = 3")
    window.runner.set_backend("selftest")
    verdict = verify_and_wait(qtbot, window)
    assert verdict.status == "mismatch"  # the edited reference expects a + 1
    # The form's case, with the spec's 2 seeds and the fresh one drawn for this verification.
    assert len(verdict.fresh_seeds) == 1
    assert [(run.case, run.seed) for run in verdict.runs] == [
        ({"n": 3}, seed) for seed in (0, 1, *verdict.fresh_seeds)]
    assert {path: path.read_bytes() for path in on_disk} == on_disk
    assert window.spec_panel.is_modified() and ref_editor.is_modified()


def test_the_copy_follows_trusts_idea_of_a_kernels_files(tmp_path: Path) -> None:
    folder = tmp_path / "kernel"
    (folder / "sub").mkdir(parents=True)
    (folder / "__pycache__").mkdir()
    for name in ("k.cu", "k.toml", "ref.py", "sub/common.cuh", "notes.txt", ".hidden.cu",
                 "__pycache__/ref.cpython-311.pyc"):
        (folder / name).write_text("x")
    copied = sorted(map(str, snapshot.source_files(folder)))
    assert copied == [".hidden.cu", "k.cu", "k.toml", "notes.txt", "ref.py", "sub/common.cuh"]
    assert copied == sorted(str(p.relative_to(folder)) for p in trust._entries(folder)[0])
    folders = snapshot.RunFolders()
    try:
        spec = folder / "k.toml"
        assert folders.prepare(spec, {}) == spec  # nothing unsaved: the user's own file
        copied = folders.prepare(spec, {folder / "k.cu": "edited", tmp_path / "x.cu": "no"})
        assert copied.read_text() == "x" and (copied.parent / "k.cu").read_text() == "edited"
        assert (copied.parent / "sub" / "common.cuh").is_file()
        assert (copied.parent / "notes.txt").is_file()  # any file can be code
        assert (folder / "k.cu").read_text() == "x"
        assert folders.prepare(spec, {folder / "k.cu": "again"}).parent == copied.parent
    finally:
        folders.close()
    assert not copied.exists()
