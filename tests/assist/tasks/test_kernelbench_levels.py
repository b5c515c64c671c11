"""KernelBench problems of every level (written here, tests/assist/tasks/kernelbench_problems.py)
imported in one go: their weights become inputs drawn as the Model draws them, their sizes are
the file's, and each task's reference, run in the sandbox as verify runs it, gives what the
problem's own Model gives for the same inputs and weights."""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import import_problems
from app.assist.tasks.suite import load_task
from app.engine.verify.buffers import generate_inputs
from app.engine.verify.reference import expected_outputs, load_reference
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file
from app.spec.cases import resolve
from app.spec.model import Spec
from tests.assist.tasks.kernelbench_problems import ALL

GEMM_GELU = '''extern "C" __global__ void kb_12_gemm_gelu_scale(
    const float* x, const float* w, const float* b, float* out,
    int batch_size, int in_features, int out_features)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= batch_size * out_features) return;
    int row = i / out_features, col = i % out_features;
    float s = BIAS;
    for (int k = 0; k < in_features; ++k) s += x[row * in_features + k] * w[col * in_features + k];
    out[i] = 0.5f * s * (1.0f + erff(s * 0.70710678f)) * 1.5f;
}
'''

# Derived dims (pooling), a number in get_inputs, unpacked sizes and a bias shape, weights and
# batch norm in a network.
SAMPLE = ("42_Max_Pool_Strided", "23_Softmax_Wide", "5_Conv2d_Tanh_AddBias", "8_Tiny_ConvNet")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every problem imported, by its name (one sandboxed probe for all of them)."""
    root = tmp_path_factory.mktemp("kernelbench")
    paths = []
    for name, text in ALL.items():
        path = root / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        paths.append(path)
    found = import_problems(paths, root / "tasks")
    refused = [f"{p.name}: {r}" for p, r in zip(paths, found, strict=True)
               if isinstance(r, Refused)]
    assert not refused, refused
    return {name.split("/")[1]: spec for name, spec in zip(ALL, found, strict=True)
            if isinstance(spec, Path)}


def _args(spec: Spec) -> dict[str, Any]:
    """The spec's args by name."""
    return {a.name: a for a in spec.args}


def _load(path: Path) -> Any:
    """A Python file as a module, here: the problems are ours, and so the references run in
    this process (the sandboxed run is what verify does, below and in the workflow test)."""
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def _sized(text: str, case: dict[str, int]) -> str:
    """One of our problem texts with its sizes set to a case's, edited as text (not as the
    importer's runtime does it): `name = 7`, `a = b = 7`, `a, b = 7, 9`, `name = (7, 9)` for
    name_0 and name_1, and the k-th number of at least 16 in get_inputs for get_inputs_k."""
    text = re.sub(r"^(\w+) = (\w+) = (\d+)$", r"\1 = \3\n\2 = \3", text, flags=re.M)
    text = re.sub(r"^(\w+), (\w+) = (\d+), (\d+)$", r"\1 = \3\n\2 = \4", text, flags=re.M)
    for name, value in case.items():
        plain = re.compile(rf"^{name} = \d+$", re.M)
        element = re.fullmatch(r"(\w+)_(\d+)", name)
        if plain.search(text):
            text = plain.sub(f"{name} = {value}", text)
        elif element and element[1] == "get_inputs":
            head, body = text.split("def get_inputs", 1)
            numbers = [m for m in re.finditer(r"\b\d+\b", body) if int(m[0]) >= 16]
            where = numbers[int(element[2])]
            text = f"{head}def get_inputs{body[:where.start()]}{value}{body[where.end():]}"
        elif element and re.search(rf"^{element[1]} = \(", text, re.M):
            line = re.search(rf"^{element[1]} = \((.*)\)$", text, re.M)
            assert line is not None
            parts = [p.strip() for p in line[1].split(",")]
            parts[int(element[2])] = str(value)
            text = text.replace(line[0], f"{element[1]} = ({', '.join(parts)})")
        else:
            assert "_dim" in name, f"the test cannot set {name}"  # a dim the Model gives
    return text


def _own_outputs(problem: Path, spec: Spec, inputs: dict[str, Any]) -> list[Any]:
    """The problem's own Model at the sizes its file says, its state set to the drawn weights,
    run by this test without the task's reference (the file is ours: it may run here)."""
    module = _load(problem)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    own = model.state_dict()
    names = {key.replace(".", "_"): key for key in own}
    model.load_state_dict({names[n]: torch.from_numpy(v).reshape(own[names[n]].shape)
                           for n, v in inputs.items() if n in names}, strict=False)
    forward = [a.name for a in spec.args if a.kind == "in" and a.name not in names]
    with torch.no_grad():
        returned = model(*(torch.from_numpy(inputs[n]) for n in forward))
    return list(returned) if isinstance(returned, tuple) else [returned]


def test_every_level_imports_and_matches_the_problems_own_forward(
        imported: dict[str, Path]) -> None:
    for name, spec_path in imported.items():
        spec = load_task(spec_path).spec()
        resolved = resolve(spec, spec.bench_case or spec.cases[0])  # the file's own sizes
        inputs = generate_inputs(spec, resolved, seed=1, case_index=0)
        expected = _load(spec_path.parent / f"{spec_path.stem}_ref.py").reference(
            **inputs, **resolved.scalars)
        outputs = [a.name for a in spec.args if a.kind == "out"]
        own = _own_outputs(spec_path.parent / "problem.py", spec, inputs)
        for out, tensor in zip(outputs, own, strict=True):
            assert np.allclose(expected[out].reshape(tensor.shape), tensor.numpy(),
                               atol=1e-5), name


