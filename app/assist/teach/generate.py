"""The generator of training examples: candidates across the level-1 and level-2 families, in
turn, with names, dtypes, shapes and launch shapes drawn from a seeded generator (the same seed
gives the same candidates). Nothing here is trusted: every candidate goes through spec-check and
verification before it may enter a training set (app.assist.teach.data)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from app.assist.teach import dimnorm, dimreduce, exprs, losses, maps, matmul, reduce, shaped
from app.assist.teach.candidate import Candidate

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


def candidates(seed: int, families: list[str] | None = None) -> Iterator[Candidate]:
    """Endless candidates, one family after another; each entry name ends in a counter so that
    no two candidates of one run share a name."""
    rng = random.Random(seed)
    chosen = [FAMILIES[name] for name in (families or list(FAMILIES))
              for _ in range(WEIGHTS.get(name, 1))]
    number = 0
    while True:
        for family in chosen:
            number += 1
            yield family(rng, f"g{seed}_{number}")
