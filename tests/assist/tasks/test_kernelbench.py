"""`kernel-studio import kernelbench`: problem files written here in KernelBench's format (a torch
Model with forward, get_inputs and get_init_inputs) become task folders whose reference runs the
problem's own Model, weights loaded, and a right kernel passes while a wrong one fails; what
does not map is refused with the reason; a problem file runs only inside the sandbox."""

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


def test_a_problem_runs_only_inside_the_sandbox(tmp_path: Path) -> None:
    """A file that writes beside itself when it runs: the import runs it only in the sandbox,
    which sees no such folder, so nothing is written and the reason is one line."""
    marker = tmp_path / "ran"
    hostile = SCALE_CLAMP.replace("rows = 512", f"rows = 512\nopen({str(marker)!r}, 'w')\n"
                                  f"import os\nos.system('touch {marker}')")
    done = subprocess.run([sys.executable, "-m", "app", "import", "kernelbench",
                           str(_write(tmp_path, "hostile", hostile)), "--out",
                           str(tmp_path / "tasks")], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)
    assert done.returncode == 2 and not marker.exists()
    assert "not imported: the problem does not run: FileNotFoundError" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kernel-studio import kernelbench ARGS, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "app", "import", "kernelbench", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)


@pytest.mark.parametrize("sizes", [
    "rows = 2**64\ncols = rows**64\n", "big = 2**62\nrows = big * big * big\ncols = 3\n",
    "rows = 64 // 0\ncols = 3\n", "rows = 2.5**300.0**9\ncols = 3\n"])
def test_size_arithmetic_is_bounded(tmp_path: Path, sizes: str) -> None:
    """A constant that cannot be a size is read quickly and is no size to scale."""
    text = SCALE_CLAMP.replace("rows = 512\ncols = 2048 * 3\n", sizes)
    assert "rows" not in read_problem(_write(tmp_path, "sizes", text)).sizes.values


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


def test_randint_int32_inputs_map(tmp_path: Path) -> None:
    text = SCALE_CLAMP.replace("x = torch.randn(rows, cols)",
                               "x = torch.randint(0, 10, (rows, cols), dtype=torch.int32)")
    text = text.replace("torch.clamp(x * self.scale, min=-1.0, max=1.0)", "torch.abs(x)")
    spec = load_task(import_problem(_write(tmp_path, "ints", text), tmp_path / "tasks")).spec()
    assert [a.dtype for a in spec.args[:2]] == ["int32", "int32"]
    with pytest.raises(Refused, match="does not run: RuntimeError"):
        import_problem(_write(tmp_path, "bad", SCALE_CLAMP.replace(
            "torch.randn(rows, cols)", "torch.randn(rows, cols, dtype=torch.int32)")),
            tmp_path / "tasks")


def test_a_1d_task_has_a_case_larger_than_two_blocks(tmp_path: Path) -> None:
    text = SCALE_CLAMP.replace("x = torch.randn(rows, cols)", "x = torch.randn(cols)")
    spec_path = import_problem(_write(tmp_path, "vector", text), tmp_path / "tasks")
    spec = load_task(spec_path).spec()
    assert max(case["cols"] for case in spec.cases) > 2 * 256
    done = subprocess.run([sys.executable, "-m", "app", "spec-check", str(spec_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=240, check=False)
    assert "caught   first_block" in done.stdout, done.stdout + done.stderr




def _elu_kernel(negative: str) -> str:
    """An ELU kernel for SCALE_CLAMP's shapes whose negative branch is `negative`."""
    return ('extern "C" __global__ void kb_elu_like(const float* __restrict__ x,\n'
            '                                  float* __restrict__ out, int rows, int cols)\n'
            "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < rows * cols) {{\n        float v = x[i];\n"
            f"        out[i] = v > 0.0f ? v : {negative};\n    }}\n}}\n")


def test_inputs_drawn_from_zero_to_one_are_verified_on_negative_values_where_forward_is_finite(
        tmp_path: Path) -> None:
    """torch.rand's [0, 1) inputs: an ELU whose negative branch is wrong passes there, so the
    import draws them from [-1, 1) where the forward is finite, and says so; a forward that is
    not finite there (a log) keeps [0, 1)."""
    elu = SCALE_CLAMP.replace("x = torch.randn(rows, cols)", "x = torch.rand(rows, cols)")
    elu = elu.replace("torch.clamp(x * self.scale, min=-1.0, max=1.0)",
                      "torch.nn.functional.elu(x)")
    spec_path = import_problem(_write(tmp_path, "elu_like", elu), tmp_path / "tasks")
    text = spec_path.read_text()
    assert 'init = "uniform(-1, 1)"' in text and "right for negative values" in text
    kernel = spec_path.parent / "kb_elu_like.cu"
    kernel.write_text(_elu_kernel("expm1f(v)"))
    verdict = verify_file(spec_path, VerifyOptions(backend="cpu"))
    assert verdict.passed, verdict.describe()
    kernel.write_text(_elu_kernel("v"))  # the identity: right on [0, 1) only
    assert verify_file(spec_path, VerifyOptions(backend="cpu")).status == "mismatch"

    logged = elu.replace("torch.nn.functional.elu(x)", "torch.log(x)")
    kept = import_problem(_write(tmp_path, "log_like", logged), tmp_path / "tasks").read_text()
    assert 'init = "uniform"' in kept and "negative values" not in kept


SQUARE_PRODUCT = HEADER + textwrap.dedent('''\
    class Model(nn.Module):
        """Lower triangle of a product of square matrices."""
        def __init__(self):
            super().__init__()

        def forward(self, A, B):
            return torch.tril(A @ B)

    M = 40

    def get_inputs():
        return [torch.tril(torch.randn(M, M)), torch.tril(torch.randn(M, M))]

    def get_init_inputs():
        return []
    ''')


def test_a_product_of_square_matrices_is_checked_as_a_sum_of_many_terms(tmp_path: Path) -> None:
    # out has its inputs' shape, so only the forward's source says that each element sums M
    # products (in another order than PyTorch's): 1e-4, as for other products and weights.
    spec = load_task(import_problem(_write(tmp_path / "p", "1_Tril", SQUARE_PRODUCT),
                                    tmp_path / "tasks")).spec()
    assert (spec.rtol, spec.atol) == (1e-4, 1e-4)
    same_shape = SQUARE_PRODUCT.replace("torch.tril(A @ B)", "torch.tril(A * B)")
    spec = load_task(import_problem(_write(tmp_path / "q", "2_Tril", same_shape),
                                    tmp_path / "tasks2")).spec()
    assert (spec.rtol, spec.atol) == (None, None)  # element-wise: the dtype's defaults
    # In half precision the defaults (1e-2) already hold a sum's rounding; 1e-4 would fail a
    # correct kernel by one rounding of its output.
    half = SQUARE_PRODUCT.replace("torch.randn(M, M))", "torch.randn(M, M)).half()")
    spec = load_task(import_problem(_write(tmp_path / "h", "3_Tril", half),
                                    tmp_path / "tasks3")).spec()
    assert spec.args[0].dtype == "float16" and (spec.rtol, spec.atol) == (None, None)
