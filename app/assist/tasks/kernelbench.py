"""KernelBench problems as tasks. A problem is a Python file with a torch `Model` (its `forward`),
`get_inputs()` and `get_init_inputs()`. It is read as text (Python's ast), never run here: the
spec's arguments come from the tensors get_inputs builds, the output's shape from a small
analysis of forward's one returned expression, and the reference runs the problem's Model on
the host, only when verify runs it, under verify's rules (in the sandbox, or where none can be
had only if the user trusts it).

What maps: a level-1 problem whose Model has no learned weights, whose forward returns one
tensor computed by one expression of known shape (elementwise and activation functions,
softmax and scans along a dim, reductions over a dim, matrix products), and whose inputs are
tensors from torch.rand/randn/randint with sizes written as numbers. Everything else is refused
with the reason.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_PROBLEM_BYTES = 1 << 20
# Verify cases are scaled down from the problem's sizes (which fill gigabytes) to at most this
# many elements per input; the problem's own sizes become the [bench] case.
MAX_CASE_ELEMENTS = 1 << 18
SMALL_SIZES = (3, 5, 7, 11, 13, 17)
MEDIUM_SIZES = (67, 131, 257, 37, 61, 29)
UNARY = frozenset("""relu sigmoid tanh exp exp2 log log2 log1p expm1 abs sqrt rsqrt neg negative
sin cos erf sign square reciprocal gelu silu elu selu celu softplus softsign leaky_relu hardtanh
hardsigmoid hardswish mish relu6 clamp clip logsigmoid tanhshrink softshrink hardshrink
threshold""".split())
ALONG_DIM = frozenset({"softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"})
REDUCE = frozenset({"sum", "mean", "amax", "amin", "prod", "max", "min", "argmax", "argmin",
                    "logsumexp", "std", "var", "norm"})
INDEX_RESULTS = frozenset({"argmax", "argmin"})
MATMUL = frozenset({"matmul", "mm", "bmm"})
# Names the task's spec (out) and reference (its modules and locals) use for themselves.
RESERVED = frozenset({"out", "torch", "np", "numpy", "tensors", "value", "built_model",
                      "importlib", "Path", "INIT_INPUTS", "INPUTS", "reference", "self"})
INITS = {"rand": "uniform(0, 1)", "randn": "normal"}
DTYPES = {"float32": "float32", "float": "float32", "float16": "float16", "half": "float16",
          "bfloat16": "bfloat16"}
INT_DTYPES = {"int32": "int32", "int": "int32", "int64": "int64", "long": "int64"}
# Size arithmetic stops here: sizes are int32 scalars, and a file must not make us compute
# numbers with millions of digits (2**64**64...) before we can say no.
MAX_VALUE = 1 << 63
ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


class Refused(ValueError):
    """A problem that does not map to a task; the message says why."""


class BadSize(Refused):
    """A size constant whose value cannot be a size (too large, a division by zero): refused
    outright, not skipped as a constant that is not a number."""


@dataclass(frozen=True)
class Tensor:
    """One input of get_inputs: its name in forward, its shape (expressions over the problem's
    size variables), how it is drawn and its dtype."""

    name: str
    shape: tuple[str, ...]
    init: str
    dtype: str = "float32"


@dataclass
class Problem:
    """What the file says, read without running it."""

    stem: str
    doc: str
    returned: str
    inputs: list[Tensor]
    sizes: dict[str, int]
    init_inputs: list[Any]
    output_shape: tuple[str, ...]
    output_dtype: str = "float32"
    exact: bool = False
    # Sizes that get_init_inputs passes to the Model too: scaling them would change the Model.
    fixed: frozenset[str] = frozenset()


def literal(node: ast.AST, constants: dict[str, Any]) -> Any:
    """The value of a literal or of arithmetic over numbers and known constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool | str):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        if isinstance(constants[node.id], BadSize):
            raise constants[node.id]
        return constants[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = literal(node.operand, constants)
        if not isinstance(value, int | float):
            raise Refused(f"`{ast.unparse(node)}` negates what is not a number")
        return -value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult |
                                                  ast.FloorDiv | ast.Pow):
        left, right = literal(node.left, constants), literal(node.right, constants)
        return _arith(node.op, left, right)
    if isinstance(node, ast.Tuple | ast.List):
        return [literal(e, constants) for e in node.elts]
    raise Refused(f"`{ast.unparse(node)}` is not a number written in the file")


