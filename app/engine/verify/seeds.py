"""Which seeds a verification runs, and how each run's outputs start (buffers.Start).

The spec's seeds 0, 1, 2, ... give inputs anyone can compute from the spec: a kernel that
carries the first input words of those seeds can recognise them and be right only there. So
every verification also runs seeds drawn from the operating system's randomness when it
starts (VerifyOptions.random_seeds, 1 by default, whoever the caller is), and the verdict
records them (Verdict.fresh_seeds) for a replay with `verify --seed S`.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from app.base import settings
from app.engine.verify.buffers import START_CYCLE, Start, start_for

# Fresh seeds every caller gets on top of the spec's (0: runs that repeat exactly).
DEFAULT_RANDOM_SEEDS = settings.RANDOM_SEEDS
# Fresh seeds are at least this, so they never repeat a spec's seeds (at most 1000); a multiple
# of len(START_CYCLE), so a drawn seed's start is what its draw chose.
FRESH_FLOOR = 1002
SEED_LIMIT = 2**32
# Every case runs at least once with each of these starts (buffers.Start says why both).
REQUIRED_STARTS = (Start.ZEROS, Start.POISON)


def missing_starts(seeds: Sequence[int]) -> list[Start]:
    """The required starts that none of `seeds` gives."""
    have = {start_for(seed) for seed in seeds}
    return [start for start in REQUIRED_STARTS if start not in have]


def draw_seeds(count: int, before: Sequence[int] = ()) -> tuple[int, ...]:
    """`count` seeds from the OS's randomness, never one of the spec's. The first ones start
    their outputs as the seeds `before` them never do (a spec with one or two seeds then
    still sees zeros and poison without an extra run); the rest start at random."""
    wanted = missing_starts(before)
    span = (SEED_LIMIT - FRESH_FLOOR) // len(START_CYCLE) - 1
    drawn = []
    for position in range(count):
        start = (START_CYCLE.index(wanted[position]) if position < len(wanted)
                 else secrets.randbelow(len(START_CYCLE)))
        drawn.append(FRESH_FLOOR + len(START_CYCLE) * secrets.randbelow(span) + start)
    return tuple(drawn)


def plan_runs(seeds: Sequence[int], cover: bool = True) -> list[tuple[int, Start]]:
    """(seed, start) of every run of one case: each seed with its own start, then, with
    `cover`, the last seed again with each required start none of them gave (only when fresh
    seeds are turned off and the spec has fewer than three seeds)."""
    runs = [(seed, start_for(seed)) for seed in seeds]
    if cover and seeds:
        runs += [(seeds[-1], start) for start in missing_starts(seeds)]
    return runs
