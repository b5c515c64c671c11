"""The compact prompt's glossary of PyTorch calls: each element-wise meaning, written into a
kernel as the model would copy it, is what PyTorch computes on signed inputs (a problem
imported through `import kernelbench`, verified on the CPU backend against its own forward);
constants come from the call and from how the Model is built; a description that names no
PyTorch call gets no glossary, so the project's own tasks are asked as before."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from app.assist.prompting import compact, glossary
from app.assist.tasks.kernelbench_folder import import_problem
from app.assist.tasks.suite import TASKS_DIR, load_task
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file

# One call per line of the forward's stack; constants as a problem would set them.
CALLS = """torch.relu(x) F.relu6(x) F.leaky_relu(x, negative_slope=self.slope) torch.sigmoid(x)
F.logsigmoid(x) torch.tanh(x) F.silu(x) F.mish(x) F.gelu(x) torch.selu(x)
F.elu(x, alpha=self.alpha) F.celu(x, alpha=0.5) F.softplus(x) F.softplus(x, beta=2.0, threshold=1.0)
F.softsign(x) F.hardsigmoid(x) F.hardswish(x) F.hardtanh(x, min_val=-0.5, max_val=0.75)
F.hardshrink(x) F.softshrink(x, 0.3) F.tanhshrink(x) F.threshold(x, 0.1, -2.0)
torch.clamp(x, min=-0.25) x.clamp(-0.3, 0.4) torch.abs(x) torch.exp(x) torch.erf(x)
torch.square(x) torch.neg(x) torch.sign(x) torch.floor(x) torch.pow(x, 3.0) torch.sin(x)
x.relu() torch.expm1(x)""".split()


def _calls() -> list[str]:
    """CALLS joined back into whole calls (the split above cuts at the spaces inside them)."""
    calls, current = [], ""
    for word in CALLS:
        current = f"{current} {word}".strip()
        if current.count("(") == current.count(")"):
            calls.append(current)
            current = ""
    return calls


def _problem(calls: list[str]) -> str:
    stacked = ",\n                ".join(calls)
    return textwrap.dedent(f'''\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Model(nn.Module):
            """Many element-wise activations of one tensor, stacked."""
            def __init__(self, alpha: float = 1.0, slope: float = 0.2):
                super().__init__()
                self.alpha = alpha
                self.slope = slope

            def forward(self, x):
                return torch.stack([
                {stacked}], dim=0)


        rows = 24
        cols = 40


        def get_inputs():
            return [torch.randn(rows, cols) * 3.0]


        def get_init_inputs():
            return [2.5]
        ''')


def _kernel(entry: str, meanings: list[str]) -> str:
    """A kernel that computes the k-th meaning for the k-th slice of the output, with v the
    input's element, as a model copying the glossary would write it."""
    cases = "\n".join(f"        case {k}: r = ({m}); break;" for k, m in enumerate(meanings))
    return (f'extern "C" __global__ void {entry}(const float* __restrict__ x, '
            "float* __restrict__ out, int rows, int cols)\n{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i >= {len(meanings)} * rows * cols) return;\n"
            "    int k = i / (rows * cols);\n    float v = x[i % (rows * cols)];\n"
            "    float r = 0.0f;\n    switch (k) {\n" + cases + "\n    }\n    out[i] = r;\n}\n")


def test_each_element_wise_meaning_is_what_pytorch_computes(tmp_path: Path) -> None:
    calls = _calls()
    problem = tmp_path / "level1" / "1_Stacked_Activations.py"
    problem.parent.mkdir()
    problem.write_text(_problem(calls))
    spec_path = import_problem(problem, tmp_path / "tasks")
    task = load_task(spec_path)
    lines = glossary.hints(task.description, limit=len(calls))
    assert lines[0] == glossary.HEADING
    meanings = dict(line.removeprefix("- `").split("`: ", 1) for line in lines[1:])
    ordered = [meanings[ast.unparse(ast.parse(call))].split("  (")[0] for call in calls]
    assert "0.2f * v" in ordered[2] and "2.5f * (expf(v)" in ordered[10]  # built with 2.5
    kernel = spec_path.parent / task.spec().source
    kernel.write_text(_kernel(task.spec().entry, ordered))
    verdict = verify_file(spec_path, VerifyOptions(backend="cpu"))
    assert verdict.passed, verdict.describe()
    # One meaning wrong (softsign without its absolute value) and the problem says so.
    wrong = [m.replace("fabsf(v)", "v") if "softsign" in c else m for c, m in zip(
        calls, ordered, strict=True)]
    kernel.write_text(_kernel(task.spec().entry, wrong))
    assert verify_file(spec_path, VerifyOptions(backend="cpu")).status == "mismatch"


def test_reductions_name_their_dim_and_a_whole_tensor_reduction_is_one_number() -> None:
    lines = glossary.hints("Compute `torch.sum(x, dim=2)`, then `torch.mean(y)` and "
                           "`torch.matmul(a.T, b)`.")
    text = "\n".join(lines)
    assert "along dim 2" in text and "over all elements divided by their count: one number" \
        in text and "X.T[i][k] is X[k][i]" in text


def test_a_norm_says_which_norm_its_p_makes() -> None:
    """p by keyword or by position; the 2-norm's square root only for p 2 or 'fro'."""
    meanings = {call: glossary.hints(f"Compute `{call}`.")[-1].split("`: ")[1] for call in (
        "torch.norm(x, 1, dim=1)", "torch.norm(x, p=float('inf'), dim=0)",
        "torch.norm(x, p=3, dim=1)", "torch.norm(x, p='fro')", "x.norm(dim=1)")}
    assert meanings == {
        "torch.norm(x, 1, dim=1)": "the sum of fabsf(x) along dim 1",
        "torch.norm(x, p=float('inf'), dim=0)": "the largest fabsf(x) along dim 0",
        "torch.norm(x, p=3, dim=1)": "powf(the sum of powf(fabsf(x), 3) along dim 1, 1.0f / 3)",
        "torch.norm(x, p='fro')": "sqrtf(the sum of x * x over all elements)",
        "x.norm(dim=1)": "sqrtf(the sum of x * x along dim 1)"}


def test_a_model_cut_short_still_gives_its_constants() -> None:
    """An imported problem's Model may be cut off mid-docstring in its description."""
    description = ('The Model is built as Model(3, 2) (get_init_inputs). The Model:\n'
                   'class Model(nn.Module):\n    def __init__(self, k: int, s: int = 1, '
                   'p: int = 1):\n        super().__init__()\n'
                   '        self.pool = nn.MaxPool1d(kernel_size=k, stride=s, padding=p)\n'
                   '    def forward(self, x):\n        """Pools.\n\n        Args:')
    (line,) = glossary.hints(description)[1:]
    assert "o * 2 - 1 + k * 1 for k < 3" in line


def test_the_projects_own_tasks_are_asked_without_a_glossary() -> None:
    for spec_path in sorted(TASKS_DIR.glob("*/*.toml"))[:40]:
        task = load_task(spec_path)
        asked = compact.messages(task.description, spec_path.read_text())[0]["content"]
        assert glossary.HEADING not in asked, spec_path
    asked = compact.messages("out = x * torch.sigmoid(x), batch x dim", "")[0]["content"]
    assert f"{glossary.HEADING}\n- `torch.sigmoid(x)`: 1.0f / (1.0f + expf(-v))" in asked
