"""`kernel-studio import kernelbench`: problem files written here in KernelBench's format (a torch
Model with forward, get_inputs, get_init_inputs) become tasks whose specs and references agree
with PyTorch (a kernel written for each passes the real verifier on the CPU backend, the
reference running the Model in verify's sandbox); problems that do not map are refused with the
reason; a problem file is never run at import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import import_problem, read_problem
from app.assist.tasks.suite import load_task
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file

ROOT = Path(__file__).resolve().parents[3]
HEADER = "import torch\nimport torch.nn as nn\n\n"

SCALE_CLAMP = HEADER + textwrap.dedent('''
    class Model(nn.Module):
        """Scales its input, then clamps it to [-1, 1]."""
        def __init__(self, scale: float):
            super().__init__()
            self.scale = scale

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            """The scaled, clamped tensor."""
            return torch.clamp(x * self.scale, min=-1.0, max=1.0)

    rows = 512
    cols = 2048 * 3

    def get_inputs():
        x = torch.randn(rows, cols)
        return [x]

    def get_init_inputs():
        return [0.75]
''')
SCALE_CLAMP_KERNEL = '''extern "C" __global__ void kb_scale_clamp(const float* __restrict__ x,
                                         float* __restrict__ out, int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        out[i] = fminf(fmaxf(x[i] * 0.75f, -1.0f), 1.0f);
    }
}
'''
MEAN_LAST = HEADER + textwrap.dedent('''
    class Model(nn.Module):
        """Mean over one dimension."""
        def __init__(self, dim: int):
            super().__init__()
            self.dim = dim

        def forward(self, x):
            return torch.mean(x, dim=self.dim)

    batch = 16
    rows = 256
    cols = 4095
    which = -1

    def get_inputs():
        return [torch.rand(batch, rows, cols)]

    def get_init_inputs():
        return [which]
''')
MEAN_LAST_KERNEL = '''extern "C" __global__ void kb_mean_last(const float* __restrict__ x,
                                       float* __restrict__ out, int batch, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < batch * rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            s += x[(size_t)r * cols + c];
        }
        out[r] = s / cols;
    }
}
'''
MATMUL_BT = HEADER + textwrap.dedent('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, A, B):
            return torch.matmul(A, B.T)

    M = 1024
    K = 4096
    N = 2048

    def get_inputs():
        A = torch.rand(M, K)
        B = torch.rand(N, K)
        return [A, B]

    def get_init_inputs():
        return []
''')


def _write(folder: Path, name: str, text: str) -> Path:
    """A problem file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("name", "problem", "kernel"), [
    ("scale_clamp", SCALE_CLAMP, SCALE_CLAMP_KERNEL),
    ("mean_last", MEAN_LAST, MEAN_LAST_KERNEL)])
def test_a_mapped_problem_judges_a_right_kernel_as_pytorch_does(
        tmp_path: Path, name: str, problem: str, kernel: str) -> None:
    spec_path = import_problem(_write(tmp_path / "level1", name, problem), tmp_path / "tasks")
    task = load_task(spec_path)
    assert task.level == 1 and "kernelbench" in task.tags
    assert (spec_path.parent / "problem.py").read_text() == problem
    spec = task.spec()
    assert all(0 < v <= 257 for case in spec.cases for v in case.values() if v != -1)
    (spec_path.parent / f"kb_{name}.cu").write_text(kernel)
    verdict = verify_file(spec_path, VerifyOptions(backend="cpu"))
    assert verdict.passed, verdict.describe()
    wrong = kernel.replace("0.75f", "0.7f").replace("s / cols", "s / (cols + 1)")
    (spec_path.parent / f"kb_{name}.cu").write_text(wrong)
    assert verify_file(spec_path, VerifyOptions(backend="cpu")).status == "mismatch"


def test_shapes_are_read_from_the_expression(tmp_path: Path) -> None:
    mean = read_problem(_write(tmp_path, "mean_last", MEAN_LAST))
    assert mean.output_shape == ("batch", "rows") and mean.exact
    assert mean.sizes == {"batch": 16, "rows": 256, "cols": 4095}
    product = read_problem(_write(tmp_path, "matmul_bt", MATMUL_BT))
    assert product.output_shape == ("M", "N") and product.exact
    clamp = read_problem(_write(tmp_path, "scale_clamp", SCALE_CLAMP))
    assert "0.75" in clamp.returned and "self" not in clamp.returned
    argmax = MEAN_LAST.replace("torch.mean(x, dim=self.dim)", "torch.argmax(x, dim=self.dim)")
    assert read_problem(_write(tmp_path, "argmax", argmax)).output_dtype == "int64"


