"""Proposing kernels for a spec with the refine loop: what `kernel-studio propose` and the GUI's
Propose and refine share. K chains of up to R rounds each; the first chain is greedy, the others
sample with seeds of their own; the loop stops at the first kernel that passes, which is kept
as a future example (unless the spec is a held-out task).

The spec is read and parsed once per proposal; the Spec (which keeps its text and its [task]
table) is what the suite, the examples, the prompts and the candidates' folders get."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.assist.model.batch import OnRowToken
from app.assist.model.session import GenerationOptions
from app.assist.prompting import compact
from app.assist.prompting.budget import TokenCounter
from app.assist.prompting.examples import choose_examples, library, record_verified, render_examples
from app.assist.refine.attempts import Attempt
from app.assist.refine.loop import Chain, Generator, Job, LoopSettings, RefineLoop
from app.assist.refine.speed import BenchTimer
from app.assist.refine.verifypool import VerifyPool, vouch_for
from app.assist.tasks.suite import HeldOut, description_in, load_heldout
from app.engine.verify.runs import VerifyOptions
from app.spec.model import Spec, load_spec

# Chain 1 is greedy (the model's single best guess); the others sample at this temperature.
SAMPLING_TEMPERATURE = 0.8


@dataclass
class ProposeSettings:
    """How to propose."""

    chains: int = 1
    rounds: int = 3
    max_new_tokens: int = 512
    skills: bool = True
    examples: bool = True
    verify: bool = True
    backend: str = "auto"
    batch: int = 1
    # Keep the fastest that passes (app.assist.refine.speed): rounds after the first pass that
    # ask for a faster kernel, timed on the GPU.
    speed_rounds: int = 0


@dataclass
class Proposal:
    """What a proposing run made: every attempt, the one it gives (the first that passed, or
    with speed rounds the fastest that passed), and where that was kept as an example."""

    attempts: list[Attempt] = field(default_factory=list)
    passed: Attempt | None = None
    kept: Path | None = None
    # The kept kernel's time against the first passing one's (with speed rounds), or None
    speedup: float | None = None


def make_job(spec: Spec, description: str, settings: ProposeSettings, heldout: HeldOut,
             counter: TokenCounter, style: str = "full") -> Job:
    """The job: the spec, the description, skills and examples as the settings say."""
    examples, names = "", tuple[str, ...]()
    # A taught adapter is asked without them.
    if settings.examples and not compact.is_compact(style):
        chosen = choose_examples(library(skip=spec.path), spec, description, heldout, counter)
        examples, names = render_examples(chosen), tuple(e.name for e in chosen)
    return Job(spec.entry, spec, description, "", settings.skills, examples, names,
               vouch_for(spec, settings.backend), style)


def make_chains(job: Job, count: int) -> list[Chain]:
    """Chain 1 greedy, the others sampled, each with its own seed."""
    chains = []
    for index in range(count):
        options = GenerationOptions() if index == 0 else GenerationOptions(
            temperature=SAMPLING_TEMPERATURE, seed=index)
        chains.append(Chain(job, index, index, options))
    return chains


def _winner(chains: list[Chain]) -> Chain | None:
    """The chain whose kernel the proposal gives: of those that passed, the one whose kept
    kernel is fastest where speed rounds timed them, else the first."""
    passed = [c for c in chains if c.passed]
    timed = [(kept.time_ms, c) for c in passed
             if (kept := c.kept) is not None and kept.time_ms is not None]
    if timed:
        return min(timed, key=lambda item: item[0])[1]
    return passed[0] if passed else None


def propose_kernels(model: Generator, spec: Spec | Path, description: str, run_dir: Path,
                    settings: ProposeSettings, stop: threading.Event | None = None,
                    on_attempt: Callable[[Chain, Attempt], None] | None = None,
                    on_token: OnRowToken | None = None) -> Proposal:
    """Run the chains to the first pass (or to their last round, or Stop) for a spec already
    loaded, or the spec file at a path (read here). SpecError for a spec that cannot be read;
    the description defaults to the spec's [task].description."""
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    if spec.path is None:
        raise ValueError("propose needs a spec loaded from a file: candidates are written "
                         "beside a copy of it")
    stop = stop or threading.Event()
    heldout = load_heldout(known=spec)
    description = description or description_in(spec)
    chains = make_chains(make_job(spec, description, settings, heldout, model,
                                   model.prompt_style), settings.chains)
    speed = settings.speed_rounds if settings.verify else 0
    with BenchTimer(settings.backend) as timer, \
            VerifyPool(VerifyOptions(backend=settings.backend), 1, stop) as pool:
        loop = LoopSettings(run_dir, settings.rounds if settings.verify else 1, settings.batch,
                            settings.max_new_tokens, stop_on_first_pass=True,
                            verify=settings.verify, speed_rounds=speed, timer=timer)
        RefineLoop(model, pool, loop, stop, on_attempt, on_token).run(chains)
    attempts = [a for c in chains for a in c.attempts]
    winner = _winner(chains)
    passed = winner.kept if winner is not None else None
    kept = None
    if passed is not None:
        kept = record_verified(Path(passed.folder) / spec.path.name, description, heldout)
    return Proposal(attempts, passed, kept, winner.speedup if winner is not None else None)
