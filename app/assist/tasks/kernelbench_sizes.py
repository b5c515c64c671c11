"""A KernelBench file's sizes, read as text: which module-level numbers are sizes, which of them
verify may scale down, and the candidate cases to try (kernelbench_probe runs them).

A size is a module-level `name = number` (`height = width = 128` gives two), a number inside
`name = (number, ...)`, called `name_0`, `name_1`... (so `*input_shape` resolves), or a number
of at least 16 written in a get_inputs tensor's size, `get_inputs_0`... (kernelbench_runtime).
A constant computed from others (`bias_shape = (out_channels, 1, 1)`) is not a size: it
follows them.
Scaled are the sizes get_inputs' tensors are made from, and those get_init_inputs passes that
are named like a width (channels, features, hidden...), never the bounds of a torch.randint (its
values must stay valid indices) nor a kernel size, stride, padding, group or head count.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from app.assist.tasks.kernelbench import Refused, call_name, function_named, literal
from app.assist.tasks.kernelbench_runtime import input_literals, unpacked

SIZE_LIKE = re.compile(r"channel|feature|hidden|class|embd|embed|dim|width|height|depth|"
                       r"length|len$|seq|size|^[nmkl]$|^[NMKL]$|batch|num_input|units",
                       re.IGNORECASE)
# `layer` as a count (num_layers), not as a width (layer_sizes, hidden_layer_sizes).
NOT_SIZE = re.compile(r"kernel|stride|pad|dilation|group|head|layer(?!_?size)|pool|patch|block|"
                      r"expand|"
                      r"reduce|growth|stage|cluster|_dim$|^dim$|scale|factor|padding",
                      re.IGNORECASE)
SMALL = (3, 5, 7, 11, 13, 17, 19, 23)
MEDIUM = (67, 131, 37, 61, 29, 41, 53, 43)
SMALL_EVEN = (8, 16, 32, 24, 16, 8, 32, 24)
MEDIUM_EVEN = (64, 32, 48, 96, 80, 16, 112, 128)
LARGE = (1031, 523, 263, 131)
HALVINGS = 40


@dataclass
class Sizes:
    """The file's sizes: every size's value (in the file's order), the scalable ones, those
    get_inputs depends on."""

    values: dict[str, int] = field(default_factory=dict)
    scalable: list[str] = field(default_factory=list)
    of_inputs: list[str] = field(default_factory=list)


def _numbers(node: ast.expr) -> int | list[int | None] | None:
    """A whole positive number, a tuple of them (None for an element that is not one), or
    None: what a size assignment holds."""
    try:
        value = literal(node, {})
    except Refused:
        return None
    if isinstance(value, list):
        return [v if _whole(v) else None for v in value]
    return value if _whole(value) else None


def _whole(value: object) -> bool:
    """A positive int (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def read_sizes(tree: ast.Module) -> tuple[dict[str, int], dict[str, set[str]]]:
    """Every size with its value, and what each other constant is computed from."""
    values: dict[str, int] = {}
    uses: dict[str, set[str]] = {}
    for statement in tree.body:
        for node in unpacked(statement):
            _read_assignment(node, values, uses)
    return values, uses


def _read_assignment(node: ast.stmt, values: dict[str, int], uses: dict[str, set[str]]) -> None:
    """One module-level statement's sizes (or what a constant is computed from)."""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        found = _numbers(node.value)
        for target in node.targets:
            name = target.id  # type: ignore[attr-defined]
            _forget(values, uses, name)
            if isinstance(found, int):
                values[name] = found
            elif isinstance(found, list):
                parts = {f"{name}_{i}": v for i, v in enumerate(found) if v is not None}
                values.update(parts)
                uses[name] = set(parts)  # a tuple of sizes holds them
            else:
                uses[name] = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}


def _forget(values: dict[str, int], uses: dict[str, set[str]], name: str) -> None:
    """A name assigned again: what it was before no longer counts."""
    uses.pop(name, None)
    values.pop(name, None)
    for key in [k for k in values if k.startswith(f"{name}_") and k[len(name) + 1:].isdigit()]:
        del values[key]


def depends_on(names: set[str], values: dict[str, int], uses: dict[str, set[str]]) -> set[str]:
    """The sizes these names are, hold or are computed from."""
    seen: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        pending += uses.get(name, ())
    return {size for size in values if size in seen}


def _names(node: ast.AST) -> set[str]:
    """The names an expression or function reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _randint_bounds(function: ast.FunctionDef) -> set[str]:
    """The names in the bounds of get_inputs' torch.randint calls."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and call_name(node.func) in ("randint", "randint_like"):
            bounds = node.args[:2] if len(node.args) >= 3 else node.args[:1]
            bounds += [k.value for k in node.keywords if k.arg in ("low", "high")]
            for bound in bounds:
                names |= _names(bound)
    return names


def sizes_of(tree: ast.Module) -> Sizes:
    """The file's sizes (see the module's docstring)."""
    values, uses = read_sizes(tree)
    for index, node in enumerate(input_literals(tree)):
        if isinstance(node.value, int):  # always: input_literals keeps whole numbers only
            values[f"get_inputs_{index}"] = node.value
    inputs = function_named(tree, "get_inputs")
    init = function_named(tree, "get_init_inputs")
    of_inputs = depends_on(_names(inputs), values, uses) | {
        n for n in values if n.startswith("get_inputs_")}
    kept = depends_on(_randint_bounds(inputs), values, uses)
    widths = {s for s in depends_on(_names(init), values, uses)
              if SIZE_LIKE.search(s) and not NOT_SIZE.search(s)}
    scalable = (of_inputs | widths) - kept
    order = list(values)
    return Sizes(values, [s for s in order if s in scalable],
                 [s for s in order if s in of_inputs - kept])


def _wanted(sizes: Sizes, names: list[str], wanted: tuple[int, ...]) -> dict[str, int]:
    """The file's sizes with `names` set to the wanted values (never above the file's)."""
    case = dict(sizes.values)
    for index, name in enumerate(names):
        case[name] = min(case[name], wanted[index % len(wanted)])
    return case


def _halvings(start: dict[str, int], names: list[str], steps: int) -> list[dict[str, int]]:
    """`start`, then with the largest of `names` halved, again and again."""
    case, found = dict(start), [dict(start)]
    for _step in range(steps):
        if not names or max(case[n] for n in names) <= 1:
            break
        largest = max(names, key=lambda n: case[n])
        case[largest] = max(1, case[largest] // 2)
        found.append(dict(case))
    return found


def _tied(sizes: Sizes, names: list[str], wanted: tuple[int, ...]) -> dict[str, int]:
    """As _wanted, but sizes of equal value in the file get equal values (a LayerNorm over
    out_channels applied along a width that the file makes equal to it)."""
    values = list(dict.fromkeys(sizes.values[name] for name in names))
    chosen = {value: wanted[index % len(wanted)] for index, value in enumerate(values)}
    case = dict(sizes.values)
    for name in names:
        case[name] = min(case[name], chosen[case[name]])
    return case


def candidates(sizes: Sizes, wanted: tuple[int, ...], even: tuple[int, ...]
               ) -> list[dict[str, int]]:
    """Cases to try in order: every scalable size at the wanted values (primes, then even
    numbers, for Models that need multiples), then only the inputs' sizes, each halved
    further until it fits; then each of those with the sizes the file makes equal kept equal;
    then the file's sizes halved again and again, tried from the smallest up (a network that
    downsamples five times runs at 32 x 32 but not at 5 x 7: the first that runs is the
    smallest that does); last the leading (batch) size alone (a Model whose layers fix the
    image's size)."""
    every, own = sizes.scalable, sizes.of_inputs
    tried = []
    choices = ((every, wanted), (own, wanted), (every, even), (own, even))
    for make in (_wanted, _tied):
        for names, values in choices:
            tried += _halvings(make(sizes, names, values), names, HALVINGS // 4)
    tried += _halvings(sizes.values, every, HALVINGS)[::-1]
    tried += _halvings(sizes.values, own, HALVINGS)[::-1]
    tried += _halvings(_wanted(sizes, own[:1], wanted), own[:1], HALVINGS // 4)
    unique: list[dict[str, int]] = []
    for case in tried:
        if case not in unique:
            unique.append(case)
    return unique


def groups(sizes: Sizes) -> list[list[dict[str, int]]]:
    """The candidate groups: a small case, a medium one, a large one."""
    return [candidates(sizes, SMALL, SMALL_EVEN), candidates(sizes, MEDIUM, MEDIUM_EVEN),
            [_wanted(sizes, sizes.scalable, LARGE), _wanted(sizes, sizes.of_inputs, LARGE)]]
