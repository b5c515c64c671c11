"""Keeping KernelBench out of training data, so that it stays a fair measure (issue 27).

A KernelBench problem is known here by a fingerprint of our own making (kbdata.py, built once
from a snapshot by `python -m app.assist.teach.kbprints`; the snapshot is not needed at run
time, and a module ships in the wheel as any code does): its level and file stem, the
operations its forward computes (calls, layers and operators, counted, with aliases such as
F.relu / torch.relu / x.relu() and torch.mul / `*` made one) and the content words of its
docstring.

A candidate is refused when it names a problem (`19_ReLU`, `kb_19_relu`), is an imported problem
(a [task] tagged kernelbench, a description that says KernelBench, a problem.py beside its spec),
carries a PyTorch expression or forward body that computes exactly a problem's operations
whatever the names, dims and constants (`torch.relu(inp)` over any shape is 19_ReLU;
`torch.relu(x) * alpha` is not), or copies a problem's docstring (nearly). The operation itself
is not refused in other registers: `y[i] = max(x[i], 0)` teaches ReLU as the project always has.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

PRINTS = Path(__file__).with_name("kbdata.py")
# Docstrings sharing at least this share of a problem's content words are near copies.
NEAR_WORDS = 0.8
MIN_DOC_WORDS = 4
MAX_EXPRESSION = 400
STOP_WORDS = frozenset("""a an the of to and or for in on with by that this is are it its as be
into from over each every then which model simple performs perform applies apply computes
compute returns return tensor tensors input inputs output outputs given using""".split())
# Calls that only move or describe data: not part of what a forward computes.
PLUMBING = frozenset({"size", "dim", "contiguous", "float", "half", "to", "type", "numel",
                      "view", "reshape", "super", "__init__", "cuda", "cpu", "detach",
                      "unsqueeze", "squeeze", "expand", "expand_as", "flatten"})
ALIASES = {"mul": "*", "multiply": "*", "add": "+", "sub": "-", "subtract": "-", "div": "/",
           "divide": "/", "true_divide": "/", "matmul": "@", "mm": "@", "bmm": "@",
           "square": "**", "pow": "**", "amax": "max", "amin": "min", "clip": "clamp",
           "negative": "neg", "expit": "sigmoid", "relu_": "relu", "swish": "silu",
           "absolute": "abs", "logsigmoid": "log_sigmoid", "rsub": "-"}
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
             ast.Pow: "**", ast.MatMult: "@", ast.Mod: "%", ast.USub: "neg", ast.Gt: ">",
             ast.Lt: "<", ast.GtE: ">=", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!=",
             ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Invert: "~"}
_BACKTICKS = re.compile(r"`([^`\n]{1,400})`")
_FENCE = re.compile(r"```(?:python|py)?\n(.*?)```", re.S)
_RETURN = re.compile(r"\breturn\s+([^\n;]{1,400})")
_WORD = re.compile(r"[a-z][a-z0-9]*")


@dataclass(frozen=True)
class Print:
    """One KernelBench problem as the guard knows it."""

    level: int
    stem: str
    ops: tuple[tuple[str, int], ...]
    doc_words: tuple[str, ...]

    @property
    def entry(self) -> str:
        """The entry `kernel-studio import kernelbench` names its task with."""
        return "kb_" + re.sub(r"[^a-z0-9]+", "_", self.stem.lower()).strip("_")

    def as_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {"level": self.level, "stem": self.stem, "ops": dict(self.ops),
                "doc_words": list(self.doc_words)}


def canonical(name: str) -> str:
    """A call's or layer's name as the fingerprints count it."""
    lowered = name.lower()
    return ALIASES.get(lowered, lowered)


def _called(node: ast.Call, layers: dict[str, str]) -> str:
    """The operation a call performs: torch.relu, F.relu and x.relu() give relu; self.conv(x)
    gives the layer it was built as (conv2d)."""
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id == "self" and func.attr in layers:
            return layers[func.attr]
        return canonical(func.attr)
    return canonical(func.id) if isinstance(func, ast.Name) else ""


def ops_of(tree: ast.AST, layers: dict[str, str] | None = None) -> Counter[str]:
    """The operations computed in a piece of Python: calls and operators, counted."""
    layers = layers or {}
    found: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _called(node, layers)
            if name and name not in PLUMBING:
                found[name] += 1
        elif isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            continue  # a negative number, not a negation
        elif isinstance(node, ast.BinOp | ast.UnaryOp) and type(node.op) in OPERATORS:
            found[OPERATORS[type(node.op)]] += 1
        elif isinstance(node, ast.Compare):
            found.update(OPERATORS.get(type(op), "cmp") for op in node.ops)
    return found


def _parse_prefix(text: str) -> ast.AST | None:
    """The longest start of text that parses as a Python expression (a sentence may follow it:
    `torch.abs(x) for x of shape ...`)."""
    text = text[:MAX_EXPRESSION].rstrip()
    for end in range(len(text), 0, -1):
        try:
            return ast.parse(text[:end].strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            continue
    return None


def _parse_block(text: str) -> ast.Module | None:
    """A code block as Python (statements), or None."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def layers_of(model: ast.ClassDef) -> dict[str, str]:
    """self.name = nn.Layer(...) in a class's methods: name -> the layer's operation."""
    layers = {}
    for node in ast.walk(model):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            layer = func.attr if isinstance(func, ast.Attribute) else ""
            for target in node.targets:
                if isinstance(target, ast.Attribute) and layer:
                    layers[target.attr] = canonical(layer)
    return layers


