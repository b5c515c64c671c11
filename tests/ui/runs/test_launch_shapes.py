"""A build of a kernel file with several launches shows each kernel's occupancy at its own
launch's block and shared memory (real window, real NVRTC, real job process)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from app.base.paths import RESOURCES
from app.compile.model import KernelResources
from app.compile.occupancy import occupancy
from ui.main_window import MainWindow
from ui.runs.compile_pane import _occupancy_text
from ui.runs.controller import launch_shape, launch_shapes


def occupancy_cells(window: MainWindow) -> dict[str, str]:
    """kernel name -> the Resources tab's occupancy cell."""
    table = window.compile_pane.resources
    last = table.columnCount() - 1
    return {table.item(row, 0).text(): table.item(row, last).text()
            for row in range(table.rowCount())}


def test_each_kernel_of_a_two_launch_spec_gets_its_own_launches_occupancy(
        qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    folder = tmp_path / "two_pass_sum"
    shutil.copytree(RESOURCES / "kernels" / "two_pass_sum", folder)
    window.open_files([folder / "two_pass_sum.cu"])
    panel = window.spec_panel
    panel.launches.editors[1].fields["block"].setText("32")  # unsaved: the build uses the pane's
    assert panel.validate_now() == []
    spec = panel.spec()
    assert [(s.entry, s.threads) for s in launch_shapes(spec)] == [("partial_sums", 256),
                                                                    ("finish_sum", 32)]
    assert launch_shape(spec) == (256, 0)  # the first launch's, as for a version 1 spec
    with qtbot.waitSignal(window.runner.built, timeout=180_000) as blocker:
        assert window.build()
    data = blocker.args[1]
    assert data["ok"], data.get("message")
    kernels = {k["name"]: KernelResources(**k) for k in data["kernels"]}
    cells = occupancy_cells(window)
    for name, threads in (("partial_sums", 256), ("finish_sum", 32)):
        expected = occupancy(kernels[name], threads, 0, data["arch"])
        assert data["occupancy"][name]["block_size"] == threads
        assert cells[name] == _occupancy_text(data["occupancy"][name])
        assert cells[name].startswith(f"{100 * expected.occupancy:.0f}%")
    assert cells["partial_sums"] != cells["finish_sum"]  # 32 threads cannot fill an SM