def _arith(op: ast.operator, left: Any, right: Any) -> Any:
    """One arithmetic step on numbers, every operand and result bounded by MAX_VALUE."""
    if not all(isinstance(v, int | float) for v in (left, right)):
        raise Refused("sizes must be numbers")
    left, right = _bounded(left), _bounded(right)
    if isinstance(op, ast.FloorDiv) and right == 0:
        raise BadSize("a size divides by zero")
    if isinstance(op, ast.Pow) and _power_too_large(left, right):
        raise BadSize("a size is too large (its power exceeds 2**63)")
    try:
        result = ARITHMETIC[type(op)](left, right)
    except (OverflowError, ZeroDivisionError) as error:
        raise BadSize(f"a size cannot be computed: {error}") from None
    return _bounded(result)


def _power_too_large(left: Any, right: Any) -> bool:
    """Whether left ** right would exceed MAX_VALUE, decided before computing it."""
    return bool(right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > 63)


def _bounded(value: Any) -> Any:
    """The value, unless it is beyond any size."""
    if not isinstance(value, int | float):
        raise BadSize("a size is not a real number")  # a negative number's fractional power
    if abs(value) > MAX_VALUE:
        raise BadSize("a size is too large (beyond 2**63)")
    return value


def constants_of(tree: ast.Module) -> dict[str, Any]:
    """Module-level NAME = number assignments, in order; a size that cannot be one is kept as
    its BadSize, raised where it is used (an unused one harms nothing)."""
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = literal(node.value, constants)
            except BadSize as error:
                constants[node.targets[0].id] = error
            except Refused:
                continue
    return constants


def function_named(tree: ast.Module | ast.ClassDef, name: str) -> ast.FunctionDef:
    """A def of that name at this level."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    where = "Model" if isinstance(tree, ast.ClassDef) else "the file"
    raise Refused(f"{where} has no {name}(): not a KernelBench problem")


def model_class(tree: ast.Module) -> ast.ClassDef:
    """class Model."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return node
    raise Refused("the file has no class Model: not a KernelBench problem")


def returned_expression(function: ast.FunctionDef) -> ast.expr:
    """The one expression a function returns (its docstring aside)."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(
        s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise Refused(f"{function.name}() does more than return one expression: only "
                      "single-operator problems map (level 1)")
    return body[0].value


def call_name(node: ast.expr) -> str:
    """'relu' for torch.relu, F.relu, torch.nn.functional.relu, nn.functional.relu."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def refuse_weights(model: ast.ClassDef) -> None:
    """Refuse a Model that builds layers or parameters: their weights are not inputs."""
    init = next((n for n in model.body if isinstance(n, ast.FunctionDef)
                 and n.name == "__init__"), None)
    for node in ast.walk(init) if init else ():
        if isinstance(node, ast.Call):
            text = ast.unparse(node.func)
            if re.match(r"^(torch\.)?nn\.", text) and not text.endswith("Module.__init__"):
                raise Refused(f"the Model has learned weights ({text}(...) in __init__): their "
                              "values are not inputs, so no spec can say what the kernel gets")


def attributes_of(model: ast.ClassDef, init_inputs: list[Any]) -> dict[str, Any]:
    """self.attr values set in __init__ from its parameters (bound to get_init_inputs)."""
    init = next((n for n in model.body if isinstance(n, ast.FunctionDef)
                 and n.name == "__init__"), None)
    if init is None:
        return {}
    names = [a.arg for a in init.args.args[1:]]
    defaults = init.args.defaults
    bound = dict(zip(names[len(names) - len(defaults):],
                     (literal(d, {}) for d in defaults), strict=True))
    bound.update(zip(names, init_inputs, strict=False))
    values: dict[str, Any] = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "self":
                try:
                    values[target.attr] = literal(node.value, bound)
                except Refused:
                    continue
    return values


