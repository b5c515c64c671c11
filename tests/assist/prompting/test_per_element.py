"""The glossary's per-element line: where an imported problem's forward returns one element-wise
expression over inputs of out's shape, or reduces or scans one tensor along a dim, the line
written into a kernel as a model would copy it is what PyTorch computes (verified on the CPU
backend against the problem's own forward, on signed inputs): compositions of the glossary's
calls, math's constants folded, comparisons and torch.where/lerp/maximum over two inputs,
integers; sums, arg-reductions, max(...)[0] and masked scans along a dim, negative dims too;
matrix products with either side transposed, batched, or a triangle of them; temporaries named
before the return are read in. A forward that softmaxes, flips, names an unknown dim, multiplies
what the line cannot spell or does more than return one expression gets no line."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from app.assist.prompting import per_element
from app.assist.tasks.kernelbench_folder import import_problem
from app.assist.tasks.suite import load_task
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file
from app.spec.model import Spec

C_TYPES = {"float32": "float", "int32": "int", "int64": "long long", "uint8": "unsigned char",
           "float16": "__half", "bfloat16": "__nv_bfloat16"}


def _problem(init: str, forward: str, inputs: str, init_inputs: str = "[]") -> str:
    scale = "self.scale = scale" if "scale" in init else \
        "self.dim = dim" if "dim" in init else "pass"
    return textwrap.dedent(f'''\
        import math
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Model(nn.Module):
            """A forward of one expression."""
            def __init__(self{init}):
                super().__init__()
                self.w = 0.25
                self.k = 3
                {scale}

            def forward({forward}


        rows = 24
        cols = 40


        def get_inputs():
            return {inputs}


        def get_init_inputs():
            return {init_inputs}
        ''')


FLOATS = "[torch.randn(rows, cols) * 3.0, torch.randn(rows, cols)]"
PROBLEMS = {
    "Swish_Softplus": ("", "self, x):\n                return x * torch.sigmoid(x) + 0.5 * "
                       "F.softplus(x, beta=2.0)", "[torch.randn(rows, cols) * 3.0]"),
    "New_GELU": ("", "self, x: torch.Tensor) -> torch.Tensor:\n                \"\"\"GELU, tanh "
                 "form.\"\"\"\n                return 0.5 * x * (1.0 + torch.tanh(math.sqrt("
                 "2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))",
                 "[torch.randn(rows, cols) * 3.0]"),
    "Where_Lerp": (", scale: float = 2.0", "self, a, b):\n                return torch.where("
                   "a > b, torch.lerp(a, b, self.w), (a - b) ** 2 / self.scale + "
                   "torch.abs(b))", FLOATS, "[4.0]"),
    "Sum_Dim1_Keepdim": ("", "self, x):\n                return torch.sum(x, dim=1, "
                         "keepdim=True)", "[torch.randn(4, 6, 5)]"),
    "Argmin_Last": (", dim: int = -1", "self, x):\n                return torch.argmin(x, "
                    "dim=self.dim)", "[torch.randn(4, 6, 5)]"),
    "Max_Values": ("", "self, x):\n                return torch.max(x, 2)[0]",
                   "[torch.randn(4, 6, 5)]"),
    "Cumprod_Dim0_Masked": ("", "self, x, mask):\n                return torch.cumprod(x * "
                            "mask, dim=0)", "[torch.randn(rows, cols), (torch.rand(rows, cols) "
                            "> 0.3).float()]"),
    "Int_Max": ("", "self, a, b):\n                return torch.maximum(a, b) * self.k + 1 - "
                "torch.abs(a)", "[torch.randint(-50, 50, (rows, cols), dtype=torch.int32), "
                "torch.randint(-50, 50, (rows, cols), dtype=torch.int32)]"),
    # Temporaries named before the return, one reading another, with comments among them.
    "Temporaries_RMS": ("", "self, x):\n                # the mean square along dim 1\n"
                        "                ms = torch.mean(x ** 2, dim=1, keepdim=True)\n"
                        "                rms = torch.sqrt(ms + 1e-5)  # never 0\n"
                        "                return x / rms", "[torch.randn(4, 6, 5)]"),
}


def _kernel(spec: Spec, line: str) -> str:
    """The kernel a model copying the line writes: one thread per element of out."""
    params = []
    for arg in spec.args:
        if arg.is_buffer:
            const = "" if arg.is_output else "const "
            params.append(f"{const}{C_TYPES[arg.dtype]}* __restrict__ {arg.name}")
        else:
            params.append(f"int {arg.name}")
    out = next(a for a in spec.args if a.is_output)
    total = " * ".join(str(s) for s in out.shape)
    dtypes = {a.dtype for a in spec.args}
    includes = "".join(f"#include <{h}>\n" for d, h in (("float16", "cuda_fp16.h"),
                                                        ("bfloat16", "cuda_bf16.h")) if d in dtypes)
    return (f'{includes}extern "C" __global__ void {spec.entry}({", ".join(params)})\n{{\n'
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < {total}) {{\n        {re.sub(r'^- per element[^:]*: ', '', line)}\n"
            "    }\n}\n")


def _copied_line_verifies(tmp_path: Path, name: str, source: str) -> str:
    """Import the problem, take its one per-element line, write it into a kernel and verify
    that against the problem's forward on the CPU backend; the line."""
    problem = tmp_path / "level1" / f"1_{name}.py"
    problem.parent.mkdir()
    problem.write_text(source)
    spec_path = import_problem(problem, tmp_path / "tasks")
    task = load_task(spec_path)
    lines = [x for x in per_element.hints(task.description) if x.startswith("- per element")]
    assert len(lines) == 1, per_element.hints(task.description)
    spec = task.spec()
    (spec_path.parent / spec.source).write_text(_kernel(spec, lines[0]))
    verdict = verify_file(spec_path, VerifyOptions(backend="cpu"))
    assert verdict.passed, lines[0] + "\n" + verdict.describe()
    return lines[0]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_line_copied_into_a_kernel_is_what_pytorch_computes(tmp_path: Path,
                                                                 name: str) -> None:
    line = _copied_line_verifies(tmp_path, name, _problem(*PROBLEMS[name]))
    if name == "Where_Lerp":  # the constructor's value, not its default
        assert "/ 4.0f" in line and "0.25f" in line


