"""A generated example before it is verified: what it computes, its kernel, its reference and
the spec that ties them together, and how it is written to a folder."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.base.fsutil import atomic_write_text

# Names the generator picks from, so the model sees the same idea under many names.
INPUTS = (("x", "y", "z"), ("a", "b", "c"), ("src", "other", "third"), ("u", "v", "w"),
          ("in0", "in1", "in2"), ("lhs", "rhs", "acc"))
OUTPUTS = ("out", "dst", "result", "res", "o", "y_out")
BLOCKS = (64, 128, 256, 512)


@dataclass
class Arg:
    """One [[arg]] of the spec."""

    name: str
    kind: str
    dtype: str
    shape: tuple[str, ...] = ()
    init: str = ""
    value: str = ""

    def toml(self) -> str:
        """The arg as a TOML table."""
        lines = ["[[arg]]", f'name = "{self.name}"', f'kind = "{self.kind}"',
                 f'dtype = "{self.dtype}"']
        if self.shape:
            lines.append("shape = [" + ", ".join(f'"{s}"' for s in self.shape) + "]")
        if self.init:
            lines.append(f'init = "{self.init}"')
        if self.value:
            lines.append(f'value = "{self.value}"')
        return "\n".join(lines) + "\n"


@dataclass
class Candidate:
    """A generated (description, spec, kernel, reference) before verification."""

    family: str
    level: int
    entry: str
    description: str
    kernel: str
    reference: str
    args: list[Arg]
    grid: tuple[str, ...]
    block: tuple[str, ...]
    cases: list[dict[str, int]]
    shared: str = "0"
    extra: dict[str, Any] = field(default_factory=dict)
    # [verify] rtol = atol, where sums of many terms make the dtype's default a lottery
    tolerance: float | None = None

    def spec_text(self) -> str:
        """The spec file's text."""
        quoted = ", ".join(f'"{g}"' for g in self.grid)
        block = ", ".join(f'"{b}"' for b in self.block)
        cases = ", ".join("{ " + ", ".join(f"{k} = {v}" for k, v in c.items()) + " }"
                          for c in self.cases)
        # A description of several lines (a Model's source) is a comment on each of them.
        comment = "\n".join(f"# {line}".rstrip() for line in self.description.splitlines())
        head = (f"{comment}\n\n[kernel]\nsource = \"{self.entry}.cu\"\n"
                f"entry = \"{self.entry}\"\noptions = []\n\n")
        args = "\n".join(a.toml() for a in self.args)
        tail = (f"\n[launch]\ngrid = [{quoted}]\nblock = [{block}]\n"
                f"shared_bytes = \"{self.shared}\"\n"
                f"\n[reference]\npython = \"{self.entry}_ref.py\"\n"
                f"\n[verify]\ncases = [{cases}]\nseeds = 2\n")
        if self.tolerance is not None:
            tail += f"rtol = {self.tolerance}\natol = {self.tolerance}\n"
        return head + args + tail

    def files(self) -> dict[str, str]:
        """File name -> text of the example's three files."""
        return {f"{self.entry}.toml": self.spec_text(), f"{self.entry}.cu": self.kernel,
                f"{self.entry}_ref.py": self.reference}

    def write(self, folder: Path) -> Path:
        """Write the three files into folder; the spec's path."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files().items():
            atomic_write_text(folder / name, text)
        return folder / f"{self.entry}.toml"


def pick_names(rng: random.Random, count: int) -> tuple[list[str], str]:
    """count input names and an output name that differs from them."""
    inputs = list(rng.choice(INPUTS)[:count])
    output = rng.choice([o for o in OUTPUTS if o not in inputs])
    return inputs, output


def flat_cases(rng: random.Random) -> list[dict[str, int]]:
    """Sizes for a 1-D kernel: one element, an odd size and one past a block boundary."""
    return [{"n": 1}, {"n": rng.randint(2, 999)}, {"n": rng.choice((4097, 65537, 10_001))}]


def grid_cases(rng: random.Random) -> list[dict[str, int]]:
    """Sizes for a rows x cols kernel, ragged edges included, and more rows than the largest
    block has threads (else a kernel that handles only its first block would pass)."""
    return [{"rows": 1, "cols": 1}, {"rows": rng.randint(2, 9), "cols": rng.randint(2, 300)},
            {"rows": rng.randint(520, 700), "cols": rng.choice((33, 129, 257))}]


def size_arg(name: str) -> Arg:
    """An int32 scalar carrying a size variable of the same name."""
    return Arg(name, "scalar", "int32", value=name)
