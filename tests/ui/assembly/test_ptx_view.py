"""The PTX view shows the chosen kernel's own PTX (app.compile.ptx_function), with a kernel
chooser when a file has several kernels; source correlation works per kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ui.main_window import MainWindow

TWO_KERNELS = """extern "C" __global__ void scale(float* x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * s;
    }
}

extern "C" __global__ void shift(float* x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] + s;
    }
}
"""


@pytest.fixture
def compile_api() -> Any:
    """app.compile, or a skip when this checkout cannot compile."""
    api = pytest.importorskip("app.compile")
    if not hasattr(api, "ptx_function"):
        pytest.skip("app.compile.ptx_function is not available")
    return api


def test_each_kernel_shows_its_own_ptx_and_the_chooser_switches(
        qtbot: Any, window: MainWindow, tmp_path: Path, compile_api: Any) -> None:
    source = tmp_path / "two.cu"
    source.write_text(TWO_KERNELS)
    editor = window.open_files([source])[0]
    with qtbot.waitSignal(window.buildFinished, timeout=120000) as blocker:
        assert window.build()
    assert blocker.args[0]["ok"], blocker.args[0]
    view = window.assembly_view
    assert view.kernels() == ["scale", "shift"]
    assert view.kernel_box.isVisibleTo(view) and view.kernel_label.isVisibleTo(view)
    ptx = view.ptx_view.toPlainText()
    assert ".entry scale(" in ptx and ".entry shift" not in ptx
    assert ptx.rstrip().endswith("}") and ".version" not in ptx  # one function, not the module
    assert "mul.f32" in ptx and "add.f32" not in ptx
    view.kernel_box.setCurrentText("shift")
    ptx = view.ptx_view.toPlainText()
    assert ".entry shift(" in ptx and ".entry scale" not in ptx and "add.f32" in ptx
    view.tabs.setCurrentWidget(view.ptx_view)
    assert view.mix_label.text().startswith("PTX: ")
    editor.go_to(13)  # x[i] = x[i] + s;  in shift
    qtbot.waitUntil(lambda: bool(view.highlighted_rows(view.ptx_view)), timeout=5000)
    lines = ptx.splitlines()
    assert any("add.f32" in lines[row] for row in view.highlighted_rows(view.ptx_view))


def test_a_file_with_one_kernel_needs_no_chooser(qtbot: Any, window: MainWindow,
                                                 kernel_copy: Path, compile_api: Any) -> None:
    window.open_files([kernel_copy])
    with qtbot.waitSignal(window.buildFinished, timeout=120000):
        assert window.build()
    view = window.assembly_view
    assert view.kernels() == ["vector_add"]
    assert not view.kernel_box.isVisibleTo(view)
    assert view.ptx_view.toPlainText().lstrip().startswith(".visible .entry vector_add(")


def test_one_kernels_ptx_maps_lines_through_the_modules_file_table() -> None:
    from app.compile.assembly import ptx_files, ptx_source_lines

    module = '.visible .entry k(\n{\n.loc 1 7 3\nadd.f32 %f1, %f2, %f3;\n}\n.file 1 "/x/k.cu"\n'
    function = module.split(".file")[0]
    assert ptx_files(module) == {"1": "/x/k.cu"}
    assert ptx_source_lines(function, "k.cu", ptx_files(module))[3] == 7
    assert ptx_source_lines(function, "other.cu", ptx_files(module))[3] == 0