def model_forward(tree: ast.Module, name: str | None = None
                  ) -> tuple[ast.ClassDef, ast.FunctionDef] | None:
    """The class (named `name`, or the first one) that has a forward method, and that method."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and name in (None, node.name):
            forward = next((n for n in node.body if isinstance(n, ast.FunctionDef)
                            and n.name == "forward"), None)
            if forward is not None:
                return node, forward
    return None


def block_ops(tree: ast.Module, name: str | None = None) -> Counter[str]:
    """What a block computes: the forward of its module class (named `name`, or the first),
    its self.layer calls read as the layers its methods built (self.conv(x) is conv2d); or
    else every statement."""
    found = model_forward(tree, name)
    if found is None:
        return ops_of(tree)
    model, forward = found
    return ops_of(ast.Module(body=forward.body, type_ignores=[]), layers_of(model))


def expressions_in(text: str) -> list[Counter[str]]:
    """The operations of every piece of Python a description carries: code fences, `spans`
    and `return ...` statements; pieces that compute nothing are left out."""
    blocks = [_parse_block(block) for block in _FENCE.findall(text)]
    found = [block_ops(tree) for tree in blocks if tree is not None]
    spans = [_parse_prefix(span) for span in _BACKTICKS.findall(_FENCE.sub(" ", text))]
    spans += [_parse_prefix(tail) for tail in _RETURN.findall(text)]
    found += [ops_of(tree) for tree in spans if tree is not None]
    return [ops for ops in found if ops]


def content_words(text: str) -> set[str]:
    """A text's words without the common ones."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def _sentences(text: str) -> list[str]:
    """A description cut into sentences (and docstring lines)."""
    return [s for s in re.split(r"(?<=[.!?])\s+|\n|\"\"\"", text) if s.strip()]


def load_prints(text: str | None = None) -> tuple[Print, ...]:
    """The fingerprints shipped with the app (or those of a kbdata text)."""
    if text is None:
        from app.assist.teach import kbdata

        text = kbdata.TEXT
    data = json.loads(text)
    return tuple(Print(int(p["level"]), str(p["stem"]), tuple(sorted(p["ops"].items())),
                       tuple(p["doc_words"])) for p in data["problems"])


@dataclass(frozen=True)
class KernelBenchGuard:
    """Refuses KernelBench problems and near copies of them."""

    prints: tuple[Print, ...]

    @classmethod
    def shipped(cls) -> KernelBenchGuard:
        """The guard of the fingerprints shipped with the app."""
        return cls(load_prints())

    def refuse(self, entry: str, description: str, spec_text: str = "",
               folder: Path | None = None) -> str:
        """Why this candidate shows a KernelBench problem ('' when it does not)."""
        return (self._imported(description, spec_text, folder)
                or self._named(f"{entry} {description}")
                or self._computes(description) or self._copies_doc(description))

    def _imported(self, description: str, spec_text: str, folder: Path | None) -> str:
        """A task made by `import kernelbench` (or one that says it is KernelBench's)."""
        tags = re.search(r"^\s*tags\s*=\s*\[[^\]]*\"kernelbench\"", spec_text, re.M | re.I)
        if tags or "kernelbench" in description.lower():
            return "is a KernelBench problem (its task says so)"
        if folder is not None and (folder / "problem.py").is_file():
            return "is an imported KernelBench problem (a problem.py lies beside its spec)"
        return ""

    def _named(self, text: str) -> str:
        """A problem's stem or its imported entry name, as a word."""
        words = set(re.findall(r"\w+", text.lower()))
        for found in self.prints:
            if found.stem.lower() in words or found.entry in words:
                return f"names the KernelBench problem {found.stem}"
        return ""

    def _computes(self, description: str) -> str:
        """A PyTorch expression computing exactly a problem's operations."""
        for ops in expressions_in(description):
            key = tuple(sorted(ops.items()))
            for found in self.prints:
                if found.ops == key:
                    return (f"its PyTorch expression computes what KernelBench level "
                            f"{found.level} problem {found.stem} computes")
        return ""

    def _copies_doc(self, description: str) -> str:
        """A sentence, or the whole description (a docstring of several sentences), that holds
        (nearly) all of a problem docstring's content words and not many more."""
        pieces = [content_words(s) for s in _sentences(description)]
        pieces.append(content_words(description))
        for found in self.prints:
            doc = set(found.doc_words)
            if len(doc) >= MIN_DOC_WORDS and any(_near(doc, words) for words in pieces):
                return f"copies the docstring of the KernelBench problem {found.stem}"
        return ""


def _near(doc: set[str], words: set[str]) -> bool:
    """Whether words hold nearly all of a docstring's and are not more than twice as many."""
    return len(doc & words) >= NEAR_WORDS * len(doc) and len(words) <= 2 * len(doc)