def test_the_line_is_in_the_tensors_dtype() -> None:
    description = ("Compute what the Model's forward gives for the inputs u (float16, shape n), "
                   "into out (float16, shape n). The Model (problem.py): class Model(nn.Module):"
                   " def forward(self, u): return torch.relu(u) * 2")
    assert per_element.hints(description)[-1] == \
        "- per element: out[i] = __float2half(fmaxf(__half2float(u[i]), 0.0f) * 2.0f);"


def test_comments_before_the_return_are_passed_over() -> None:
    description = ("Compute what the Model's forward gives for the inputs u (float32, shape n), "
                   "into out (float32, shape n). The Model (problem.py): class Model(nn.Module):"
                   " def forward(self, u): \"\"\"Doubles.\"\"\" # in place would be faster "
                   "# but u is an input return torch.relu(u) * 2")
    assert per_element.hints(description)[-1] == "- per element: out[i] = fmaxf(u[i], 0.0f) * 2.0f;"


def _has_no_line(inputs: str, out_shape: str, forward: str) -> bool:
    """Whether a Model of this forward, over these inputs, gets no per-element line."""
    description = (f"Compute what the Model's forward gives for the inputs {inputs}, into out "
                   f"(float32, shape {out_shape}). The Model (problem.py): class Model(nn.Module):"
                   f" def __init__(self): super().__init__() {forward}")
    return not any(x.startswith("- per element") for x in per_element.hints(description))


@pytest.mark.parametrize("forward", [
    "def forward(self, x, y): return x * y",  # y broadcasts: another shape
    "def forward(self, x): return torch.sum(x, dim=self.unknown)",
    "def forward(self, x): for k in range(3): x = x * 2 return x",
    "def forward(self, x): x += 1 return x * 2",
    "def forward(self, x): y, z = torch.chunk(x, 2) return y * 2",
    "def forward(self, x): # old: y = x * 2 return torch.relu(x)",  # y: a comment's words
    "def forward(self, x): return torch.relu(x) * self.unknown",
    "def forward(self, x): return torch.cumsum(x, dim=1) - x",  # a scan, then x itself
    "def forward(self, x): return torch.cumsum(x.flip(0), dim=0).flip(0)",
    "def forward(self, x): return torch.relu(x) + 0.5 ... (the rest is in problem.py)",
])
def test_a_forward_that_is_not_one_element_wise_expression_gets_no_line(forward: str) -> None:
    assert _has_no_line("x (float32, shape r x c) and y (float32, shape c)", "r x c", forward)


def _matmul_problem(forward: str, inputs: str) -> str:
    return textwrap.dedent(f'''\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            """Matrix products."""
            def __init__(self):
                super().__init__()

            def forward(self, A, B):
                return {forward}


        M = 5
        K = 7
        N = 6
        b = 3
        k = 4


        def get_inputs():
            return {inputs}


        def get_init_inputs():
            return []
        ''')


