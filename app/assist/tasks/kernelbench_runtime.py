"""Running a KernelBench problem file at chosen sizes: the file's size constants (module-level
`name = number`, and the numbers of `name = (number, ...)`, called `name_0`, `name_1`...) are
replaced by a case's values before the file runs, so that every constant derived from them
(`bias_shape = (out_channels, 1, 1)`) and get_inputs/get_init_inputs follow.

This module is the part of an imported task's reference that is not generated: its text is
written into each reference file (a reference is self-contained), and the import's probe
imports it. It needs only the standard library, NumPy and torch, and it runs only inside the
reference process (the sandbox), never in the app.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path
from typing import Any


def _replaced(name: str, value: ast.expr, overrides: dict[str, int]) -> ast.expr:
    """The value `name` gets at these sizes: the override, or a tuple with its elements'."""
    if name in overrides:
        return ast.Constant(overrides[name])
    if isinstance(value, ast.Tuple | ast.List):
        elements = [ast.Constant(overrides[f"{name}_{i}"]) if f"{name}_{i}" in overrides
                    else element for i, element in enumerate(value.elts)]
        return type(value)(elts=elements, ctx=ast.Load())
    return value


def _unpacked(node: ast.stmt) -> list[ast.stmt]:
    """`D, H, W = 16, 32, 32` as three assignments; any other statement as it is."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple) and len(
            node.targets[0].elts) == len(node.value.elts) and all(
            isinstance(t, ast.Name) for t in node.targets[0].elts):
        return [ast.Assign(targets=[target], value=value)
                for target, value in zip(node.targets[0].elts, node.value.elts, strict=True)]
    return [node]


def _overridden(statement: ast.stmt, overrides: dict[str, int]) -> list[ast.stmt]:
    """A module-level statement with the sizes replaced (`a = b = 7` and `a, b = 7, 7` become
    two statements, so that a and b can differ)."""
    pieces = _unpacked(statement)
    if len(pieces) > 1 and any(_overridden(piece, overrides) != [piece] for piece in pieces):
        return [s for piece in pieces for s in _overridden(piece, overrides)]
    node = statement
    if not isinstance(node, ast.Assign) or not all(isinstance(t, ast.Name) for t in node.targets):
        return [node]
    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
    if not any(n in overrides or f"{n}_0" in overrides for n in names):
        return [node]
    return [ast.Assign(targets=[ast.Name(name, ast.Store())],
                       value=_replaced(name, node.value, overrides)) for name in names]


def problem_module(path: Path | str, overrides: dict[str, int]) -> types.ModuleType:
    """The problem file run as a module of its own, its sizes set to `overrides`."""
    location = Path(path)
    tree = ast.parse(location.read_text(encoding="utf-8-sig"), filename=location.name)
    tree.body = [s for node in tree.body for s in _overridden(node, overrides)]
    module = types.ModuleType("kernelbench_problem")
    module.__file__ = str(location)
    code = compile(ast.fix_missing_locations(tree), str(location), "exec")
    exec(code, module.__dict__)  # noqa: S102 - the problem file, in the reference's sandbox
    return module


def built_model(module: types.ModuleType, seed: int = 0) -> Any:
    """The problem's Model, built with get_init_inputs() as KernelBench builds it (seeded, so
    that anything random it keeps outside its state, an initial hidden state say, repeats)."""
    import torch

    torch.manual_seed(seed)
    return module.Model(*module.get_init_inputs())


def as_tensor(array: Any, dtype: str) -> Any:
    """A NumPy array from the verifier as the torch tensor the Model expects (`dtype`: the
    tensor's torch dtype name; bfloat16 arrives as ml_dtypes' bfloat16, bool as uint8)."""
    import numpy as np
    import torch

    array = np.ascontiguousarray(array)
    if dtype == "bfloat16":
        return torch.from_numpy(array.view(np.uint16)).view(torch.bfloat16)
    tensor = torch.from_numpy(array)
    return tensor.bool() if dtype == "bool" else tensor


def as_array(tensor: Any) -> Any:
    """An output tensor as a NumPy array the verifier reads (bool as uint8, bfloat16 as
    float32: the verifier rounds it to the buffer's dtype)."""
    import torch

    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bool:
        tensor = tensor.to(torch.uint8)
    elif tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def outputs_of(returned: Any) -> list[Any]:
    """forward's result as a list of tensors (one tensor, or a tuple or list of them)."""
    return list(returned) if isinstance(returned, tuple | list) else [returned]
