"""From what the probe learned of a KernelBench problem to the task's buffers and cases.

Every buffer (get_inputs' tensors, the Model's parameters and buffers, forward's outputs) has
its shape at the problem's own sizes and at each verify case. A dim that never changes is a
number; one that always equals a size is that size's name; any other (a convolution's output
height, say) becomes a size of its own, `<buffer>_dim<i>`, given in every case and passed to
the kernel like the others (its value at each case is what the Model itself gives there).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_sizes import Sizes

# Verify cases are scaled down from the problem's sizes (which fill gigabytes) to at most this
# many elements per input and output; the Model's weights together at most WEIGHT_ELEMENTS.
MAX_CASE_ELEMENTS = 1 << 20
WEIGHT_ELEMENTS = 1 << 28
BLOCK = 256
INT32_MAX = (1 << 31) - 1
# Torch dtypes as spec dtypes (a bool travels as uint8).
DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
          "float64": "float64", "int8": "int8", "uint8": "uint8", "int16": "int16",
          "int32": "int32", "int64": "int64", "bool": "uint8"}
# Names no kernel parameter can have (C++ keywords a Python name may be), and those of the
# kernel's own helpers: an argument so named gets a suffix.
RESERVED = frozenset("""auto bool break case catch char class const continue default delete do
double else enum extern float for goto if inline int long namespace new operator private
protected public register return short signed sizeof static struct switch template this throw
try typedef union unsigned virtual void volatile while half blockIdx threadIdx blockDim
gridDim""".split())
# Deep Models sum over sum: PyTorch's order and a kernel's differ by more than a few ulps.
DEEP_WEIGHTS = 20


@dataclass(frozen=True)
class Buffer:
    """One buffer of the task: its spec name, kind (in, out), spec dtype, torch dtype, shape
    (spec expressions), init, and for a weight the Model's state key."""

    name: str
    kind: str
    dtype: str
    torch: str
    shape: tuple[str, ...]
    init: str = ""
    key: str = ""
    zero_d: bool = False
    # Drawn from [-1, 1) where get_inputs draws from [0, 1) (kernelbench_probe.signed_inputs)
    widened: bool = False


@dataclass
class Plan:
    """The task: its buffers in kernel parameter order, its sizes (int32 scalars), the
    verify cases and the bench case, and what the Model keeps for itself."""

    inputs: list[Buffer]
    weights: list[Buffer]
    outputs: list[Buffer]
    scalars: list[str]
    overridden: list[str]
    cases: list[dict[str, int]]
    bench: dict[str, int]
    kept: list[str] = field(default_factory=list)


def _spec_dtype(torch_dtype: str, what: str) -> str:
    """The spec dtype of a torch dtype, or Refused."""
    if torch_dtype not in DTYPES:
        raise Refused(f"{what} is {torch_dtype}, which Kernel Studio's specs do not hold")
    return DTYPES[torch_dtype]


def chosen_cases(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The probe's kept cases (small, medium, and a large one where the others launch a
    block or two only), each {"case", "info"}; Refused when no small one runs."""
    groups = answer.get("groups", [])
    if not groups or "case" not in groups[0]:
        reason = groups[0].get("error", "") if groups else ""
        raise Refused(f"no scaled-down case of the problem runs or fits: {reason}")
    chosen = [groups[0]]
    if len(groups) > 1 and "case" in groups[1] and groups[1]["case"] != groups[0]["case"]:
        chosen.append(groups[1])
    if len(groups) > 2 and "case" in groups[2]:
        largest = max(_count(c["info"]["outputs"][0][0]) for c in chosen)
        large = _count(groups[2]["info"]["outputs"][0][0])
        bench = _count(answer["bench"]["outputs"][0][0])
        if largest <= 2 * BLOCK < bench and large > largest and \
                groups[2]["case"] not in [c["case"] for c in chosen]:
            chosen.append(groups[2])
    return chosen


def _count(shape: list[int]) -> int:
    """Elements of a shape."""
    return math.prod(shape)


class Dims:
    """Names dims across the bench case and the verify cases."""

    def __init__(self, sizes: Sizes, cases: list[dict[str, int]]) -> None:
        """Know each size's value in every case (the bench case first)."""
        self.cases = cases
        order = sizes.of_inputs + [s for s in sizes.scalable if s not in sizes.of_inputs]
        self.varying = [s for s in order if len({c[s] for c in cases}) > 1]
        self.derived: dict[str, list[int]] = {}

    def name(self, values: list[int], fallback: str) -> str:
        """A number, a size's name, or a new derived size called `fallback`."""
        if len(set(values)) == 1:
            return str(values[0])
        for size in self.varying:
            if [c[size] for c in self.cases] == values:
                return size
        for derived, known in self.derived.items():
            if known == values:
                return derived
        self.derived[fallback] = values
        return fallback

    def shape(self, shapes: list[list[int]], buffer: str) -> tuple[str, ...]:
        """A buffer's shape (at least one dim) from its shape in every case."""
        if len({len(s) for s in shapes}) != 1:
            raise Refused(f"{buffer} has a different number of dims at other sizes")
        if not shapes[0]:
            return ("1",)
        return tuple(self.name([s[i] for s in shapes], f"{buffer}_dim{i}")
                     for i in range(len(shapes[0])))


