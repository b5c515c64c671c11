"""A KernelBench problem from elsewhere, as a person takes it through the app (issue 25, point 2):
`import kernelbench`, `spec-check`, then an evaluation whose answer is verified against the
problem's own PyTorch forward. The model is scripted (what it would say is not under test);
the importer, the spec-check, the attempt folders and the verifier are the real ones."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from app.assist.evaluation.grade import EvalSettings, Evaluation, arms_for
from app.assist.model.batch import Request
from app.assist.tasks.suite import load_task
from tests.assist.scripted import ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        """Scales, then bounds to [-2, 2]."""
        def __init__(self, factor):
            super().__init__()
            self.factor = factor

        def forward(self, t):
            return torch.clamp(t * self.factor, min=-2.0, max=2.0)


    height = 300
    width = 1000

    def get_inputs():
        return [torch.randn(height, width)]

    def get_init_inputs():
        return [1.5]
''')


def bounded_body(request: Request) -> str:
    """The right kernel's body, written against the argument names the prefix declares."""
    names = request.prefix.split("(", 1)[1]
    source, out = (part.split()[-1].strip("*") for part in names.split(",")[:2])
    return ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < height * width) {out}[i] = fminf(fmaxf({source}[i] * 1.5f, -2.0f), "
            "2.0f);\n}\n")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kernel-studio ARGS as a user runs it."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)


def test_an_imported_problem_is_spec_checked_and_evaluated_against_its_forward(
        tmp_path: Path) -> None:
    problem = tmp_path / "level1" / "77_Scale_Bound.py"
    problem.parent.mkdir()
    problem.write_text(PROBLEM)
    imported = cli("import", "kernelbench", str(problem), "--out", str(tmp_path / "tasks"))
    assert imported.returncode == 0, imported.stderr
    spec_path = next((tmp_path / "tasks").rglob("*.toml"))
    checked = cli("spec-check", str(spec_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    task = load_task(spec_path)
    settings = EvalSettings(tasks=[task], run_dir=tmp_path / "run", arms=arms_for("off", "off"),
                            k=1, rounds=1, backend="cpu", heldout=frozenset())
    result = Evaluation(ScriptedModel(bounded_body), settings).run().as_dict()
    outcome = result["outcomes"]["skills-off+examples-off"][0]
    assert outcome["passed"] == 1, result
    attempt = next((tmp_path / "run").rglob(spec_path.name)).parent
    assert (attempt / "problem.py").read_text() == problem.read_text()
