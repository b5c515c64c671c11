"""The generator of training examples: candidates across the level-1 and level-2 families, in
turn, with names, dtypes, shapes and launch shapes drawn from a seeded generator (the same seed
gives the same candidates). Nothing here is trusted: every candidate goes through spec-check and
verification before it may enter a training set (app.assist.teach.data)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from app.assist.teach import dimnorm, dimreduce, exprs, losses, maps, matmul, reduce, shaped
from app.assist.teach.candidate import Candidate
from app.assist.teach.ops import FLOAT_OPS, INT_OPS

Family = Callable[[random.Random, str], Candidate]
FAMILIES: dict[str, Family] = {
    "formula": exprs.formula,
    "matrix_formula": exprs.matrix_formula,
    "elementwise": maps.elementwise,
    "activation": maps.activation,
    "cast": maps.cast,
    "broadcast": maps.broadcast,
    "row_reduction": reduce.row_reduce,
    "reduction": reduce.whole_reduce,
    "softmax": reduce.softmax,
    "norm": reduce.rms_norm,
    "transpose": reduce.transpose,
    "shaped_map": shaped.shaped_map,
    "strided_map": shaped.strided_map,
    "dim_reduce": dimreduce.dim_reduce,
    "dim_along": dimnorm.dim_along,
    "mat_product": matmul.mat_product,
    "whole_loss": losses.whole_loss,
}

# Formulas are the widest family (any expression, scalars, capped grids); the shaped maps speak
# every register over 1-D to 3-D tensors, and the families after them teach what an imported
# problem's launch (one thread per output element) asks of a reduction, a normalization, a
# product or a loss (issue 27): they come this many times per turn of the others.
WEIGHTS = {"formula": 3, "matrix_formula": 2, "shaped_map": 6, "strided_map": 3,
           "dim_reduce": 3, "dim_along": 3, "mat_product": 3, "whole_loss": 2}


# The families whose candidates are one operation of app.assist.teach.ops (--op chooses among
# them).
OP_FAMILIES = ("shaped_map", "strided_map")


def op_tags() -> list[str]:
    """The operations the shaped and strided maps draw from, by tag."""
    return sorted({op.tag for op in (*FLOAT_OPS, *INT_OPS)})


def candidates(seed: int, families: list[str] | None = None,
               ops: list[str] | None = None) -> Iterator[Candidate]:
    """Endless candidates, one family after another; each entry name ends in a counter so that
    no two candidates of one run share a name. With `ops`, only shaped and strided maps of
    those operations (ValueError for an unknown tag or a family that has none)."""
    if ops:
        families = _op_families(families, ops)
    return _endless(seed, families or list(FAMILIES), ops)


def _endless(seed: int, families: list[str], ops: list[str] | None) -> Iterator[Candidate]:
    """The candidates of candidates(), drawn (its arguments checked before the first)."""
    rng = random.Random(seed)
    chosen = [FAMILIES[name] for name in families for _ in range(WEIGHTS.get(name, 1))]
    number = 0
    while True:
        for family in chosen:
            number += 1
            candidate = family(rng, f"g{seed}_{number}")
            if not ops or candidate.extra.get("traits", {}).get("op") in ops:
                yield candidate


def _op_families(families: list[str] | None, ops: list[str]) -> list[str]:
    """The families that can draw the operations `ops`, checked."""
    unknown = sorted(set(ops) - set(op_tags()))
    if unknown:
        raise ValueError(f"no operation {', '.join(unknown)}; choose among "
                         f"{', '.join(op_tags())}")
    chosen = [f for f in (families or OP_FAMILIES) if f in OP_FAMILIES]
    if not chosen:
        raise ValueError(f"--op draws from {' and '.join(OP_FAMILIES)} only, and --family "
                         "names neither")
    return chosen