def _identifier(key: str) -> str:
    """A state key (`layers.0.weight`) as an argument name (`layers_0_weight`)."""
    name = re.sub(r"\W+", "_", key).strip("_") or "weight"
    return name if not name[0].isdigit() else f"w_{name}"


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or name_2, name_3... when it is taken."""
    found, index = name, 2
    while found in taken or found in RESERVED:
        found, index = f"{name}_{index}", index + 1
    taken.add(found)
    return found


def _infos(answer: dict[str, Any], chosen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The probe's findings at the bench case, then at each verify case."""
    return [answer["bench"], *(c["info"] for c in chosen)]


def plan(answer: dict[str, Any], sizes: Sizes, params: list[str], defaults: int = 0) -> Plan:
    """The task's buffers and cases from the probe's answer (Refused where they do not map)."""
    if answer.get("error"):
        raise Refused(f"the problem does not run: {answer['error']}")
    if answer["bench"].get("random"):
        raise Refused(f"forward is random in training mode, as KernelBench runs it: "
                      f"{answer['bench']['random']}; no kernel can match a random output")
    chosen = chosen_cases(answer)
    every = [{**sizes.values}, *({**sizes.values, **c["case"]} for c in chosen)]
    infos = _infos(answer, chosen)
    dims = Dims(sizes, every)
    count = len(infos[0]["outputs"])
    names = ["out"] if count == 1 else [f"out{i}" for i in range(count)]
    taken = set(sizes.values) | set(names)
    inputs = _inputs(infos, dims, params, answer["drawn"]["inputs"], defaults, taken,
                     set(answer["drawn"].get("widened", ())))
    weights, kept = _weights(infos, dims, answer["drawn"]["state"], taken)
    outputs = _outputs(infos, dims, names)
    scalars = dims.varying + [d for d in dims.derived if d not in dims.varying]
    for derived in dims.derived:
        if derived in taken:
            raise Refused(f"the size the task would call {derived} has the name of another "
                          "argument: rename it in the problem file")
    cases = [_case(case, dims, i + 1) for i, case in enumerate(every[1:])]
    _check_int32([*cases, _case(every[0], dims, 0)])
    return Plan(inputs, weights, outputs, scalars, dims.varying, cases, _case(every[0], dims, 0),
                kept)


def _check_int32(cases: list[dict[str, int]]) -> None:
    """Sizes are the kernel's int32 scalars: each must be 1 to 2^31 - 1."""
    for case in cases:
        for name, value in case.items():
            if not 0 < value <= INT32_MAX:
                raise Refused(f"the size {name} = {value} is not a positive int32 (1 to "
                              f"{INT32_MAX})")


def _case(case: dict[str, int], dims: Dims, index: int) -> dict[str, int]:
    """One case as the spec writes it: the varying sizes and the derived ones."""
    found = {size: case[size] for size in dims.varying}
    found.update({name: values[index] for name, values in dims.derived.items()})
    return found


