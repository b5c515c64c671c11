"""What the PyTorch calls a task names compute, in CUDA terms, for the compact prompt.

A 135M model that reads `F.elu(x, alpha=self.alpha)` knows the shape of an answer but not
ELU's formula, nor that self.alpha is 1.0: it writes `fmaxf(x, 0)` or an undefined `alpha`.
So the prompt gets one line per PyTorch call the description names: the call, then what it
computes per element in CUDA C (v is one element of the call's input), with the call's
constants filled in from the call itself, or from the Model's constructor (its defaults and
the values the description says it is built with). The lines come from the text alone (no
code is run), so a description in any register gets them: an imported problem's Model, a
PyTorch expression, a note that names `torch.sigmoid`.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

HEADING = "PyTorch in CUDA (v: one element of the call's input):"
MAX_LINES = 6
MAX_CALL = 90
# How far a call's closing bracket is looked for.
MAX_SCAN = 4000
# Calls are PyTorch's when spelled through one of these, or as a method of a tensor.
_PREFIXES = ("torch.nn.functional.", "nn.functional.", "functional.", "torch.", "F.", "nn.")
_BUILT = re.compile(r"built as (Model\(.*?\)) \(get_init_inputs\)(?:, with (.*?))?\.(?=\s|$)")
_WITH_VALUE = re.compile(r"(\w+) = ([-+\w.'\"]+)")
# A call's start: its owner (torch.nn.functional, F, x, self.pool...) and the function's name.
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\.(\w+)\(")
_INIT = re.compile(r"def __init__\(")
_SELF_SET = re.compile(r"self\.(\w+)\s*=\s*([-+]?[\w.]+)(?![\w.(\[])")
_QUOTES = "'\""


@dataclass(frozen=True)
class Entry:
    """One PyTorch function: its parameters after the tensor inputs (name, default), and what
    it computes; {v} is one element of the first input, {name} a parameter's value."""

    names: tuple[str, ...]
    inputs: int
    params: tuple[tuple[str, str], ...]
    meaning: str


def _e(names: str, meaning: str, params: tuple[tuple[str, str], ...] = (),
       inputs: int = 1) -> Entry:
    return Entry(tuple(names.split()), inputs, params, meaning)