# (forward, inputs): transposes on either side (.T, .t(), .transpose), a batch with a size
# named like the loop's index (KernelBench's bmm), a batch of any leading dims times a matrix,
# a triangle kept, math applied to a product or a reduction, half precision.
MATMULS = {
    "Transposed_Both": ("torch.mm(A.transpose(0, 1), B.transpose(-2, -1))",
                        "[torch.randn(K, M), torch.randn(N, K)]"),
    "Batched_Size_k": ("torch.bmm(A, B)", "[torch.randn(b, M, k), torch.randn(b, k, N)]"),
    "Leading_Dims": ("torch.matmul(A, B)", "[torch.randn(b, M, K), torch.randn(K, N)]"),
    "Upper": ("torch.triu(torch.matmul(A, B))", "[torch.randn(M, K), torch.randn(K, M)]"),
    "Relu_Scaled_Transposed": ("torch.relu(A.T @ B.t()) * 2.0",
                               "[torch.randn(K, M), torch.randn(N, K)]"),
    "Half_Batched_Tanh": ("torch.tanh(torch.bmm(A, B))", "[torch.randn(b, M, K).half(), "
                          "torch.randn(b, K, N).half()]"),
    "Sum_Over_Size_k_Halved": ("torch.sum(A * B, dim=2) * 0.5",
                               "[torch.randn(b, M, k), torch.randn(b, M, k)]"),
    "LogSoftmax_Minus_L2_Normalized": (
        "torch.log_softmax(A, dim=1) - B / torch.norm(B, p=2, dim=1, keepdim=True)",
        "[torch.randn(b, M, k), torch.randn(b, M, k)]"),
    "Bf16_Max_Over_b": ("torch.amax(A - B, dim=0)", "[torch.randn(b, M, k).bfloat16(), "
                        "torch.randn(b, M, k).bfloat16()]"),
}


@pytest.mark.parametrize("name", sorted(MATMULS))
def test_a_matrix_products_line_copied_into_a_kernel_is_what_pytorch_computes(
        tmp_path: Path, name: str) -> None:
    line = _copied_line_verifies(tmp_path, name, _matmul_problem(*MATMULS[name]))
    kind = "reads its own line" if "Normalized" in name else \
        "reduces one line" if "_Over_" in name else "one row times one column"
    assert kind in line


@pytest.mark.parametrize("forward", [
    "torch.softmax(x, dim=1) + y.sum(dim=0, keepdim=True)",  # two dims
    "x / torch.norm(x, 1, dim=1, keepdim=True)",  # p given by position: maybe not 2
    "x / x.sum(dim=1)",  # without keepdim it broadcasts otherwise
    "torch.softmax(x - x.mean(dim=1, keepdim=True), dim=1)",  # a statistic inside one
    "torch.softmax(x, dim=1, dtype=torch.float64)",
])
def test_a_line_statistic_the_line_cannot_spell_gets_no_line(forward: str) -> None:
    assert _has_no_line("x (float32, shape r x c) and y (float32, shape r x c)", "r x c",
                        f"def forward(self, x, y): return {forward}")


def test_the_loops_names_are_not_the_descriptions() -> None:
    """A size n and an output o (teach data has both) would be redeclared by the loop."""
    description = ("Compute what the Model's forward gives for the inputs x (float32, shape m x "
                   "n), into o (float32, shape n). The Model (problem.py): class Model(nn.Module):"
                   " def forward(self, x): return torch.sum(x, dim=0) * 0.5")
    assert per_element.hints(description)[-1] == (
        "- per element (each reduces one line of m): int outer = i / n, inner = i % n; "
        "float s = 0.0f; for (int k = 0; k < m; ++k) s += x[(outer * m + k) * n + inner]; "
        "o[i] = s * 0.5f;")


@pytest.mark.parametrize("forward", [
    "def forward(self, A, B): return torch.matmul(A, B.T)",  # B is (K, N): the sizes disagree
    "def forward(self, A, B): return torch.diag(A) @ B",
    "def forward(self, A, B): return torch.matmul(A, B) + A",  # A read at out's index
    "def forward(self, A, B): return torch.matmul(A, B) * self.unknown",
    "def forward(self, A, B): return torch.bmm(A.transpose(1, 2), B)",  # a batch transposed
])
def test_a_product_the_line_cannot_spell_gets_no_line(forward: str) -> None:
    assert _has_no_line("A (float32, shape M x K) and B (float32, shape K x N)", "M x N",
                        forward)


def test_a_product_whose_out_has_another_shape_gets_no_line() -> None:
    description = ("Compute what the Model's forward gives for the inputs A (float32, shape M x "
                   "K) and B (float32, shape K x N), into out (float32, shape N x M). The Model "
                   "(problem.py): class Model(nn.Module): def forward(self, A, B): "
                   "return torch.matmul(A, B)")
    assert not any(x.startswith("- per element") for x in per_element.hints(description))
    fitting = description.replace("shape N x M", "shape M x N")
    assert per_element.hints(fitting)[-1].startswith("- per element (each sums one row")
