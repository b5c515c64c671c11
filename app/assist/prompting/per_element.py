"""A Model's element-wise forward as one line of CUDA C, after the glossary's lines (hints).

The glossary says what each call computes with v for its input; a 135M model that must then
compose `x * torch.sigmoid(x)` from those pieces often drops one (`x * (1.0f + expf(-x))`). So
where the description's forward is a single `return` of an element-wise expression over inputs
of out's own shape (arithmetic, constants, self attributes the constructor sets, and the
glossary's element-wise calls), the prompt also gets that expression for one element, in the
tensors' dtype: `out[i] = x[i] * (1.0f / (1.0f + expf(-x[i])))`. A reduction or scan along one
dim gets its loop instead (along_dim), and a matrix product its row-times-column loop
(contraction). Anything else (a broadcast, a call it does not know, a
statement before the return, a Model cut short in the description) gives no line: a wrong line
would mislead more than none.
"""

from __future__ import annotations

import ast
import copy
import math
import operator
import re
from collections.abc import Callable

from app.assist.prompting.along_dim import (
    FLOATS,
    LOAD,
    STORE,
    along_dim,
    plain_sizes,
    replaced,
)
from app.assist.prompting.contraction import contraction
from app.assist.prompting.glossary import (
    HEADING,
    MAX_LINES,
    bracketed,
    closing,
    element_form,
    is_module,
    model_constants,
)
from app.assist.prompting.glossary import hints as call_hints
from app.assist.prompting.row_stats import row_statistics

_FORWARD = re.compile(r"def forward\(")
_SHAPED = re.compile(r"(\w+) \((float32|float16|bfloat16|int32|int64|uint8|bool), shape "
                     r"([^)]+)\)")
_ANNOTATION = re.compile(r"\s*(->[^:]*)?:")
MAX_RETURN = 400
# The most text between a forward's docstring and its return that is read as temporaries.
MAX_BODY = 1500
_OPS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def forward_return(description: str) -> tuple[list[str], ast.expr] | None:
    """The forward's tensor parameters and its one returned expression, or None when the
    description has no forward or the forward does more than return one expression."""
    found = _FORWARD.search(description)
    if found is None:
        return None
    end = closing(description, found.end() - 1)
    if end < 0:
        return None
    try:
        signature = ast.parse(f"def f({description[found.end():end]}): pass").body[0]
    except (SyntaxError, ValueError, RecursionError):
        return None
    assert isinstance(signature, ast.FunctionDef)
    names = [a.arg for a in signature.args.args if a.arg != "self"]
    body = _after_docstring(description[end + 1:])
    keyword = -1 if body is None else body.find("return ")
    if body is None or keyword < 0:
        return None
    temporaries = _temporaries(body[:keyword])
    expression = _longest_expression(body[keyword + len("return "):][:MAX_RETURN])
    if expression is None or temporaries is None or not _all_read(temporaries, expression):
        return None
    return names, _inlined(expression, temporaries)


def _after_docstring(text: str) -> str | None:
    """What follows a signature's bracket once the return annotation, the colon and a
    docstring are passed; None where they do not come first."""
    found = _ANNOTATION.match(text)
    if found is None:
        return None
    rest = text[found.end():].lstrip()
    for quote in ('"""', "'''"):
        if rest.startswith(quote):
            close = rest.find(quote, len(quote))
            return None if close < 0 else rest[close + len(quote):]
    return rest


def _temporaries(text: str) -> list[tuple[str, ast.expr]] | None:
    """The forward's statements before its return when each names one value (`rms =
    torch.sqrt(...)`, as KernelBench's Models often write), in order; [] for none, None for
    anything else (a loop, a call for its effect, a tuple unpacked, a name never read again).

    Prompts get the Model on one line, so where a statement or a comment ends is found, not
    read: a comment runs to the first `name =` after it, and a statement to the first point
    after which the rest reads as statements too."""
    if len(text) > MAX_BODY:
        return None
    statements = _split(" ".join(text.split()))
    if statements is None:
        return None
    return [(s.targets[0].id, s.value) for s in statements]  # type: ignore[attr-defined]


def _all_read(temporaries: list[tuple[str, ast.expr]], expression: ast.expr) -> bool:
    """Whether each temporary is read by a later one or by the return: one that is not is
    most likely a comment's words taken for code."""
    for number, (name, _value) in enumerate(temporaries):
        readers = [value for _name, value in temporaries[number + 1:]] + [expression]
        if not any(isinstance(node, ast.Name) and node.id == name
                   for reader in readers for node in ast.walk(reader)):
            return False
    return True


_ASSIGNS = re.compile(r"(?<![\w.])\w+\s*=(?!=)")