_ROW = "the softmax row: m = the largest x along dim {dim}, s = the sum of expf(x - m) along it"
ENTRIES = (
    _e("relu", "fmaxf(v, 0.0f)"),
    _e("relu6", "fminf(fmaxf(v, 0.0f), 6.0f)"),
    _e("leaky_relu", "v > 0.0f ? v : {negative_slope} * v", (("negative_slope", "0.01"),)),
    _e("sigmoid", "1.0f / (1.0f + expf(-v))"),
    _e("logsigmoid", "fminf(v, 0.0f) - log1pf(expf(-fabsf(v)))"),
    _e("tanh", "tanhf(v)"),
    _e("silu", "v / (1.0f + expf(-v))"),
    _e("mish", "v * tanhf(log1pf(expf(v)))"),
    _e("gelu", "0.5f * v * (1.0f + erff(v * 0.70710678f))  (exact; with approximate='tanh': "
       "0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v))))"),
    _e("selu", "1.05070099f * (v > 0.0f ? v : 1.67326324f * (expf(v) - 1.0f))"),
    _e("elu", "v > 0.0f ? v : {alpha} * (expf(v) - 1.0f)", (("alpha", "1.0"),)),
    _e("celu", "v > 0.0f ? v : {alpha} * (expf(v / {alpha}) - 1.0f)", (("alpha", "1.0"),)),
    _e("softplus", "{beta} * v > {threshold} ? v : log1pf(expf({beta} * v)) / {beta}",
       (("beta", "1.0"), ("threshold", "20.0"))),
    _e("softsign", "v / (1.0f + fabsf(v))"),
    _e("hardsigmoid", "fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f)"),
    _e("hardswish", "v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f"),
    _e("hardtanh", "fminf(fmaxf(v, {min_val}), {max_val})",
       (("min_val", "-1.0"), ("max_val", "1.0"))),
    _e("hardshrink", "fabsf(v) > {lambd} ? v : 0.0f", (("lambd", "0.5"),)),
    _e("softshrink", "v > {lambd} ? v - {lambd} : (v < -{lambd} ? v + {lambd} : 0.0f)",
       (("lambd", "0.5"),)),
    _e("tanhshrink", "v - tanhf(v)"),
    _e("threshold", "v > {threshold} ? v : {value}", (("threshold", "0.0"), ("value", "0.0"))),
    _e("clamp clip", "fminf(fmaxf(v, {min}), {max})", (("min", "-INFINITY"), ("max", "INFINITY"))),
    _e("abs", "fabsf(v)"), _e("exp", "expf(v)"), _e("log", "logf(v)"), _e("log1p", "log1pf(v)"),
    _e("expm1", "expm1f(v)"), _e("sqrt", "sqrtf(v)"), _e("rsqrt", "rsqrtf(v)"),
    _e("sin", "sinf(v)"), _e("cos", "cosf(v)"), _e("erf", "erff(v)"), _e("square", "v * v"),
    _e("reciprocal", "1.0f / v"), _e("neg", "-v"), _e("floor", "floorf(v)"),
    _e("ceil", "ceilf(v)"), _e("sign", "(float)((v > 0.0f) - (v < 0.0f))"),
    _e("pow", "powf(v, {exponent})", (("exponent", "2.0"),)),
    _e("softmax", "expf(v - m) / s, with " + _ROW, (("dim", "-1"),)),
    _e("log_softmax", "v - m - logf(s), with " + _ROW, (("dim", "-1"),)),
    _e("sum", "the sum of x along dim {dim} (each output element loops over that dim)",
       (("dim", "all"),)),
    _e("mean", "the sum of x along dim {dim} divided by that dim's size (each output element "
       "loops over it)", (("dim", "all"),)),
    _e("amax max", "the largest x along dim {dim} (each output element loops over it)",
       (("dim", "all"),)),
    _e("amin min", "the smallest x along dim {dim} (each output element loops over it)",
       (("dim", "all"),)),
    _e("argmax", "the index (int64) of the first largest x along dim {dim}", (("dim", "all"),)),
    _e("argmin", "the index (int64) of the first smallest x along dim {dim}", (("dim", "all"),)),
    _e("cumsum", "at position p along dim {dim}: the sum of x at positions 0..p of that dim",
       (("dim", "0"),)),
    _e("cumprod", "at position p along dim {dim}: the product of x at positions 0..p of that dim",
       (("dim", "0"),)),
    _e("norm", "sqrtf(the sum of x * x along dim {dim})", (("p", "2"), ("dim", "all"))),
    _e("matmul mm", "out[i][j] = the sum over k of A[i][k] * B[k][j] (one thread per out "
       "element: i = index / columns, j = index % columns)", inputs=2),
    _e("bmm", "out[b][i][j] = the sum over k of A[b][i][k] * B[b][k][j]", inputs=2),
    _e("triu", "keeps elements whose column j >= row i, others 0.0f"),
    _e("tril", "keeps elements whose column j <= row i, others 0.0f"),
    _e("where", "cond ? a : b, element by element", inputs=3),
    _e("maximum", "fmaxf(a, b)", inputs=2), _e("minimum", "fminf(a, b)", inputs=2),
    _e("mse_loss", "the mean over all elements of (a - b) * (a - b): one number", inputs=2),
    _e("smooth_l1_loss huber_loss", "the mean over all elements of (|d| < {beta} ? 0.5f * d * d "
       "/ {beta} : |d| - 0.5f * {beta}), d = a - b: one number", (("beta", "1.0"),), inputs=2),
    _e("kl_div", "the sum over all elements of b * (logf(b) - a), divided by the number of "
       "rows with reduction='batchmean' (a is already a log)", inputs=2),
    _e("MaxPool1d MaxPool2d MaxPool3d", "at each output position o (per pooled dim): the "
       "largest x at o * {stride} - {padding} + k * {dilation} for k < {kernel_size}, positions "
       "outside the input skipped", (("kernel_size", "?"), ("stride", "None"), ("padding", "0"),
                                      ("dilation", "1"))),
    _e("AvgPool1d AvgPool2d AvgPool3d", "at each output position o (per pooled dim): the sum of "
       "x at o * {stride} - {padding} + k for k < {kernel_size} (outside the input counts as 0), "
       "divided by {kernel_size} per pooled dim", (("kernel_size", "?"), ("stride", "None"),
                                                  ("padding", "0"))),
    _e("BatchNorm1d BatchNorm2d BatchNorm3d", "per channel c (dim 1): (v - mean) / sqrtf(var + "
       "1e-5f), mean and biased var over every element of channel c (all batches, all positions)"),
    _e("InstanceNorm1d InstanceNorm2d InstanceNorm3d", "per (batch, channel): (v - mean) / "
       "sqrtf(var + 1e-5f), mean and biased var over that channel's positions"),
    _e("LayerNorm", "per outer index: (v - mean) / sqrtf(var + 1e-5f), mean and biased var over "
       "the last dims (shape {normalized_shape})", (("normalized_shape", "?"),)),
    _e("GroupNorm", "per (batch, group of channels; {num_groups} groups): (v - mean) / sqrtf(var + "
       "1e-5f), mean and biased var over the group's channels and positions",
       (("num_groups", "?"),)),
    _e("cross_entropy", "the mean over rows of (logf(the sum of expf(row)) - row[target]): one "
       "number", inputs=2),
)
_BY_NAME = {name: entry for entry in ENTRIES for name in entry.names}
_GELU_EXACT = "0.5f * v * (1.0f + erff(v * 0.70710678f))"
_GELU_TANH = "0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v)))"
# An element-wise meaning holds only these words and C's float functions (expf, fmaxf...).
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_C_WORDS = frozenset({"v", "a", "b", "cond", "INFINITY", "float"})
_C_FUNCTION = re.compile(r"[a-z][a-z0-9]*f")
_OPERAND = re.compile(r"\b(v|a|b)\b")


