"""Kernels written off by one, verified on the CPU backend: the verdict names the thread
(block and thread indices), the element of the spec's buffer, and the line of the user's .cu
that read or wrote outside it, as compute-sanitizer's memcheck does on a GPU.

Reads and writes that leave the guard zones as they were are found by the edge runs; a write
that changed a guard zone is found by the normal runs, then repeated against inaccessible
memory to say who did it and where."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.worker.backends.cpu import faults

HEAD = ("extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n)\n"
        "{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n")
CORRECT = "    if (i < n) c[i] = a[i] + b[i];\n"
# Each: the body's lines after HEAD, the one marked "BUG" being the one the verdict must name.
KERNELS = {
    # c[n] read and written back: the guard zone stays as it was.
    "read_back_past_the_end": ["    volatile float* v = c;\n",
                               "    if (i == 0) v[n] = v[n];  // BUG\n", CORRECT],
    # c[-1] read and written back.
    "read_back_before_the_start": ["    volatile float* v = c;\n",
                                   "    if (i == 0) v[-1] = v[-1];  // BUG\n", CORRECT],
    # One thread writes c[n]: the guard zone changes.
    "write_past_the_end": [CORRECT, "    if (i == n) c[i] = 1.0f;  // BUG\n"],
    # One thread writes c[-1].
    "write_before_the_start": [CORRECT, "    if (i == 0) c[i - 1] = 1.0f;  // BUG\n"],
}
# What each verdict must say (case n=1: one block, thread 0 is i == 0, thread 1 is i == n).
EXPECTED = {
    "read_back_past_the_end": "thread (0, 0, 0) of block (0, 0, 0) read c[1] at vector_add.cu:{}"
                              ", past the end of c (1 element)",
    "read_back_before_the_start": "thread (0, 0, 0) of block (0, 0, 0) read c[-1] at "
                                  "vector_add.cu:{}, before the start of c (1 element)",
    "write_past_the_end": "thread (1, 0, 0) of block (0, 0, 0) wrote c[1] at vector_add.cu:{}, "
                          "past the end of c (1 element)",
    "write_before_the_start": "thread (0, 0, 0) of block (0, 0, 0) wrote c[-1] at "
                              "vector_add.cu:{}, before the start of c (1 element)",
}

needs_addr2line = pytest.mark.skipif(faults.symbolizer() is None,
                                     reason="no addr2line: the CPU backend cannot name lines")


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def bug_line(lines: list[str]) -> int:
    """The 1-based line of the kernel marked BUG."""
    return next(k for k, line in enumerate(lines, 1) if "BUG" in line)


def vector_add_with(folder: Path, body: list[str], engine: Engine) -> Verdict:
    """The vector_add template with this kernel, verified on the CPU backend."""
    shutil.copytree(RESOURCES / "kernels" / "vector_add", folder)
    (folder / "vector_add.cu").write_text(HEAD + "".join(body) + "}\n", "utf-8")
    return verify_file(folder / "vector_add.toml", VerifyOptions(backend="cpu"), engine)


@needs_addr2line
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_an_off_by_one_names_the_thread_and_the_line(name: str, tmp_path: Path,
                                                     engine: Engine) -> None:
    verdict = vector_add_with(tmp_path / name, KERNELS[name], engine)
    assert verdict.status == "guard_zone", verdict.message
    line = bug_line((HEAD + "".join(KERNELS[name])).splitlines())
    said = EXPECTED[name].format(line)
    assert said in verdict.message, verdict.message
    first = next(r for r in verdict.runs if not r.passed)
    assert first.message.startswith(said)  # the Results pane's message column
    assert "[pc " not in verdict.describe() and "kernel parameter" not in verdict.message


@needs_addr2line
def test_a_crash_names_its_line(tmp_path: Path, engine: Engine) -> None:
    body = [CORRECT, "    if (i == 0) *(volatile float*)16 = 1.0f;  // BUG\n"]
    verdict = vector_add_with(tmp_path / "null", body, engine)
    assert verdict.status == "crash"
    line = bug_line((HEAD + "".join(body)).splitlines())
    assert (f"write to 0x10 (a null or near-null pointer) in kernel vector_add, block (0, 0, 0), "
            f"thread (0, 0, 0) at vector_add.cu:{line}") in verdict.message, verdict.message


TRANSPOSE = """\
extern "C" __global__ void transpose(const float* x, float* y, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row <= rows && col < cols) {  // should be row < rows
        float v = x[row * cols + col];
        y[col * rows + row] = v;
    }
}
"""


def transpose_with(folder: Path, engine: Engine) -> Verdict:
    """The transpose template with a naive kernel whose row bound is off by one, one case of
    5 x 3 in 4 x 4 blocks."""
    shutil.copytree(RESOURCES / "kernels" / "transpose", folder)
    (folder / "transpose.cu").write_text(TRANSPOSE, "utf-8")
    spec = folder / "transpose.toml"
    text = spec.read_text("utf-8")
    text = text.replace('grid = ["cdiv(cols, 32)", "cdiv(rows, 32)"]',
                        'grid = ["cdiv(cols, 4)", "cdiv(rows, 4)"]')
    text = text.replace('block = ["32", "8"]', 'block = ["4", "4"]')
    head, _, rest = text.partition("cases = [")
    spec.write_text(head + "cases = [{ rows = 5, cols = 3 }]" + rest.split("]", 1)[1], "utf-8")
    return verify_file(spec, VerifyOptions(backend="cpu"), engine)


@needs_addr2line
def test_a_2d_off_by_one_names_the_row_and_column(tmp_path: Path, engine: Engine) -> None:
    verdict = transpose_with(tmp_path / "transpose", engine)
    assert verdict.status == "guard_zone", verdict.message
    # Row 5 of a 5-row x: block (0, 1) holds rows 4..7, its thread (0, 1) is row 5, column 0.
    # It reads x[5, 0] (line 6) before it writes y: the first access outside a buffer.
    assert ("thread (0, 1, 0) of block (0, 1, 0) read x[5, 0] at transpose.cu:6, past the end "
            "of x (15 elements, 5 x 3)") in verdict.message, verdict.message
    # The normal run's own finding still says which elements of y changed outside it.
    finding = next(f for r in verdict.runs for f in r.findings if f.kind == "guard_zone")
    assert finding.buffer == "y" and "index 15 of y" in finding.message


def test_a_fault_line_reads_back_as_an_access() -> None:
    line = ("the worker died (signal SIGSEGV): kernel-studio cpu backend: illegal memory access: "
            "write to 0x7f7544000010 (16 bytes before the allocation of kernel parameter 2, "
            "beyond its guard zone) in kernel k, block (3, 1, 0), thread (31, 7, 0) "
            "[pc kernel-0123456789abcdef01234567.so+0x1325]")
    access = faults.outside_access(line)
    assert access is not None
    assert (access.param, access.bytes, access.before, access.write) == (2, 16, True, True)
    assert (access.block, access.thread) == ((3, 1, 0), (31, 7, 0))
    assert access.line is None  # no such library in the cache: nothing is read, nothing named
    assert faults.without_pc(line).endswith("thread (31, 7, 0)")


@pytest.mark.parametrize(("edge", "distance", "before", "offset"), [
    ("exact", 0, False, 4092),  # the first byte past 1023 floats
    ("end", 0, False, 4096),    # the data's end rounded up to 16 bytes: c[1023] was reachable
    ("start", 4, True, -4),     # c[-1]
    ("", 8, False, 4092 + 4096 + 8),  # past the verifier's own 4 KiB guard zone
    ("", 1, True, -4096 - 1),
])
def test_a_reported_distance_is_counted_from_the_data(edge: str, distance: int, before: bool,
                                                      offset: int) -> None:
    from app.engine.worker.backends.cpu import memory
    assert memory.from_data_start(edge, 4092 + 2 * 4096, 4096, distance, before) == offset