def _split(text: str) -> list[ast.stmt] | None:
    """The one-line text as one-name assignments (comments left out), or None."""
    if not text:
        return []
    if text.startswith("#"):  # a comment runs to the next assignment, or to the return
        found = _ASSIGNS.search(text)
        return [] if found is None else _split(text[found.start():])
    ends = [m.start() for m in _ASSIGNS.finditer(text) if m.start() > 0]
    ends += [m.start() for m in re.finditer("#", text)] + [len(text)]
    for end in sorted(set(ends)):
        try:
            parsed = ast.parse(text[:end]).body
        except (SyntaxError, ValueError, RecursionError):
            continue
        if len(parsed) != 1 or not (isinstance(parsed[0], ast.Assign) and
                                    len(parsed[0].targets) == 1 and
                                    isinstance(parsed[0].targets[0], ast.Name)):
            return None
        rest = _split(text[end:].strip())
        if rest is not None:
            return [parsed[0], *rest]
    return None


def _inlined(expression: ast.expr, temporaries: list[tuple[str, ast.expr]]) -> ast.expr:
    """The expression with each temporary's name replaced by its value, the later ones first
    so that a value that reads an earlier temporary is inlined in its turn."""
    for name, value in reversed(temporaries):
        expression = _Inline(name, value).visit(expression)
    return ast.fix_missing_locations(expression)


class _Inline(ast.NodeTransformer):
    """Replaces one name, where read, by a copy of its value."""

    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return copy.deepcopy(self.value) if node.id == self.name else node


def _longest_expression(text: str) -> ast.expr | None:
    """The longest prefix of `text`, cut at a space, that parses as one expression (the
    description is one line: the forward's return runs into whatever follows it). None where
    the import cut the Model short right after it ('... (the rest is in problem.py)'): the
    expression may go on."""
    cuts = [len(text)] + [m.start() for m in re.finditer(r"\s", text)][::-1]
    for cut in cuts:
        try:
            parsed = ast.parse(text[:cut].strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            continue
        return None if text[cut:].lstrip().startswith("...") else parsed
    return None


def shapes(description: str) -> dict[str, tuple[str, str]]:
    """Each tensor the description names with its dtype and shape: x -> (float32, 'n x m')."""
    return {name: (dtype, shape.strip()) for name, dtype, shape in _SHAPED.findall(description)}


class _Writer:
    """Turns one expression into CUDA C for element i, or fails (None) on anything unknown."""

    def __init__(self, inputs: dict[str, str], constants: dict[str, str],
                 floating: bool) -> None:
        self.inputs, self.constants, self.floating = inputs, constants, floating

    def write(self, node: ast.AST) -> str | None:
        """The C text of `node`, or None."""
        if isinstance(node, ast.Name):
            return self.inputs.get(node.id) or self._number(self.constants.get(node.id))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "self":
            return self._number(self.constants.get(node.attr))
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            return self._number(repr(node.value)) if isinstance(node.value, int | float) else None
        folded = _folded(node)
        if folded is not None:
            return self._number(repr(folded))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self.write(node.operand)
            return None if inner is None else (f"-{_wrap(inner)}" if isinstance(node.op, ast.USub)
                                               else inner)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                type(node.ops[0]) in _COMPARISONS:
            left, right = self.write(node.left), self.write(node.comparators[0])
            return None if left is None or right is None else \
                f"{_wrap(left)} {_COMPARISONS[type(node.ops[0])]} {_wrap(right)}"
        if isinstance(node, ast.Call):
            return self._arithmetic(node) or self._call(node)
        return None

    def _arithmetic(self, node: ast.Call) -> str | None:
        """torch.add, sub, mul, div, neg, abs, maximum, minimum, where and lerp, for integers
        too (the glossary's forms are float C)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or node.keywords:
            return None
        operands = list(node.args) if is_module(ast.unparse(func.value)) else \
            [func.value, *node.args]
        written = [self.write(o) for o in operands]
        if any(w is None for w in written):
            return None
        shape = _ARITHMETIC.get((func.attr, len(written)))
        if shape is None or (func.attr in _FLOAT_ONLY and not self.floating):
            return None
        texts = [_wrap(w) for w in written if w is not None]
        if self.floating:
            shape = _FLOAT_NAMES.get(func.attr, shape)
        return shape.format(*texts)

    def _number(self, text: str | None) -> str | None:
        """A constant as a literal of the tensors' kind (float32 math, or integers)."""
        if text is None:
            return None
        try:
            value = float(text)
        except ValueError:
            return None
        if not self.floating:
            return str(int(value)) if value.is_integer() and abs(value) < 2**31 else None
        return f"{value!r}f"

    def _binary(self, node: ast.BinOp) -> str | None:
        """+, -, *, / (in integers a division is refused: Python's floors, C's truncates), and
        a power (squares written as products)."""
        left, right = self.write(node.left), self.write(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow):
            if _folded(node.right) == 2:
                return f"{_wrap(left)} * {_wrap(left)}"
            return f"powf({left}, {right})" if self.floating else None
        symbol = _OPS.get(type(node.op))
        if symbol is None or (symbol == "/" and not self.floating):
            return None
        return f"{_wrap(left)} {symbol} {_wrap(right)}"

    def _call(self, node: ast.Call) -> str | None:
        """A known element-wise call with its input(s) written in (a method's input is its
        owner: x.relu())."""
        func = node.func
        if not isinstance(func, ast.Attribute):
            return None
        method = not is_module(ast.unparse(func.value))
        operands = ([func.value] if method else []) + list(node.args)
        form = element_form(node, self.constants, method)
        if form is None or not self.floating:
            return None
        names = ("cond", "a", "b") if "cond" in form else ("a", "b") if re.search(
            r"\bb\b", form) else ("v",)
        written = [self.write(o) for o in operands[:len(names)]]
        if len(written) < len(names) or any(w is None for w in written):
            return None
        # All at once: an input written in for a may itself be named b (b[i]).
        texts = {n: _wrap(t) for n, t in zip(names, written, strict=True) if t is not None}
        return re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: texts[m.group(1)], form)


