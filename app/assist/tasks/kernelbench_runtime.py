"""Running a KernelBench problem file at chosen sizes: the file's size constants (module-level
`name = number`, and the numbers of `name = (number, ...)`, called `name_0`, `name_1`...) are
replaced by a case's values before the file runs, so that every constant derived from them
(`bias_shape = (out_channels, 1, 1)`) and get_inputs/get_init_inputs follow; so are the sizes
written as numbers in get_inputs' tensors (`torch.rand(batch_size, 3, 224, 224)`: the two 224s
are `get_inputs_0` and `get_inputs_1`; numbers below LITERAL_SIZE, channels say, are not sizes).

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


def unpacked(node: ast.stmt) -> list[ast.stmt]:
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
    pieces = unpacked(statement)
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


LITERAL_SIZE = 16
FACTORIES = frozenset({"rand", "randn", "randint", "zeros", "ones", "empty", "full"})


def _size_arguments(call: ast.Call) -> list[ast.expr]:
    """The arguments of a tensor factory that give its size (not randint's bounds, not
    full's value)."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name not in FACTORIES:
        return []
    given = [k.value for k in call.keywords if k.arg == "size"]
    if name == "randint":
        return given + list(call.args[2:3] if len(call.args) >= 3 else call.args[1:2])
    return given + list(call.args[:1] if name == "full" else call.args)


def input_literals(tree: ast.Module) -> list[ast.Constant]:
    """The sizes written as numbers in get_inputs' tensor factories, in the order they are
    written."""
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef)
                     and n.name == "get_inputs"), None)
    found: list[ast.Constant] = []
    for node in ast.walk(function) if function else ():
        if isinstance(node, ast.Call):
            for argument in _size_arguments(node):
                elements = argument.elts if isinstance(argument, ast.Tuple | ast.List) else [
                    argument]
                found += [e for e in elements if isinstance(e, ast.Constant) and type(
                    e.value) is int and e.value >= LITERAL_SIZE]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def problem_module(path: Path | str, overrides: dict[str, int]) -> types.ModuleType:
    """The problem file run as a module of its own, its sizes set to `overrides`."""
    location = Path(path)
    tree = ast.parse(location.read_text(encoding="utf-8-sig"), filename=location.name)
    for index, node in enumerate(input_literals(tree)):
        node.value = overrides.get(f"get_inputs_{index}", node.value)
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


# The last Model built, by its sizes, with its state as built: a warm reference process serves
# every seed of a case, and building a level-3 Model is most of a call's time. One only: such
# a Model may be large.
_BUILT: dict[tuple[tuple[str, int], ...], tuple[Any, dict[str, Any]]] = {}


def model_at(path: Path | str, sizes: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    """The problem's Model built at these sizes, and a copy of its state as built."""
    key = tuple(sorted(sizes.items()))
    if key not in _BUILT:
        _BUILT.clear()
        model = built_model(problem_module(path, sizes))
        _BUILT[key] = (model, {k: v.detach().clone() for k, v in model.state_dict().items()})
    return _BUILT[key]


def forward_outputs(path: Path | str, sizes: list[str], inputs: list[tuple[str, str, bool]],
                    weights: dict[str, tuple[str, str]], outputs: list[str],
                    arguments: dict[str, Any]) -> dict[str, Any]:
    """What the reference returns: forward's outputs by name, the Model built at the sizes
    the arguments give, its state as built (what the Model keeps for itself: masks, tables)
    with the weights the verifier drew loaded over it, run as KernelBench runs it (in training
    mode, seeded) on the inputs in forward's order. `inputs`: (argument, torch dtype, 0-d);
    `weights`: argument -> (state key, torch dtype)."""
    import torch

    model, initial = model_at(path, {name: int(arguments[name]) for name in sizes})
    state = dict(initial)
    for name, (key, dtype) in weights.items():
        state[key] = as_tensor(arguments[name], dtype).reshape(initial[key].shape)
    model.load_state_dict(state)
    tensors = [arguments[name] if dtype in ("int", "float")
               else as_tensor(arguments[name], dtype).reshape(()) if zero_d
               else as_tensor(arguments[name], dtype) for name, dtype, zero_d in inputs]
    torch.manual_seed(0)
    with torch.no_grad():
        returned = outputs_of(model(*tensors))
    if len(returned) != len(outputs):
        raise ValueError(f"forward returned {len(returned)} tensors where the task has "
                         f"{len(outputs)} outputs")
    return {name: as_array(tensor) for name, tensor in zip(outputs, returned, strict=True)}