@pytest.mark.parametrize(("change", "reason"), [
    (("self.scale = scale", "self.linear = nn.Linear(4, 4)"), "learned weights"),
    (("return torch.clamp(x * self.scale, min=-1.0, max=1.0)",
      "y = x * self.scale\n        return y"), "more than return one expression"),
    (("return torch.clamp(x * self.scale, min=-1.0, max=1.0)",
      "return torch.fft.fft(x)"), "fft"),
    (("return torch.clamp(x * self.scale, min=-1.0, max=1.0)", "return x, x"),
     "cannot tell the shape"),
    (("x = torch.randn(rows, cols)", "x = torch.ones(rows, cols)"), "torch.rand"),
    (("class Model(nn.Module):", "class Net(nn.Module):"), "no class Model"),
    (("def get_inputs():", "def get_inputs(:"), "not Python"),
])
def test_what_does_not_map_is_refused_with_the_reason(tmp_path: Path, change: tuple[str, str],
                                                       reason: str) -> None:
    text = SCALE_CLAMP.replace(*change)
    assert text != SCALE_CLAMP
    with pytest.raises(Refused, match=reason):
        read_problem(_write(tmp_path, "problem", text))


def test_level_2_problems_are_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="level-2 problem"):
        read_problem(_write(tmp_path / "level2", "fused", SCALE_CLAMP))