_COMPARISONS: dict[type, str] = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=",
                                 ast.Eq: "==", ast.NotEq: "!="}
# (name, operands) -> C, with the operands in order; max/min/abs get their float names.
_ARITHMETIC = {("add", 2): "{0} + {1}", ("sub", 2): "{0} - {1}", ("mul", 2): "{0} * {1}",
               ("div", 2): "{0} / {1}", ("neg", 1): "-{0}", ("abs", 1): "abs({0})",
               ("maximum", 2): "max({0}, {1})", ("minimum", 2): "min({0}, {1})",
               ("where", 3): "{0} ? {1} : {2}", ("lerp", 3): "{0} + {2} * ({1} - {0})"}
_FLOAT_ONLY = frozenset({"div", "lerp"})
_FLOAT_NAMES = {"abs": "fabsf({0})", "maximum": "fmaxf({0}, {1})", "minimum": "fminf({0}, {1})"}


def _wrap(text: str) -> str:
    """The text bracketed unless it is one operand already (a name, an element, a number, a
    call): `x[i]` and `expf(v)` stay, `a + b` becomes `(a + b)`."""
    if re.fullmatch(r"[\w.\[\]]+", text):
        return text
    call = re.match(r"[A-Za-z_]\w*[(\[]", text)  # a call, or an element x[...]
    if call is not None and closing(text, call.end() - 1) == len(text) - 1:
        return text
    if bracketed(text):
        return text
    return f"({text})"


# Constants a forward may spell through math (GELU's sqrt(2 / pi)): folded into one number.
_MATH = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "tanh": math.tanh,
         "pi": math.pi, "e": math.e}