def hints(description: str, limit: int = MAX_LINES) -> list[str]:
    """The heading and one line per PyTorch call the description names (at most `limit`), or
    [] when it names none this glossary knows. The description may be one line (prompts get
    it so): calls are found in the text, not by parsing the whole of it."""
    constants = model_constants(description)
    lines: list[str] = []
    seen: set[str] = set()
    for owner, name, call in _calls(description):
        entry = _BY_NAME.get(name)
        shown = ast.unparse(call)
        if entry is None or shown in seen or owner in ("math", "np", "numpy", "self"):
            continue
        seen.add(shown)
        lines.append(_line(call, entry, constants, method=not is_module(owner)))
        if len(lines) == limit:
            break
    return [HEADING, *lines] if lines else []


def is_module(owner: str) -> bool:
    """Whether a call's owner is PyTorch's namespace (torch.sigmoid, F.elu, nn.MaxPool1d) rather
    than a tensor (x.relu())."""
    return (owner + ".").startswith(_PREFIXES)


def _calls(text: str) -> list[tuple[str, str, ast.Call]]:
    """(owner, name, call) for each `owner.name(...)` in the text whose arguments parse."""
    found = []
    for match in _CALL.finditer(text):
        end = closing(text, match.end() - 1)
        if end < 0:
            continue
        try:
            node = ast.parse(text[match.start():end + 1], mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            continue
        if isinstance(node, ast.Call):
            found.append((match.group(1), match.group(2), node))
    return found


def bracketed(text: str) -> bool:
    """Whether the whole text is one bracketed group: `(a + b)`, not `(a) + (b)`."""
    return text.startswith("(") and closing(text, 0) == len(text) - 1


def closing(text: str, opening: int) -> int:
    """The index of the bracket that closes the one at `opening` (quotes skipped), or -1."""
    depth, quote = 0, ""
    for index in range(opening, min(len(text), opening + MAX_SCAN)):
        char = text[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in _QUOTES:
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _values(call: ast.Call, entry: Entry, constants: dict[str, str],
            method: bool) -> dict[str, str]:
    """Each parameter's value in this call: passed, or the constant it names, or its default."""
    skipped = entry.inputs - (1 if method else 0)  # a method's tensor is its owner
    values = dict(entry.params)
    positional = call.args[max(skipped, 0):]
    for (name, _), arg in zip(entry.params, positional, strict=False):
        values[name] = _value(arg, constants)
    for keyword in call.keywords:
        if keyword.arg in values:
            values[keyword.arg] = _value(keyword.value, constants)
    return values


# A norm's meaning for a p other than 2 (the entry's): 1, infinity, or any other number.
_P_NORMS = {"1": "the sum of fabsf(x) along dim {dim}",
            "1.0": "the sum of fabsf(x) along dim {dim}",
            "inf": "the largest fabsf(x) along dim {dim}"}
_P_NORM = "powf(the sum of powf(fabsf(x), {p}) along dim {dim}, 1.0f / {p})"


def _meaning(call: ast.Call, entry: Entry, values: dict[str, str]) -> str:
    """The entry's meaning with this call's values in it, tidied."""
    form = entry.meaning
    if "norm" in entry.names:
        p = re.sub(r"['\"]", "", values.get("p", "2"))
        p = "inf" if p in ("float(inf)", "math.inf", "torch.inf") else p
        if p not in ("2", "2.0", "fro"):
            form = _P_NORMS.get(p, _P_NORM)
    meaning = form.format(**{k: _c_literal(v) for k, v in values.items()})
    return _tidy(meaning, values, ast.unparse(call))


def _line(call: ast.Call, entry: Entry, constants: dict[str, str], method: bool) -> str:
    """'- `F.elu(x, alpha=self.alpha)`: v > 0.0f ? v : 2.5f * (expf(v) - 1.0f)'."""
    shown = ast.unparse(call)
    if len(shown) > MAX_CALL:
        shown = shown[:MAX_CALL - 3] + "..."
    return f"- `{shown}`: {_meaning(call, entry, _values(call, entry, constants, method))}"


def element_form(call: ast.Call, constants: dict[str, str], method: bool) -> str | None:
    """The call's C expression for one element (in v; a and b, or cond, a and b, for calls of
    two or three tensors), or None when it is no element-wise call this glossary knows."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    entry = _BY_NAME.get(name)
    if entry is None:
        return None
    values = _values(call, entry, constants, method)
    if name == "gelu":
        tanh = values.get("approximate", "") in ("'tanh'", '"tanh"') or any(
            k.arg == "approximate" and ast.unparse(k.value).strip(_QUOTES) == "tanh"
            for k in call.keywords)
        return _GELU_TANH if tanh else _GELU_EXACT
    meaning = _meaning(call, entry, values)
    words = _WORD.findall(meaning)
    if not words or not all(w in _C_WORDS or _C_FUNCTION.fullmatch(w) for w in words):
        return None
    return meaning if _OPERAND.search(meaning) else None


def _tidy(meaning: str, values: dict[str, str], shown: str) -> str:
    """The meaning without what its defaults make idle (a factor 1.0, an open clamp side), a
    whole-tensor reduction said as one, and a transposed operand said as read."""
    if values.get("dim") == "all":
        meaning = re.sub(r" along dim all( divided by that dim's size)? \(each output.*\)",
                         lambda m: " over all elements" + (" divided by their count" if m.group(1)
                                                           else "") + ": one number", meaning)
        meaning = meaning.replace("along dim all", "over all elements")
    if values.get("stride") == "None":
        meaning = meaning.replace("o * None", "o * " + values.get("kernel_size", "?"))
    meaning = re.sub(r"(?<![\w.])1\.0f \* ", "", meaning).replace(" / 1.0f", "")
    meaning = re.sub(r" \* 1\.0f(?![\w.])", "", meaning)
    meaning = meaning.replace("fmaxf(v, -INFINITY)", "v")
    meaning = re.sub(r"fminf\((.+), INFINITY\)$", r"\1", meaning)
    if re.search(r"\.T\b|\.t\(\)|transpose", shown):
        meaning += "; an operand written X.T is read transposed: X.T[i][k] is X[k][i]"
    return meaning


def _value(node: ast.AST, constants: dict[str, str]) -> str:
    """An argument's value as text: a literal, a self.attribute or a name the Model was built
    with; else the argument as written."""
    text = ast.unparse(node)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "self":
        return constants.get(node.attr, text)
    if isinstance(node, ast.Name):
        return constants.get(node.id, text)
    return text


def _c_literal(text: str) -> str:
    """A Python number as CUDA C float literal ('0.01' -> '0.01f', '-1.' -> '-1.0f'); integers
    (a dim) and anything else as they are."""
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    if re.fullmatch(r"[-+]?\d+", text.strip()):
        return text.strip()
    return f"{number!r}f"


def model_constants(description: str) -> dict[str, str]:
    """Values of the Model's constructor parameters and of the attributes set from them: the
    defaults, overridden by what 'The Model is built as Model(...)' says."""
    params = _init_params(description)
    if params is None:
        return {}
    found = {name: ast.unparse(default) for name, default in params if default is not None}
    found.update(_built(description, [name for name, _ in params]))
    for attribute, value in _SELF_SET.findall(description):
        found.setdefault(attribute, found.get(value, value))
    return found


def _init_params(description: str) -> list[tuple[str, ast.expr | None]] | None:
    """The Model constructor's parameters after self, each with its default (or None)."""
    start = _INIT.search(description)
    if start is None:
        return None
    end = closing(description, start.end() - 1)
    try:
        tree = ast.parse(f"def f({description[start.end():end]}): pass")
    except (SyntaxError, ValueError, RecursionError):
        return None
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    names = [a.arg for a in function.args.args]
    defaults: list[ast.expr | None] = [None] * (len(names) - len(function.args.defaults))
    pairs = list(zip(names, defaults + list(function.args.defaults), strict=True))
    return pairs[1:] if names and names[0] == "self" else pairs


def _built(description: str, params: list[str]) -> dict[str, str]:
    """What 'built as Model(1.0)' or 'built as Model(dim), with dim = 1.' gives each parameter."""
    found = _BUILT.search(description)
    if found is None:
        return {}
    named = dict(_WITH_VALUE.findall(found.group(2) or ""))
    try:
        call = ast.parse(found.group(1), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return {}
    if not isinstance(call, ast.Call):
        return {}
    arguments = [ast.unparse(a) for a in call.args]
    return {param: named.get(argument, argument)
            for param, argument in zip(params, arguments, strict=False)}