def test_the_reference_as_verify_runs_it_matches_forward_at_each_verify_case(
        imported: dict[str, Path], tmp_path: Path) -> None:
    """At the scaled-down cases verify runs, the reference in its sandboxed process gives what
    the problem's forward gives once this test has written the case's sizes into the file (a
    sample of every level: a reference process takes seconds to start)."""
    for name in SAMPLE:
        spec_path = imported[name]
        spec = load_task(spec_path).spec()
        problem = (spec_path.parent / "problem.py").read_text()
        with load_reference(spec.reference_path, spec.base_dir) as reference:
            for index, case in enumerate(spec.cases):
                resolved = resolve(spec, case)
                inputs = generate_inputs(spec, resolved, seed=3, case_index=index)
                expected = expected_outputs(reference, spec, resolved, inputs)
                sized = tmp_path / f"{spec_path.stem}_{index}.py"
                sized.write_text(_sized(problem, dict(case)))
                own = _own_outputs(sized, spec, inputs)
                for out, tensor in zip(expected, own, strict=True):
                    assert np.allclose(expected[out].reshape(tensor.shape), tensor.numpy(),
                                       atol=1e-5), (name, case)


def test_weights_are_inputs_drawn_as_the_model_draws_them(imported: dict[str, Path]) -> None:
    conv = _args(load_task(imported["5_Conv2d_Tanh_AddBias"]).spec())
    bound = f"{1 / math.sqrt(5 * 3 * 3):.9g}"
    assert conv["conv_weight"].init == f"uniform(-{bound}, {bound})"
    assert conv["conv_weight"].shape == ("out_channels", "5", "3", "3")  # 5: never scaled
    # torch.randn(...) * 0.1 is no generator's own draw: described by its 8 values' range.
    assert conv["bias"].init.startswith(("normal(", "uniform(-0."))
    assert conv["bias"].shape[1:] == ("1", "1")
    net = _args(load_task(imported["8_Tiny_ConvNet"]).spec())
    assert net["features_0_bn_weight"].init == "ones"
    assert net["features_0_bn_running_var"].init == "ones"
    assert net["features_0_act_weight"].init == "full(0.25)"
    mixer = _args(load_task(imported["44_Tiny_Token_Mixer"]).spec())
    assert mixer["embed_weight"].init == "normal" and "causal" not in mixer
    assert mixer["tokens"].init == "randint(0, 50)" and {"out0", "out1"} <= set(mixer)
    pool = load_task(imported["42_Max_Pool_Strided"]).spec()
    assert [a.name for a in pool.args if a.kind == "in"] == ["x"]


def test_sizes_come_from_the_files_constants_and_scale_down(imported: dict[str, Path]) -> None:
    loss = load_task(imported["96_Smooth_L1_Shaped"]).spec()
    assert _args(loss)["predictions"].shape == ("batch_size", "input_shape_0", "input_shape_1")
    assert loss.bench_case == {"batch_size": 64, "input_shape_0": 12, "input_shape_1": 20}
    net = load_task(imported["8_Tiny_ConvNet"]).spec()
    assert net.bench_case["num_classes"] == 10 and net.bench_case["width"] == 8
    assert min(case["image_size"] for case in net.cases) < net.bench_case["image_size"]
    wide = load_task(imported["23_Softmax_Wide"]).spec()  # 300: a number in get_inputs
    assert wide.bench_case == {"batch_size": 16, "get_inputs_0": 300}
    assert all(case["get_inputs_0"] < 300 for case in wide.cases)
    norm = load_task(imported["31_Group_Norm_Affine"]).spec()
    assert all(case["features"] % 4 == 0 for case in norm.cases)  # its groups still divide it


def test_a_level_2_kernel_written_by_hand_verifies(imported: dict[str, Path]) -> None:
    spec_path = imported["12_Gemm_GELU_Scale"]
    kernel = spec_path.with_suffix(".cu")
    kernel.write_text(GEMM_GELU.replace("BIAS", "b[col]"))
    verdict = verify_file(spec_path, VerifyOptions(backend="cpu"))
    assert verdict.passed, verdict.describe()
    kernel.write_text(GEMM_GELU.replace("BIAS", "0.0f"))
    assert verify_file(spec_path, VerifyOptions(backend="cpu")).status == "mismatch"


def test_the_description_says_what_the_model_is_built_with(imported: dict[str, Path]) -> None:
    """The Model's source alone does not say a pooling's window or a layer's widths: they come
    from get_init_inputs, so the description says them (a size that is a kernel argument is
    named as one; a Model built with nothing gets no such sentence)."""
    pool = load_task(imported["42_Max_Pool_Strided"]).description
    assert "The Model is built as Model(kernel_size, stride, padding) (get_init_inputs), with " \
           "kernel_size = 3, stride = 2, padding = 1." in pool
    gemm = load_task(imported["12_Gemm_GELU_Scale"]).description
    assert re.search(r"Model\(in_features, out_features, scale\) \(get_init_inputs\), with "
                     r"in_features \(the int32 argument\), out_features \(the int32 argument\), "
                     r"scale = [0-9.]+\.", gemm), gemm
    assert "The Model is built as" not in load_task(imported["23_Softmax_Wide"]).description
