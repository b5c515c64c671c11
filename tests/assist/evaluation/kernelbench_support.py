"""KernelBench problems written here in KernelBench's format (a Model, its sizes, get_inputs,
get_init_inputs), imported through the real importer, and the right kernels for them: what the
tests of KernelBench's measures share (tests/engine/bench/test_torch_forward*.py too)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from app.assist.model.batch import Request

ROOT = Path(__file__).resolve().parents[3]

RELU = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        """Simple model that performs a ReLU activation."""
        def __init__(self):
            super(Model, self).__init__()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x)


    batch_size = 4096
    dim = 4096

    def get_inputs():
        x = torch.randn(batch_size, dim)
        return [x]

    def get_init_inputs():
        return []
''')

SCALE_BOUND = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        """Scales, then bounds to [-2, 2]."""
        def __init__(self, factor):
            super().__init__()
            self.factor = factor

        def forward(self, t):
            return torch.clamp(t * self.factor, min=-2.0, max=2.0)


    height = 2048
    width = 4096

    def get_inputs():
        return [torch.randn(height, width)]

    def get_init_inputs():
        return [1.5]
''')

PROBLEMS = {"19_ReLU": RELU, "77_Scale_Bound": SCALE_BOUND}
# The right kernels, named as the importer names tasks and arguments.
KERNELS = {
    "kb_19_relu": ('extern "C" __global__ void kb_19_relu(const float* x, float* out, '
                   "int batch_size, int dim) {\n" + "    long long i = (long long)blockIdx.x * "
                   "blockDim.x + threadIdx.x;\n    if (i < (long long)batch_size * dim) out[i] "
                   "= fmaxf(x[i], 0.0f);\n}\n"),
    "kb_77_scale_bound": ('extern "C" __global__ void kb_77_scale_bound(const float* t, '
                          "float* out, int height, int width) {\n    long long i = (long long)"
                          "blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < (long long)height"
                          " * width) out[i] = fminf(fmaxf(t[i] * 1.5f, -2.0f), 2.0f);\n}\n"),
}


def cli(*args: str, env: dict[str, str] | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """kernel-studio ARGS as a user runs it."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, check=False, env=env)


def import_problem(tmp_path: Path, stem: str, with_kernel: bool = True) -> Path:
    """Write a problem file, import it with `kernel-studio import kernelbench`, and (with
    `with_kernel`) put its right kernel beside the spec; the spec's path."""
    source = tmp_path / "level1" / f"{stem}.py"
    source.parent.mkdir(exist_ok=True)
    source.write_text(PROBLEMS[stem])
    done = cli("import", "kernelbench", str(source), "--out", str(tmp_path / "tasks"))
    assert done.returncode == 0, done.stdout + done.stderr
    spec = next(p for p in (tmp_path / "tasks").rglob("*.toml") if stem.lower() in str(p))
    if with_kernel:
        (spec.parent / f"{spec.stem}.cu").write_text(KERNELS[spec.stem])
    return spec


def body_of(kernel: str) -> str:
    """A kernel's body after its opening brace (what a model writes after the prefix)."""
    return kernel.split("{", 1)[1]


def right_body(request: Request) -> str:
    """The right body for whichever of the two tasks the prompt's prefix declares, written
    against the argument names the prefix uses."""
    names = request.prefix.split("(", 1)[1]
    source, out = (part.split()[-1].strip("*") for part in names.split(",")[:2])
    if "kb_19_relu(" in request.prefix:
        expression = f"fmaxf({source}[i], 0.0f)"
        count = "batch_size * dim"
    else:
        expression = f"fminf(fmaxf({source}[i] * 1.5f, -2.0f), 2.0f)"
        count = "height * width"
    return ("    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < (long long){count}) {out}[i] = {expression};\n}}\n")


def relu_only_body(request: Request) -> str:
    """Right for ReLU, wrong (no bound) for the other task: one correct problem of two."""
    if "kb_19_relu(" in request.prefix:
        return right_body(request)
    names = request.prefix.split("(", 1)[1]
    source, out = (part.split()[-1].strip("*") for part in names.split(",")[:2])
    return ("    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < (long long)height * width) {out}[i] = {source}[i] * 1.5f;\n}}\n")