def _inputs(infos: list[dict[str, Any]], dims: Dims, params: list[str],
            inits: list[str], defaults: int, taken: set[str],
            widened: set[int]) -> list[Buffer]:
    """get_inputs' tensors as `in` buffers named as forward's parameters (a name the task
    uses already, or that no kernel parameter can have, gets a suffix: the reference passes
    them by position)."""
    count = len(infos[0]["inputs"])
    if count > len(params) or count < len(params) - defaults:
        raise Refused(f"forward takes {len(params)} input(s) but get_inputs returns {count}")
    found = []
    for index, param in enumerate(params[:count]):  # the rest keep their defaults (mask=None)
        name = _unique(param, taken)
        shapes = [info["inputs"][index][0] for info in infos]
        torch_dtype = infos[0]["inputs"][index][1]
        if torch_dtype in ("int", "float"):
            found.append(_number_input(name, shapes, torch_dtype))
            continue
        dtype = _spec_dtype(torch_dtype, f"input {name}")
        init = inits[index] if torch_dtype != "bool" else "randint(0, 2)"
        found.append(Buffer(name, "in", dtype, torch_dtype, dims.shape(shapes, name), init,
                            zero_d=not shapes[0], widened=index in widened))
    return found


def _number_input(name: str, values: list[Any], kind: str) -> Buffer:
    """A plain number get_inputs passes (a scalar to multiply by, say): a scalar argument of
    that value, the same in every case."""
    if len(set(values)) != 1:
        raise Refused(f"input {name} is a number that changes with the sizes: not mapped")
    dtype = "int32" if kind == "int" else "float32"
    return Buffer(name, "scalar", dtype, kind, (), init=repr(values[0]))


def _weights(infos: list[dict[str, Any]], dims: Dims, drawn: dict[str, Any],
             taken: set[str]) -> tuple[list[Buffer], list[str]]:
    """The Model's parameters, and the buffers a generator drew, as `in` buffers; the keys of
    the rest (masks and tables the Model computes), which it keeps."""
    weights, kept = [], []
    for index, (key, _shape, torch_dtype, is_param) in enumerate(infos[0]["state"]):
        how = drawn.get(key, {"init": "", "drawn": False})
        if not (is_param or how["drawn"]) or torch_dtype not in DTYPES or not how["init"]:
            kept.append(key)
            continue
        name = _unique(_identifier(key), taken)
        shapes = [info["state"][index][1] for info in infos]
        weights.append(Buffer(name, "in", DTYPES[torch_dtype], torch_dtype,
                              dims.shape(shapes, name), how["init"], key, not shapes[0]))
    return weights, kept


def _outputs(infos: list[dict[str, Any]], dims: Dims, names: list[str]) -> list[Buffer]:
    """forward's tensors as `out` buffers: out, or out0, out1... for several."""
    found = []
    for index, name in enumerate(names):
        shapes = [info["outputs"][index][0] for info in infos]
        torch_dtype = infos[0]["outputs"][index][1]
        dtype = _spec_dtype(torch_dtype, f"forward's output {index}")
        found.append(Buffer(name, "out", dtype, torch_dtype, dims.shape(shapes, name)))
    return found


# Calls that sum many products in a forward without weights of its own.
_CONTRACTIONS = re.compile(r"\btorch\.(matmul|mm|bmm|einsum|tensordot|baddbmm|addmm|addbmm|"
                           r"chain_matmul|inner)\b|\bF\.(linear|conv\w*)\b|"
                           r"[\w)\]][ \t]*@[ \t]*\w")


def tolerance(plan_: Plan, forward_source: str = "") -> float | None:
    """rtol and atol for the task, or None for the defaults: sums of many terms (weights, a
    matrix product in the Model's source, or an output shaped unlike every input) are 1e-4,
    deep Models 1e-3. A product of square matrices has out shaped as its inputs, and a correct
    float32 kernel missed the defaults by one rounding in 4,489 elements (KernelBench's
    lower-triangular product)."""
    if len(plan_.weights) >= DEEP_WEIGHTS:
        return 1e-3
    shapes = {b.shape for b in plan_.inputs}
    if plan_.weights or any(o.shape not in shapes for o in plan_.outputs) or \
            _CONTRACTIONS.search(forward_source):
        return 1e-4
    return None
