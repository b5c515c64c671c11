"""`kernel-studio compile`, run as a real process: output forms and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

KERNEL = """extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def kernel_studio(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m app ARGS` in a child process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_compile_errors_print_file_line_col_and_exit_1(write) -> None:
    path = write("bad.cu", KERNEL.replace("a * x[i]", "a * xx[i]"))
    done = kernel_studio("compile", str(path))
    assert done.returncode == 1
    col = KERNEL.splitlines()[2].index("x[i]") + 1
    assert done.stderr.splitlines()[0] == f'bad.cu:3:{col}: error: identifier "xx" is undefined'


def test_refused_option_exits_2_naming_it(write) -> None:
    done = kernel_studio("compile", str(write("k.cu", KERNEL)), "--option=-Xcompiler=-fPIC")
    assert done.returncode == 2
    assert "'-Xcompiler=-fPIC' is refused: it runs or configures host tools" in done.stderr


def test_json_with_resources_sass_and_occupancy(write) -> None:
    path = write("saxpy.cu", KERNEL)
    done = kernel_studio("compile", str(path), "--json", "--sass", "--block", "256",
                         "--arch", "sm_80", "--option=-O3")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["ok"], data["arch"], data["exit_code"]) == (True, "sm_80", 0)
    assert data["options"] == ["-Xptxas=-O3"]
    [kernel] = data["kernels"]
    assert kernel["name"] == "saxpy" and kernel["registers"] > 0
    sass = data["sass"]["saxpy"]
    assert {line["line"] for line in sass if line["line"]} >= {2, 3}
    occupancy = data["occupancy"]["saxpy"]
    assert occupancy["block_size"] == 256 and 0 < occupancy["occupancy"] <= 1


def test_resources_table_and_ptx(write) -> None:
    path = write("saxpy.cu", KERNEL)
    table = kernel_studio("compile", str(path), "--resources")
    assert table.returncode == 0
    header, row = table.stdout.splitlines()[:2]
    assert header.split()[:3] == ["kernel", "regs", "smem"] and row.split()[0] == "saxpy"
    ptx = kernel_studio("compile", str(path), "--ptx", "--kernel", "saxpy")
    assert ptx.returncode == 0 and ptx.stdout.lstrip().startswith(".visible .entry saxpy(")


def test_bad_input_exits_2(write) -> None:
    done = kernel_studio("compile", str(write("empty.cu", "")))
    assert done.returncode == 2 and "empty.cu is empty" in done.stderr