def test_a_problem_is_never_run_at_import(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hostile = SCALE_CLAMP.replace("rows = 512", f"rows = 512\nopen({str(marker)!r}, 'w')\n"
                                  f"import os\nos.system('touch {marker}')")
    done = subprocess.run([sys.executable, "-m", "app", "import", "kernelbench",
                           str(_write(tmp_path, "hostile", hostile)), "--out",
                           str(tmp_path / "tasks")], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "imported hostile.py as the task" in done.stdout


def test_the_command_refuses_with_exit_2_and_the_reason(tmp_path: Path) -> None:
    text = SCALE_CLAMP.replace("self.scale = scale", "self.conv = nn.Conv2d(3, 3, 3)")
    done = subprocess.run([sys.executable, "-m", "app", "import", "kernelbench",
                           str(_write(tmp_path, "conv", text)), "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 2
    assert "not imported: the Model has learned weights (nn.Conv2d(...)" in done.stderr


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kernel-studio import kernelbench ARGS, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "app", "import", "kernelbench", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)


@pytest.mark.parametrize(("sizes", "reason"), [
    ("rows = 2**64\ncols = rows**64\n", "too large"),
    ("big = 2**62\nrows = big * big * big\ncols = 3\n", "too large"),
    ("rows = 10**18 << 1\ncols = 3\n", "not written with numbers"),
    ("rows = 64 // 0\ncols = 3\n", "divides by zero"),
    ("rows = 2.5**300.0**9\ncols = 3\n", "too large"),
])
def test_size_arithmetic_is_bounded(tmp_path: Path, sizes: str, reason: str) -> None:
    text = SCALE_CLAMP.replace("rows = 512\ncols = 2048 * 3\n", sizes)
    with pytest.raises(Refused, match=reason):
        read_problem(_write(tmp_path, "sizes", text))


@pytest.mark.parametrize("expression", [
    "x" + " + x" * 3000, "-" * 3000 + "x", "(" * 150 + "x" + ")" * 150])
def test_deep_nesting_is_refused_not_a_traceback(tmp_path: Path, expression: str) -> None:
    text = SCALE_CLAMP.replace("torch.clamp(x * self.scale, min=-1.0, max=1.0)", expression)
    done = _cli(str(_write(tmp_path, "deep", text)), "--out", str(tmp_path / "tasks"))
    assert done.returncode in (0, 2), done.stderr
    assert "Traceback" not in done.stderr
    if done.returncode == 2:
        assert "too deeply nested" in done.stderr or "not Python" in done.stderr


def test_a_deep_size_expression_is_refused(tmp_path: Path) -> None:
    text = SCALE_CLAMP.replace("cols = 2048 * 3", "cols = " + "-" * 5000 + "3")
    done = _cli(str(_write(tmp_path, "deep", text)), "--out", str(tmp_path / "tasks"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def test_only_regular_files_of_bounded_size_are_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    with pytest.raises(Refused, match="not a regular file"):
        import_problem(fifo, tmp_path / "tasks")
    with pytest.raises(Refused, match="not a regular file"):
        import_problem(Path("/dev/zero"), tmp_path / "tasks")
    huge = _write(tmp_path, "huge", SCALE_CLAMP + "#" * (1 << 20))
    with pytest.raises(Refused, match="more than the"):
        import_problem(huge, tmp_path / "tasks")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + SCALE_CLAMP.encode())
    spec_path = import_problem(bom, tmp_path / "tasks")
    assert (spec_path.parent / "problem.py").read_text() == SCALE_CLAMP


def test_an_unusable_out_is_refused_with_exit_2(tmp_path: Path) -> None:
    problem = str(_write(tmp_path, "clamp", SCALE_CLAMP))
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for out in (a_file, Path("/proc/kernel_studio_nowhere")):
        done = _cli(problem, "--out", str(out), "--json")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "cannot write the task folder" in json.loads(done.stdout)["refused"]


def test_reimport_keeps_the_users_edits_unless_forced(tmp_path: Path) -> None:
    problem = _write(tmp_path, "clamp", SCALE_CLAMP)
    spec_path = import_problem(problem, tmp_path / "tasks")
    spec_path.write_text("# edited by the user\n")
    done = _cli(str(problem), "--out", str(tmp_path / "tasks"))
    assert done.returncode == 2 and "--force" in done.stderr
    assert str(spec_path.parent) in done.stderr
    assert spec_path.read_text() == "# edited by the user\n"
    assert _cli(str(problem), "--out", str(tmp_path / "tasks"), "--force").returncode == 0
    assert load_task(spec_path).spec().cases


@pytest.mark.parametrize(("change", "reason"), [
    (("x = torch.randn(rows, cols)", "x = torch.randn(())"), "0-d tensors are not mapped"),
    (("def forward(self, x: torch.Tensor)", "def forward(self, out: torch.Tensor)"),
     "`out` has a name the task itself uses"),
    (("def forward(self, x: torch.Tensor)", "def forward(self, torch)"), "`torch`"),
    (("def forward(self, x: torch.Tensor)", "def forward(self, rows)",
      "x * self.scale", "rows * self.scale"), "name of a size"),
    (("rows = 512", "rows = -512"), "not a positive int32"),
    (("rows = 512", "rows = True"), "boolean"),
    (("rows = 512", "rows = 2**40"), "not a positive int32"),
    (("rows = 512", "rows = 64 // 0"), "divides by zero"),
    (("rows = 512", "rows = 5.0"), "not written with numbers"),
    (("x = torch.randn(rows, cols)", "x = torch.randn(rows, cols - 6144)"), "at least 1"),
])
def test_what_the_app_would_reject_is_never_written(tmp_path: Path, change: tuple[str, ...],
                                                    reason: str) -> None:
    text = SCALE_CLAMP
    for old, new in zip(change[::2], change[1::2], strict=True):
        text = text.replace(old, new)
    assert text != SCALE_CLAMP
    with pytest.raises(Refused, match=reason):
        import_problem(_write(tmp_path, "problem", text), tmp_path / "tasks")
    assert not (tmp_path / "tasks").exists()


def test_randint_int32_inputs_map(tmp_path: Path) -> None:
    text = SCALE_CLAMP.replace("x = torch.randn(rows, cols)",
                               "x = torch.randint(0, 10, (rows, cols), dtype=torch.int32)")
    text = text.replace("torch.clamp(x * self.scale, min=-1.0, max=1.0)", "torch.abs(x)")
    spec = load_task(import_problem(_write(tmp_path, "ints", text), tmp_path / "tasks")).spec()
    assert [a.dtype for a in spec.args[:2]] == ["int32", "int32"]
    with pytest.raises(Refused, match="do not map"):
        read_problem(_write(tmp_path, "bad", SCALE_CLAMP.replace(
            "torch.randn(rows, cols)", "torch.randn(rows, cols, dtype=torch.int32)")))


def test_a_1d_task_has_a_case_larger_than_two_blocks(tmp_path: Path) -> None:
    text = SCALE_CLAMP.replace("x = torch.randn(rows, cols)", "x = torch.randn(cols)")
    spec_path = import_problem(_write(tmp_path, "vector", text), tmp_path / "tasks")
    spec = load_task(spec_path).spec()
    assert max(case["cols"] for case in spec.cases) > 2 * 256
    done = subprocess.run([sys.executable, "-m", "app", "spec-check", str(spec_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=240, check=False)
    assert "caught   first_block" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(("expression", "reason"), [
    ("torch.norm(x, 2)", "clamp"),
    ("torch.sum(x, dim=5)", "not a dim of a 2-d tensor"),
    ("torch.matmul(x, x)", "inner dims differ"),
    ("torch.sigmoid(x)", "integer tensor gives floats"),
    ("x / 2", "turns integer tensors into floats"),
])
def test_guesses_are_refused(tmp_path: Path, expression: str, reason: str) -> None:
    text = SCALE_CLAMP.replace("torch.clamp(x * self.scale, min=-1.0, max=1.0)", expression)
    if reason in ("integer tensor gives floats", "turns integer tensors into floats"):
        text = text.replace("torch.randn(rows, cols)", "torch.randint(0, 9, (rows, cols))")
    if reason == "clamp":
        assert read_problem(_write(tmp_path, "norm", text)).output_shape == ("1",)
        return
    with pytest.raises(Refused, match=reason):
        read_problem(_write(tmp_path, "guess", text))
    norm = SCALE_CLAMP.replace("torch.clamp(x * self.scale, min=-1.0, max=1.0)",
                               "torch.norm(x, 2, 1)")
    assert read_problem(_write(tmp_path, "norm", norm)).output_shape == ("rows",)
