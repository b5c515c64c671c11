"""What a KernelBench problem's Model is, learned by running it where foreign code may run: in
the reference process (the sandbox), started by kernelbench_meta. Never imported by the app.

For each candidate case (a table of sizes) the problem runs on torch's meta device, which
computes shapes and dtypes and no values: get_inputs(), the Model built from get_init_inputs(),
forward. Of each group of candidates the first that runs and fits the size limits is kept. Then
the Model is built for real, on the CPU, once, at the first kept case, watching torch's
generators (torch.rand, Tensor.uniform_, fill_...) to learn how each parameter and buffer was
drawn (`kaiming_uniform_` is `uniform_(-b, b)` underneath); what no generator drew is described
by its values. The answer goes back as JSON in a uint8 array (a reference returns arrays).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.assist.tasks.kernelbench_runtime import built_model, outputs_of, problem_module

MESSAGE_CHARS = 300
# The init of an input get_inputs draws from [0, 1) where the forward is finite on [-1, 1).
SIGNED = "uniform(-1, 1)"
# Uniform values span about 3.46 standard deviations; normal ones more, once there are a few.
UNIFORM_SPAN = 4.2
FACTORIES = {"rand": ("uniform", 0.0, 1.0), "randn": ("normal", 0.0, 1.0),
             "zeros": ("full", 0.0, 0.0), "ones": ("full", 1.0, 0.0),
             "rand_like": ("uniform", 0.0, 1.0), "randn_like": ("normal", 0.0, 1.0),
             "zeros_like": ("full", 0.0, 0.0), "ones_like": ("full", 1.0, 0.0)}


def one_line(error: BaseException) -> str:
    """An exception as one short line."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 3] + "..."


def _described(value: Any) -> list[Any]:
    """[shape, dtype] of a tensor; TypeError for anything else."""
    import torch

    if not isinstance(value, torch.Tensor):
        raise TypeError(f"a {type(value).__name__} where a tensor was expected")
    return [list(value.shape), str(value.dtype).removeprefix("torch.")]


def meta_info(path: Path, case: dict[str, int]) -> dict[str, Any]:
    """Shapes and dtypes of the inputs, the Model's state and forward's outputs at a case,
    from a run on the meta device; on the CPU for a Model that needs values as it runs
    (`.item()` of a schedule while it builds): a real run, so only where meta cannot."""
    try:
        return device_info(path, case, "meta")
    except Exception as error:  # noqa: BLE001 - a foreign Model's failure is the answer
        if "meta" not in str(error):
            raise
    return device_info(path, case, "cpu")


def device_info(path: Path, case: dict[str, int], device: str) -> dict[str, Any]:
    """meta_info on one device."""
    import torch

    module = problem_module(path, case)
    with torch.device(device), torch.no_grad():
        inputs = list(module.get_inputs())
        described = [_input(i, value) for i, value in enumerate(inputs)]
        model = module.Model(*module.get_init_inputs())
        params = {name for name, _ in model.named_parameters()}
        state = [[key, *_described(value), key in params]
                 for key, value in model.state_dict().items()]
        outputs = [_described(value) for value in outputs_of(model(*inputs))]
    return {"inputs": described, "state": state, "outputs": outputs,
            "random": _random_parts(model)}