def _folded(node: ast.AST) -> float | None:
    """The value of a subexpression of numbers and math's constants and functions, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and \
            not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "math":
        value = _MATH.get(node.attr)
        return value if isinstance(value, float) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _folded(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
        left, right = _folded(node.left), _folded(node.right)
        try:
            return None if left is None or right is None else _FOLD[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError):
            return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            ast.unparse(node.func.value) == "math" and len(node.args) == 1:
        function, argument = _MATH.get(node.func.attr), _folded(node.args[0])
        if callable(function) and argument is not None:
            try:
                return float(function(argument))
            except (ValueError, OverflowError):
                return None
    return None


_FOLD: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow}


def hints(description: str, limit: int = MAX_LINES) -> list[str]:
    """The glossary's lines for the description's calls, then its per-element line when the
    forward has one (under the glossary's heading either way); [] for neither."""
    lines = call_hints(description, limit)
    whole = per_element(description, model_constants(description))
    if whole is None:
        return lines
    return [*(lines or [HEADING]), whole]


def per_element(description: str, constants: dict[str, str]) -> str | None:
    """'- per element: out[i] = x[i] * (1.0f / (1.0f + expf(-x[i])))', or None."""
    found = forward_return(description)
    known = shapes(description)
    if found is None or not known:
        return None
    names, expression = found
    out = _output(description, known, names)
    if out is None or any(n not in known for n in names):
        return None
    reduced = _loop_line(expression, names, known, out, constants)
    if reduced is not None:
        return reduced
    if any(known[n][1] != known[out][1] for n in names):
        return None
    dtype = known[out][0]
    if any(known[n][0] != dtype for n in names):
        return None
    writer = _Writer(_elements(names, known, "i"), constants, dtype in FLOATS)
    text = writer.write(expression)
    if text is None:
        return None
    if bracketed(text):
        text = text[1:-1]
    return f"- per element: {out}[i] = {STORE.get(dtype, '{}').format(text)};"


# Stands for the loop's result while the math around it is written (a name, so never bracketed).
_RESULT = "RESULT_"


def _loop_line(expression: ast.expr, names: list[str], known: dict[str, tuple[str, str]],
               out: str, constants: dict[str, str]) -> str | None:
    """The loop line of a reduction, scan or matrix product: the whole return, or one call in
    it with element-wise math of its result and constants around it (`torch.relu(A @ B) *
    self.alpha`, `x.sum(dim=1) * 0.5`): that math is applied to the loop's result."""
    store = STORE.get(known[out][0], "{}")
    line = _reduction_or_product(expression, names, known, out, constants, store.format) or \
        _row_statistics(expression, names, known, out, constants, store.format)
    if line is not None or known[out][0] not in FLOATS:
        return line
    for node in ast.walk(expression):
        if node is expression or not isinstance(node, ast.Call | ast.Subscript | ast.BinOp):
            continue
        outside = replaced(expression, {ast.unparse(node): _RESULT})
        # The math around may use constants only: an input there would be read at out's index.
        math = None if outside is None else \
            _Writer({_RESULT: _RESULT}, constants, True).write(outside)
        if math is None:
            continue

        def finish(result: str, math: str = math) -> str:
            return store.format(math.replace(_RESULT, _wrap(result)))

        line = _reduction_or_product(node, names, known, out, constants, finish)
        if line is not None:
            return line
    return None


def _reduction_or_product(expression: ast.expr, names: list[str],
                          known: dict[str, tuple[str, str]], out: str,
                          constants: dict[str, str], finish: Callable[[str], str]) -> str | None:
    """The line of a reduction or scan along a dim, or of a matrix product, or None."""
    return _along_dim(expression, names, known, out, constants, finish) or \
        contraction(expression, known, out, finish)


def _along_dim(expression: ast.expr, names: list[str], known: dict[str, tuple[str, str]],
               out: str, constants: dict[str, str], finish: Callable[[str], str]) -> str | None:
    """along_dim's line for a forward whose first input is a float type (masks may be other
    dtypes), out of that type or int64 (argmax), with sizes that are plain names or numbers."""
    shape = plain_sizes(known[names[0]][1]) if names else None
    dtype = known[names[0]][0] if names else ""
    if not shape or dtype not in FLOATS or known[out][0] not in (dtype, "int64"):
        return None

    def operand(index: str) -> Callable[[ast.AST], str | None]:
        return _Writer(_elements(names, known, index), constants, True).write

    return along_dim(expression, shape, out, is_module, constants, operand, _taken(known), finish)


def _row_statistics(expression: ast.expr, names: list[str], known: dict[str, tuple[str, str]],
                    out: str, constants: dict[str, str],
                    finish: Callable[[str], str]) -> str | None:
    """row_statistics' line where every input has out's float dtype and shape, in plain
    sizes."""
    dtype, sizes = known[out]
    shape = plain_sizes(sizes)
    if not names or shape is None or dtype not in FLOATS or \
            any(known[n] != known[out] for n in names):
        return None

    def reads(index: str) -> dict[str, str]:
        return _elements(names, known, index)

    def writer(texts: dict[str, str]) -> Callable[[ast.AST], str | None]:
        return _Writer(texts, constants, True).write

    return row_statistics(expression, shape, out, constants, is_module, _taken(known), reads,
                          writer, finish)


def _elements(names: list[str], known: dict[str, tuple[str, str]], index: str) -> dict[str, str]:
    """Each input's element at `index` as C text, read through float where it is half."""
    return {n: LOAD.get(known[n][0], "{}").format(f"{n}[{index}]") for n in names}


def _taken(known: dict[str, tuple[str, str]]) -> set[str]:
    """The description's tensor and size names (a loop's own names must differ)."""
    return {*known, *(size for _, sizes in known.values() for size in sizes.split(" x "))}


def _output(description: str, known: dict[str, tuple[str, str]], names: list[str]) -> str | None:
    """The one output the description names ('into out (float32, ...)')."""
    found = re.search(r"into (\w+) \(", description)
    if found is None or found.group(1) not in known or found.group(1) in names:
        return None
    return found.group(1)
