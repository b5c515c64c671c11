"""The Spec pane edits a list of launches (spec version 2), in the real window: both launches of
two_pass_sum shown and edited, saved, reloaded and verified on the CPU backend; launches added,
removed and reordered; a version 1 spec kept version 1; a launch's problem on its own field."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QComboBox, QWidget

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from ui.main_window import MainWindow
from ui.spec.panel import ERROR_STYLE, SpecPanel

TEMPLATES = sorted((RESOURCES / "kernels").glob("*/*.toml"))


@pytest.fixture
def two_pass(tmp_path: Path) -> Path:
    """A private copy of the two_pass_sum template; returns its spec."""
    target = tmp_path / "kernels" / "two_pass_sum"
    shutil.copytree(RESOURCES / "kernels" / "two_pass_sum", target)
    return target / "two_pass_sum.toml"


def outlined(widget: QWidget) -> bool:
    """Whether the pane outlines this field as having a problem."""
    return ERROR_STYLE in widget.styleSheet()


def verify_now(qtbot: Any, window: MainWindow) -> Verdict:
    """Press Verify and wait for the verdict."""
    with qtbot.waitSignal(window.runner.verified, timeout=180_000) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict)
    return verdict


def test_both_launches_are_shown_the_second_edited_saved_reloaded_and_verified(
        qtbot: Any, window: MainWindow, two_pass: Path) -> None:
    window.runner.set_backend("cpu")
    window.open_files([two_pass.with_suffix(".cu")])
    panel = window.spec_panel
    assert panel.path == two_pass
    first, second = panel.launches.editors
    assert first.title() == "Launch 1 of 2" and second.title() == "Launch 2 of 2"
    assert first.row() == {"entry": "partial_sums", "args": "x, partial, n",
                           "grid": "min(cdiv(n, 256), 1024)", "block": "256",
                           "shared_bytes": "0"}
    assert second.row()["entry"] == "finish_sum" and second.row()["grid"] == "1"
    kinds = [panel.args.cellWidget(row, 1) for row in range(panel.args.rowCount())]
    assert [k.currentText() for k in kinds if isinstance(k, QComboBox)][1] == "scratch"

    before = two_pass.read_text()
    second.fields["grid"].setText("1, 1")
    assert panel.validate_now() == [] and panel.is_modified() and panel.save()
    after = two_pass.read_text()
    changed = set(after.splitlines()) ^ set(before.splitlines())
    assert changed == {'grid = ["1"]', 'grid = ["1", "1"]'}  # that line alone, comments kept
    assert tomllib.loads(after)["launch"][1]["grid"] == ["1", "1"]

    assert panel.load(two_pass) and not panel.is_modified()
    assert panel.launches.editors[1].row()["grid"] == "1, 1"
    verdict = verify_now(qtbot, window)
    assert verdict.status == "passed", verdict.message


def test_a_launch_added_then_removed_round_trips_and_moves_keep_the_file_readable(
        qtbot: Any, window: MainWindow, two_pass: Path) -> None:
    original = two_pass.read_text()
    panel = window.spec_panel
    assert panel.load(two_pass)
    panel.launches.add_button.click()
    third = panel.launches.editors[2]
    assert third.title() == "Launch 3 of 3" and third.row()["entry"] == ""
    problems = panel.validate_now()  # no entry yet: said on the new launch's entry
    assert [p.field for p in problems] == ["launch[2].entry"]
    assert outlined(third.fields["entry"])
    assert not outlined(panel.launches.editors[0].fields["entry"])
    assert panel.problems.item(0).text().startswith("launch 3 of 3.entry: missing")
    third.fields["entry"].setText("finish_sum")
    third.fields["args"].setText("partial, total, blocks")
    assert panel.validate_now() == [] and panel.save()
    saved = tomllib.loads(two_pass.read_text())
    assert [t["entry"] for t in saved["launch"]] == ["partial_sums", "finish_sum", "finish_sum"]
    assert "# shared by the launches" in two_pass.read_text()

    assert panel.load(two_pass) and len(panel.launches.editors) == 3
    panel.launches.editors[2].remove.click()
    assert len(panel.launches.editors) == 2
    assert panel.validate_now() == [] and panel.save()
    assert two_pass.read_text() == original

    panel.launches.editors[1].up.click()  # finish_sum first: a valid spec, in the new order
    assert [e.row()["entry"] for e in panel.launches.editors] == ["finish_sum", "partial_sums"]
    assert panel.validate_now() == [] and panel.save()
    assert [t["entry"] for t in tomllib.loads(two_pass.read_text())["launch"]] == \
        ["finish_sum", "partial_sums"]
    panel.launches.editors[0].down.click()
    assert panel.validate_now() == [] and panel.save()
    assert two_pass.read_text() == original


def test_a_version_1_spec_stays_version_1_unless_it_gains_a_launch(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    spec_path = kernel_copy.with_suffix(".toml")
    original = spec_path.read_text()
    window.open_files([kernel_copy])
    panel = window.spec_panel
    assert [e.title() for e in panel.launches.editors] == ["Launch"]
    assert panel.launches.editors[0].row()["entry"] == "vector_add"
    assert not panel.launches.editors[0].remove.isEnabled()
    panel.launches.add_button.click()
    panel.launches.editors[1].remove.click()  # added and removed unsaved: still version 1
    assert panel.validate_now() == [] and panel.save()
    assert spec_path.read_text() == original

    panel.launches.add_button.click()
    panel.launches.editors[1].fields["entry"].setText("vector_add")
    assert panel.validate_now() == [] and panel.save()
    data = tomllib.loads(spec_path.read_text())
    assert isinstance(data["launch"], list) and len(data["launch"]) == 2
    assert "# 1 element; one short of" in spec_path.read_text()  # its comments kept
    assert panel.load(spec_path) and panel.spec() is not None
    assert len(panel.spec().launches) == 2  # type: ignore[union-attr]


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.parent.name for p in TEMPLATES])
def test_every_template_saved_unchanged_from_the_pane_is_byte_for_byte_the_same(
        qtbot: Any, path: Path, tmp_path: Path) -> None:
    folder = tmp_path / path.parent.name
    shutil.copytree(path.parent, folder)
    copy = folder / path.name
    panel = SpecPanel()
    qtbot.addWidget(panel)
    assert panel.load(copy) and panel.validate_now() == []
    assert panel.save()
    assert copy.read_bytes() == path.read_bytes()
    panel.checker.close()


def test_a_bad_expression_in_launch_2_is_outlined_on_launch_2_and_the_text_is_kept(
        qtbot: Any, window: MainWindow, two_pass: Path) -> None:
    window.open_files([two_pass.with_suffix(".cu")])
    panel = window.spec_panel
    first, second = panel.launches.editors
    second.fields["grid"].setText("cdiv(n,")
    qtbot.waitUntil(lambda: panel.problems.count() > 0, timeout=5000)
    assert panel.problems.item(0).text().startswith("launch 2 of 2 (finish_sum).grid[0]")
    assert outlined(second.fields["grid"]) and not outlined(first.fields["grid"])
    assert second.fields["grid"].text() == "cdiv(n,"  # what was typed stays
    assert not panel.save() and '"cdiv(n,"' not in two_pass.read_text()

    second.fields["grid"].setText("1")
    second.fields["block"].setText("2048")  # a problem of every case, found by resolving them
    problems = panel.validate_now()
    assert problems and all(p.field == "launch[1] (finish_sum).block" for p in problems)
    assert outlined(second.fields["block"]) and not outlined(first.fields["block"])
    assert not outlined(second.fields["grid"])
    window.show_pane("spec")
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    panel.problems.setCurrentRow(0)
    panel.go_to_problem(0)  # what Enter on the problem does
    qtbot.waitUntil(lambda: second.fields["block"].hasFocus(), timeout=5000)


def test_tab_goes_through_every_launch_in_order_and_the_scratch_init_is_read_only(
        qtbot: Any, window: MainWindow, two_pass: Path) -> None:
    panel = window.spec_panel
    assert panel.load(two_pass)
    panel.launches.add_button.click()  # made after the form: Tab must still reach it in place
    editors = panel.launches.editors
    wanted = [panel.fields["options"], panel.args, editors[0].fields["entry"],
              editors[0].remove, editors[1].fields["entry"], editors[2].fields["entry"],
              editors[2].remove, panel.launches.add_button, panel.fields["reference"],
              panel.cases, panel.save_button]
    chain, widget = [], panel.fields["source"]
    for _ in range(200):
        widget = widget.nextInFocusChain()
        chain.append(widget)
    positions = [chain.index(w) for w in wanted]
    assert positions == sorted(positions)
    detail = panel.args.item(1, 4)  # partial: scratch
    assert detail is not None and not detail.flags() & detail.flags().ItemIsEditable
    assert "poisoned" in detail.toolTip()
    kind = panel.args.cellWidget(1, 1)
    assert isinstance(kind, QComboBox)
    kind.setCurrentText("in")  # an input may have an init again
    assert detail.flags() & detail.flags().ItemIsEditable