def _input(index: int, value: Any) -> list[Any]:
    """One input's [shape, dtype] ([value, "number"] for a plain number, which the kernel
    gets as a scalar), or why it cannot be a buffer."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [value, "int" if isinstance(value, int) else "float"]
    try:
        return _described(value)
    except TypeError:
        raise TypeError(f"get_inputs()[{index}] is a {type(value).__name__}, not a tensor: "
                        "only tensor inputs map to buffers") from None


def _random_parts(model: Any) -> str:
    """The first module that makes forward random in training mode (how KernelBench runs the
    Model), or ''."""
    for name, part in model.named_modules():
        # Dropout modules keep their rate as p, attention and recurrent layers as dropout (a
        # loss's p is a norm's degree, not a rate).
        attribute = "p" if "Dropout" in type(part).__name__ else "dropout"
        rate = getattr(part, attribute, 0.0)
        if part.training and isinstance(rate, float) and rate > 0:
            return f"{name or 'Model'} ({type(part).__name__}, {attribute}={rate:g})"
    return ""


def _fits(info: dict[str, Any], elements: int, weights: int) -> bool:
    """Whether every input and output has 1 to `elements` elements, and the state together
    at most `weights`."""
    tensors = [shape for shape, kind in info["inputs"] if kind not in ("int", "float")]
    tensors += [shape for shape, _ in info["outputs"]]
    state = sum(math.prod(shape) for _, shape, _, _ in info["state"])
    return all(0 < math.prod(shape) <= elements for shape in tensors) and state <= weights


def first_fitting(path: Path, group: list[dict[str, int]], elements: int,
                  weights: int) -> dict[str, Any]:
    """The first case of the group that runs on meta and fits; else the first error."""
    first = ""
    for case in group:
        try:
            info = meta_info(path, case)
        except Exception as error:  # noqa: BLE001 - a foreign Model's failure is the answer
            first = first or one_line(error)
            continue
        if _fits(info, elements, weights):
            return {"case": case, "info": info}
        first = first or "too large at every scaled size tried"
    return {"error": first or "no case to try"}


class Watch:
    """Records how torch's generators fill tensors, by the address of their data."""

    def __init__(self) -> None:
        """Nothing seen yet."""
        self.seen: dict[int, tuple[str, float, float]] = {}

    def note(self, tensor: Any, how: tuple[str, float, float]) -> None:
        """`tensor`'s data was just made this way."""
        if getattr(tensor, "numel", lambda: 0)() > 0:
            self.seen[tensor.data_ptr()] = how

    @contextmanager
    def watching(self) -> Iterator[None]:
        """Generators patched to report to note() while the block runs."""
        import torch

        saved: list[tuple[Any, str, Any]] = []

        def patch(owner: Any, name: str, make: Callable[[Any], Callable[..., Any]]) -> None:
            original = getattr(owner, name)
            saved.append((owner, name, original))
            setattr(owner, name, make(original))

        for name, how in FACTORIES.items():
            patch(torch, name, self._factory(how))
        patch(torch, "randint", self._randint)
        patch(torch.Tensor, "uniform_", self._method("uniform", 0.0, 1.0))
        patch(torch.Tensor, "normal_", self._method("normal", 0.0, 1.0))
        patch(torch.Tensor, "fill_", self._method("full", 0.0, 0.0))
        patch(torch.Tensor, "zero_", self._method("zero", 0.0, 0.0))
        try:
            yield
        finally:
            for owner, name, original in reversed(saved):
                setattr(owner, name, original)

    def _factory(self, how: tuple[str, float, float]) -> Callable[[Any], Callable[..., Any]]:
        """torch.rand and its kin, noted."""
        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def made(*args: Any, **kwargs: Any) -> Any:
                result = original(*args, **kwargs)
                self.note(result, how)
                return result
            return made
        return make

    def _randint(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """torch.randint(high, size) or (low, high, size), noted with its bounds."""
        def made(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            bounds = [a for a in args if isinstance(a, int)][:2]
            low, high = (0, bounds[0]) if len(bounds) == 1 else (bounds + [0, 0])[:2]
            self.note(result, ("randint", float(kwargs.get("low", low)),
                               float(kwargs.get("high", high))))
            return result
        return made

    def _method(self, kind: str, first: float, second: float
                ) -> Callable[[Any], Callable[..., Any]]:
        """Tensor.uniform_(a, b), normal_(mean, std), fill_(v), zero_(), noted."""
        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def filled(tensor: Any, *args: Any, **kwargs: Any) -> Any:
                result = original(tensor, *args, **kwargs)
                a, b = _bounds(args, kwargs, (first, second), NAMES[kind])
                how = ("full", 0.0, 0.0) if kind == "zero" else (kind, a, b)
                self.note(tensor, how)
                return result
            return filled
        return make


NAMES = {"uniform": ("from", "to"), "normal": ("mean", "std"), "full": ("value", ""),
         "zero": ("", "")}


def _bounds(args: tuple[Any, ...], kwargs: dict[str, Any], defaults: tuple[float, float],
            names: tuple[str, str]) -> tuple[float, float]:
    """A generator's two numbers, given by position or by name."""
    values = list(defaults)
    for index, value in enumerate(args[:2]):
        values[index] = float(value)
    for index, name in enumerate(names):
        if name and isinstance(kwargs.get(name), int | float):
            values[index] = float(kwargs[name])
    return values[0], values[1]


def _number(value: float) -> str:
    """A bound as the spec writes it."""
    return f"{value:.9g}"


def _full(value: float) -> str:
    """A constant init."""
    return {0.0: "zeros", 1.0: "ones"}.get(value, f"full({_number(value)})")


def init_text(how: tuple[str, float, float]) -> str:
    """The spec's init for a noted generator."""
    kind, a, b = how
    if kind == "full" or (kind == "uniform" and a == b) or (kind == "normal" and b == 0):
        return _full(a)
    if kind == "uniform":
        return "uniform" if (a, b) == (0.0, 1.0) else f"uniform({_number(a)}, {_number(b)})"
    if kind == "normal":
        return "normal" if (a, b) == (0.0, 1.0) else f"normal({_number(a)}, {_number(b)})"
    return f"randint({int(a)}, {int(b)})"


def _agrees(how: tuple[str, float, float], values: Any) -> bool:
    """Whether a tensor's values could have come from the noted generator (its data may have
    been changed since, or the address reused)."""
    kind, a, b = how
    if kind == "full":
        return bool((values == a).all())
    if kind == "uniform":
        return bool(values.min() >= a and values.max() <= b)
    if kind == "randint":
        return bool(values.min() >= a and values.max() < b)
    return kind == "normal"


def described_values(values: Any, integer: bool) -> str:
    """An init for values no generator was seen to draw: their constant, their range, or a
    normal distribution of their mean and deviation."""
    low, high = float(values.min()), float(values.max())
    if low == high:
        return _full(low)
    if integer:
        return f"randint({int(low)}, {int(high) + 1})"
    mean, deviation = float(values.mean()), float(values.std())
    if values.numel() >= 8 and (high - low) / deviation > UNIFORM_SPAN:
        return f"normal({_rounded(mean)}, {_rounded(deviation)})"
    return f"uniform({_rounded(low, math.floor)}, {_rounded(high, math.ceil)})"


def _rounded(value: float, direction: Callable[[float], float] = round) -> str:
    """A value seen in a sample, to two significant digits (rounded down for a low bound, up
    for a high one: a sample's range is narrower than what drew it)."""
    if value == 0 or not math.isfinite(value):
        return _number(value)
    scale = 10.0 ** (math.floor(math.log10(abs(value))) - 1)
    return _number(direction(value / scale) * scale)


def how_drawn(watch: Watch, tensor: Any) -> tuple[str, bool]:
    """(init, whether a generator drew it) for one real tensor."""
    # Measured in torch, in float32 for floats: a level-3 Model's weights are hundreds of
    # millions of numbers, which a float64 copy would double.
    integer = not tensor.dtype.is_floating_point
    values = tensor.detach().double() if integer else tensor.detach().float()
    how = watch.seen.get(tensor.data_ptr()) if tensor.numel() else ("full", 0.0, 0.0)
    if how is not None and _agrees(how, values):
        if integer and how[0] != "randint":
            return described_values(values, True), True
        return init_text(how), True
    return described_values(values, integer), False


def traced(path: Path, case: dict[str, int]) -> dict[str, Any]:
    """How the inputs and the Model's state are drawn, from a real build at a small case."""
    import torch

    module = problem_module(path, case)
    watch = Watch()
    with watch.watching(), torch.no_grad():
        torch.manual_seed(0)
        inputs = list(module.get_inputs())
        model = built_model(module)
    state = {}
    for key, value in model.state_dict().items():
        init, drawn = how_drawn(watch, value)
        state[key] = {"init": init, "drawn": drawn}
    inits = [how_drawn(watch, value)[0] if isinstance(value, torch.Tensor) else ""
             for value in inputs]
    widened = signed_inputs(model, inputs, inits)
    return {"inputs": [SIGNED if i in widened else init for i, init in enumerate(inits)],
            "widened": widened, "state": state}


def signed_inputs(model: Any, inputs: list[Any], inits: list[str]) -> list[int]:
    """The inputs drawn from [0, 1) (torch.rand) that the verifier draws from [-1, 1) instead:
    all of them when the forward gives finite outputs there, else none. On [0, 1) a kernel
    that is wrong for negative values passes: ReLU's, or the identity, for an ELU."""
    import torch

    chosen = [i for i, init in enumerate(inits)
              if init == "uniform" and inputs[i].dtype.is_floating_point]
    if not chosen:
        return []
    trial = list(inputs)
    draws = torch.Generator().manual_seed(1)
    for index in chosen:
        tensor = inputs[index]
        trial[index] = torch.rand(tensor.shape, generator=draws, dtype=tensor.dtype) * 2 - 1
    try:
        with torch.no_grad():
            outputs = outputs_of(model(*trial))
    except Exception:  # noqa: BLE001 - a forward that refuses signed values keeps [0, 1)
        return []
    finite = all(bool(torch.isfinite(o).all()) for o in outputs
                 if isinstance(o, torch.Tensor) and o.dtype.is_floating_point)
    return chosen if finite else []


def probe(path: Path, request: str) -> dict[str, Any]:
    """The answer to one request (see the module's docstring), as the reference's output."""
    import numpy as np

    asked = json.loads(request)
    answer: dict[str, Any] = {}
    try:
        answer["bench"] = meta_info(path, asked["bench"])
    except Exception as error:  # noqa: BLE001 - a foreign Model's failure is the answer
        answer["error"] = one_line(error)
        return {"answer": np.frombuffer(json.dumps(answer).encode(), dtype=np.uint8)}
    answer["groups"] = [first_fitting(path, group, asked["elements"], asked["weights"])
                        for group in asked["groups"]]
    kept = [g["case"] for g in answer["groups"] if "case" in g]
    if kept:
        try:
            # The larger of the small cases: its inputs are a better sample of how they are
            # drawn (the weights' generators are seen, whatever the case).
            answer["drawn"] = traced(path, kept[min(1, len(kept) - 1)])
        except Exception as error:  # noqa: BLE001
            answer["error"] = f"the Model cannot be built on the CPU: {one_line(error)}"
    return {"answer": np.frombuffer(json.dumps(answer).encode(), dtype=np.uint8)}