def _size_expression(node: ast.AST, constants: dict[str, Any]) -> str:
    """A shape entry as a spec expression over the problem's size variables."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return str(node.value)
    if isinstance(node, ast.Name) and isinstance(constants.get(node.id), BadSize):
        raise BadSize(f"the size {node.id}: {constants[node.id]}")
    if isinstance(node, ast.Name) and isinstance(constants.get(node.id), bool):
        raise Refused(f"the size {node.id} is a boolean ({constants[node.id]}), not a number")
    if isinstance(node, ast.Name) and isinstance(constants.get(node.id), int):
        return node.id
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult |
                                                  ast.FloorDiv):
        symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//"}[type(node.op)]
        return (f"({_size_expression(node.left, constants)} {symbol} "
                f"{_size_expression(node.right, constants)})")
    raise Refused(f"the size `{ast.unparse(node)}` is not written with numbers and size names")


def _tensor(name: str, call: ast.expr, constants: dict[str, Any]) -> Tensor:
    """One input tensor from its torch.rand/randn/randint call."""
    kind = call_name(call.func) if isinstance(call, ast.Call) else ""
    if not isinstance(call, ast.Call) or kind not in (*INITS, "randint"):
        raise Refused(f"input {name} is not made by torch.rand, torch.randn or torch.randint")
    args, dtype = list(call.args), ""
    for keyword in call.keywords:
        if keyword.arg == "dtype":
            dtype = _dtype(name, kind, call_name(keyword.value), ast.unparse(keyword.value))
        elif keyword.arg == "size":
            args.append(keyword.value)
    if kind == "randint":
        if len(args) != 3:
            raise Refused(f"input {name}: torch.randint(low, high, size) expected")
        low, high = (literal(a, constants) for a in args[:2])
        dims = args[2].elts if isinstance(args[2], ast.Tuple | ast.List) else [args[2]]
        init, dtype = f"randint({low}, {high})", dtype or "int64"
    else:
        one = len(args) == 1 and isinstance(args[0], ast.Tuple | ast.List)
        dims = args[0].elts if one else args  # type: ignore[attr-defined]
        init, dtype = INITS[kind], dtype or "float32"
    if not dims:
        raise Refused(f"input {name} is a 0-d tensor: 0-d tensors are not mapped (give it a "
                      "size, e.g. torch.rand(1))")
    return Tensor(name, tuple(_size_expression(d, constants) for d in dims), init, dtype)


def _dtype(name: str, kind: str, written: str, text: str) -> str:
    """The spec dtype of an input's dtype= (integers only from randint, as torch allows)."""
    found = INT_DTYPES.get(written, "") if kind == "randint" else DTYPES.get(written, "")
    if not found:
        raise Refused(f"input {name} has dtype {text}, which Kernel Studio's specs do not map "
                      f"for torch.{kind}")
    return found


def inputs_of(tree: ast.Module, forward: ast.FunctionDef,
            constants: dict[str, Any]) -> list[Tensor]:
    """get_inputs' tensors, named as forward's parameters, in order."""
    function = function_named(tree, "get_inputs")
    made: dict[str, ast.expr] = {}
    for node in function.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            made[node.targets[0].id] = node.value
    returned = function.body[-1]
    if not isinstance(returned, ast.Return) or not isinstance(returned.value, ast.List):
        raise Refused("get_inputs() must end with `return [tensor, ...]`")
    params = [a.arg for a in forward.args.args[1:]]
    if len(params) != len(returned.value.elts):
        raise Refused(f"forward takes {len(params)} input(s) but get_inputs returns "
                      f"{len(returned.value.elts)}")
    _refuse_reserved(params)
    tensors = []
    for param, item in zip(params, returned.value.elts, strict=True):
        call = made.get(item.id, item) if isinstance(item, ast.Name) else item
        tensors.append(_tensor(param, call, constants))
    return tensors


def _refuse_reserved(params: list[str]) -> None:
    """Refuse forward parameters named like the task's output (out) or the modules and locals
    its reference uses: the spec or the reference would mean something else by them."""
    for param in params:
        if param in RESERVED:
            raise Refused(f"forward's parameter `{param}` has a name the task itself uses "
                          f"({', '.join(sorted(RESERVED))}): rename it in the problem file")


def init_inputs_of(tree: ast.Module, constants: dict[str, Any]) -> list[Any]:
    """get_init_inputs' values (numbers only)."""
    function = function_named(tree, "get_init_inputs")
    returned = function.body[-1]
    if not isinstance(returned, ast.Return) or returned.value is None:
        raise Refused("get_init_inputs() must end with `return [...]`")
    values = literal(returned.value, constants)
    if not isinstance(values, list):
        raise Refused("get_init_inputs() must return a list of numbers")
    return values
