"""Evaluation graded by execution: every task of a suite, K chains of up to R rounds each, every
candidate verified by the real verifier; pass@1 and pass@K, by level and dtype, compile-error
rate, rounds to pass, tokens and time; with two arms (skills or examples on and off), the lift
with a bootstrap interval over tasks. Both arms see the same tasks and the same sampling seeds
(a chain's seed depends on its task and index only).

Nothing here prints: app.cli.commands.eval is the front. A broken task is reported and skipped, a
Stop keeps what was decided, and the result says which of these happened.
"""

from __future__ import annotations

import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.assist.errors import GenerationFailed
from app.assist.evaluation.metrics import Lift, TaskOutcome, lift, summarize
from app.assist.model.session import GenerationOptions
from app.assist.prompting.examples import Example, choose_examples, library, render_examples
from app.assist.refine.attempts import NO_CODE
from app.assist.refine.loop import Chain, Generator, Job, LoopSettings, RefineLoop, undecided
from app.assist.refine.speed import BenchTimer
from app.assist.refine.verifypool import VerifyPool, vouch_for
from app.assist.tasks.suite import HeldOut, Task, TaskError
from app.base import codec
from app.engine.verify.results import BAD_INPUT, Status
from app.engine.verify.runs import VerifyOptions

TOP_P = 0.95
# A light penalty: code repeats tokens (indices, brackets) that a strong one would forbid.
REPETITION_PENALTY = 1.05
SWITCHES = ("on", "off", "both")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Arm:
    """One configuration of the prompts that an evaluation measures."""

    name: str
    skills: bool
    examples: bool


def arms_for(skills: str, examples: str) -> list[Arm]:
    """The arms for --skills and --examples (on, off or both; one of them 'both' at most)."""
    for name, value in (("--skills", skills), ("--examples", examples)):
        if value not in SWITCHES:
            raise ValueError(f"{name} must be on, off or both, not {value!r}")
    if skills == "both" and examples == "both":
        raise ValueError("compare one thing at a time: --skills both or --examples both")
    if skills == "both":
        return [Arm("skills-off", False, examples == "on"), Arm("skills-on", True,
                                                                examples == "on")]
    if examples == "both":
        return [Arm("examples-off", skills == "on", False), Arm("examples-on", skills == "on",
                                                                True)]
    return [Arm(f"skills-{skills}+examples-{examples}", skills == "on", examples == "on")]


@dataclass
class EvalSettings:
    """What to evaluate and how."""

    tasks: list[Task]
    run_dir: Path
    arms: list[Arm]
    k: int = 4
    rounds: int = 3
    max_new_tokens: int = 512
    temperature: float = 0.7
    batch: int = 1
    workers: int = 1
    backend: str = "auto"
    timeout: float = 10.0
    seed: int = 0
    heldout: HeldOut = field(default_factory=lambda: HeldOut(frozenset(), (), ()))
    # Tasks that could not even be loaded: {"task", "message"}.
    broken: list[dict[str, str]] = field(default_factory=list)
    # Rounds after a chain's first pass that ask for a faster kernel (timed on the GPU).
    speed_rounds: int = 0


def _settings_extras(settings: EvalSettings) -> dict[str, Any]:
    """What stored settings say beyond the fields they keep: task names, the sampling
    constants."""
    return {"tasks": [t.name for t in settings.tasks], "top_p": TOP_P,
            "repetition_penalty": REPETITION_PENALTY}


# The settings a stored result records (enough to repeat the run); not the folder, the
# held-out set or the broken tasks.
codec.shape(EvalSettings, _settings_extras, (
    "tasks", "k", "rounds", "arms", "max_new_tokens", "temperature", "top_p",
    "repetition_penalty", "batch", "workers", "backend", "timeout", "seed", "speed_rounds"),
    omit_empty=("speed_rounds",))


@dataclass
class EvalResult:
    """Everything a run found: per arm the task outcomes and their summary, the lifts, the
    tasks that could not be used, and whether Stop cut it short."""

    id: str
    started: str
    settings: dict[str, Any]
    outcomes: dict[str, list[TaskOutcome]] = field(default_factory=dict)
    lifts: list[Lift] = field(default_factory=list)
    broken: list[dict[str, str]] = field(default_factory=list)
    stopped: bool = False
    seconds: float = 0.0
    run_dir: str = ""
    model: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summaries(self) -> dict[str, dict[str, Any]]:
        """The summary of every arm."""
        k = int(self.settings.get("k", 1))
        return {arm: codec.to_object(summarize(items, k))
                for arm, items in self.outcomes.items()}

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description (what the store keeps: the codec's data)."""
        return codec.to_object(self)


def _result_extras(result: EvalResult) -> dict[str, Any]:
    """A stored result beyond its fields: the time to the centisecond, every arm's summary."""
    return {"seconds": round(result.seconds, 2), "summaries": result.summaries()}


codec.shape(EvalResult, _result_extras, (
    "id", "started", "seconds", "settings", "model", "stopped", "run_dir", "broken", "notes",
    "summaries", "lifts", "outcomes"))


def chain_seed(task: str, index: int, seed: int) -> int:
    """A chain's sampling seed: its task and index (and the run's seed), nothing else, so every
    arm and every machine draws the same numbers for it."""
    return zlib.crc32(f"{seed}/{task}/{index}".encode()) & 0x7FFFFFFF


def _examples_for(task: Task, arm: Arm, shelf: list[Example], heldout: HeldOut,
                  counter: Generator) -> tuple[str, tuple[str, ...]]:
    """The rendered examples of a task in an arm, and their names."""
    if not arm.examples:
        return "", ()
    chosen = choose_examples(shelf, task.spec(), task.description, heldout, counter)
    return render_examples(chosen), tuple(e.name for e in chosen)


def _jobs(settings: EvalSettings, counter: Generator,
          broken: list[dict[str, str]]) -> list[tuple[Task, Job]]:
    """One job per task and arm; broken tasks are listed in `broken` and left out."""
    shelf = library(include_user=False) if any(a.examples for a in settings.arms) else []
    jobs = []
    for task in settings.tasks:
        try:
            spec = task.spec()
            for arm in settings.arms:
                text, names = _examples_for(task, arm, shelf, settings.heldout, counter)
                jobs.append((task, Job(task.name, spec, task.description, arm.name, arm.skills,
                                       text, names, vouch_for(spec, settings.backend),
                                       counter.prompt_style)))
        except TaskError as error:
            broken.append({"task": task.name, "message": str(error)})
    return jobs


def _chains(settings: EvalSettings, jobs: list[tuple[Task, Job]]) -> list[Chain]:
    """K chains per job, interleaved so that a batch holds both arms of a task."""
    chains = []
    for index in range(settings.k):
        for task, job in jobs:
            seed = chain_seed(task.name, index, settings.seed)
            options = GenerationOptions(settings.temperature, TOP_P, REPETITION_PENALTY, seed)
            chains.append(Chain(job, index, seed, options))
    return chains


def _decided(chain: Chain) -> bool:
    """Whether a chain says something about the model: it passed, or it ended on a verdict
    about the kernel (not on Stop, an unverified run or a broken spec)."""
    if chain.passed:
        return True
    last = chain.attempts[-1] if chain.attempts else None
    return bool(chain.finished and last is not None and not undecided(last.status))


def outcome(task: Task, chains: list[Chain]) -> TaskOutcome:
    """A task's outcome in one arm, from its chains."""
    decided = [c for c in chains if _decided(c)]
    attempts = [a for c in chains for a in c.attempts]
    return TaskOutcome(
        task.name, task.level, task.dtype, len(decided), sum(1 for c in decided if c.passed),
        len(attempts), sum(1 for a in attempts if a.compile_error),
        tuple(r for c in decided if (r := c.rounds_to_pass) is not None),
        sum(a.new_tokens for a in attempts), sum(a.prompt_tokens for a in attempts),
        sum(a.generate_s for a in attempts), sum(a.verify_s for a in attempts),
        sum(1 for c in chains if not _decided(c)), sum(1 for a in attempts if a.status == NO_CODE),
        tuple(round(s, 4) for c in decided if (s := c.speedup) is not None),
        sum(a.redraws for a in attempts))


def _outcomes(settings: EvalSettings, chains: list[Chain]) -> dict[str, list[TaskOutcome]]:
    """Per arm, the outcome of every task that had chains."""
    result: dict[str, list[TaskOutcome]] = {}
    for arm in settings.arms:
        for task in settings.tasks:
            mine = [c for c in chains if c.job.arm == arm.name and c.job.name == task.name]
            if mine:
                result.setdefault(arm.name, []).append(outcome(task, mine))
    return result


def notes_for(chains: list[Chain]) -> list[str]:
    """Plain words about what went wrong across the run, for the user to act on."""
    attempts = [a for c in chains for a in c.attempts]
    notes = []
    silent = sum(1 for a in attempts if a.status == NO_CODE)
    if attempts and silent == len(attempts):
        notes.append(f"the model wrote nothing in all {silent} attempts: check it with "
                     "`kernel-studio ask` or choose another with --model")
    elif silent:
        notes.append(f"the model wrote nothing in {silent} of {len(attempts)} attempts")
    hung = sum(1 for a in attempts if a.status == Status.TIMEOUT)
    if hung:
        notes.append(f"{hung} candidate(s) did not finish within the time limit and were killed "
                     "(verdict: timeout)")
    unverified = {a.message for a in attempts if a.status == Status.UNVERIFIED}
    notes += [f"unverified: {m}" for m in sorted(unverified)[:3]]
    return notes


def broken_at_run(chains: list[Chain]) -> list[dict[str, str]]:
    """Tasks whose spec or reference failed while their candidates were verified (the
    verdict blames the task, not the kernel), once each."""
    found: dict[str, str] = {}
    for chain in chains:
        for attempt in chain.attempts:
            if attempt.status in BAD_INPUT and chain.job.name not in found:
                found[chain.job.name] = f"{attempt.status}: {attempt.message}"
    return [{"task": name, "message": message} for name, message in found.items()]


class Evaluation:
    """One evaluation run: build the chains, run the refine loop, measure."""

    def __init__(self, model: Generator, settings: EvalSettings,
                 stop: threading.Event | None = None, progress: Progress | None = None) -> None:
        """Nothing runs until run()."""
        self.model = model
        self.settings = settings
        self.stop = stop or threading.Event()
        self.progress = progress or (lambda _message: None)
        self.chains: list[Chain] = []

    def run(self) -> EvalResult:
        """Evaluate; the result holds whatever was decided, even after Stop."""
        started = time.perf_counter()
        result = EvalResult(uuid.uuid4().hex[:12], time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                            codec.to_object(self.settings), run_dir=str(self.settings.run_dir),
                            broken=list(self.settings.broken))
        jobs = _jobs(self.settings, self.model, result.broken)
        for item in result.broken:
            self.progress(f"skipped task {item['task']}: {item['message']}")
        self.chains = _chains(self.settings, jobs)
        try:
            self._loop()
        except GenerationFailed as error:  # what was decided before stays measured
            self.stop.set()
            result.notes.append(f"the model failed, so the run ended early: {error.message}")
        finally:
            result.stopped = self.stop.is_set()
            result.outcomes = _outcomes(self.settings, self.chains)
            result.lifts = self._lifts(result.outcomes)
            result.notes = notes_for(self.chains) + result.notes
            result.broken += broken_at_run(self.chains)
            result.seconds = time.perf_counter() - started
        return result

    def _loop(self) -> None:
        """The refine loop over every chain, with its verification pool."""
        settings = self.settings
        options = VerifyOptions(backend=settings.backend, timeout=settings.timeout)
        with BenchTimer(settings.backend) as timer, \
                VerifyPool(options, settings.workers, self.stop) as pool:
            loop_settings = LoopSettings(
                settings.run_dir, settings.rounds, settings.batch, settings.max_new_tokens,
                speed_rounds=settings.speed_rounds, timer=timer)
            RefineLoop(self.model, pool, loop_settings, self.stop, self._announce,
                       on_batch=self._batch_done).run(self.chains)

    def _announce(self, chain: Chain, attempt: Any) -> None:
        """One line per attempt."""
        done = sum(1 for c in self.chains if c.finished)
        self.progress(f"[{done}/{len(self.chains)} chains] {attempt.task} {attempt.arm} "
                      f"chain {attempt.chain} round {attempt.round}: {attempt.status}")

    def _batch_done(self, size: int, seconds: float, prompt: int, answer: int) -> None:
        """One line per batch the model answered."""
        self.progress(f"the model wrote {size} answer(s) in {seconds:.1f} s (prompts up to "
                      f"{prompt} tokens, answers up to {answer})")

    def _lifts(self, outcomes: dict[str, list[TaskOutcome]]) -> list[Lift]:
        """The lift of the second arm over the first, when there are two."""
        arms = [a.name for a in self.settings.arms]
        if len(arms) != 2 or arms[0] not in outcomes or arms[1] not in outcomes:
            return []
        return [lift(arms[0], arms[1], outcomes[arms[0]], outcomes[arms[1]])]


def estimate_seconds(settings: EvalSettings, tokens_per_s: float, prefill_s: float,
                     verify_s: float = 2.0) -> float:
    """An upper bound of the run's time: every chain runs every round to the token limit
    (most end sooner), batches share a step, verification overlaps the next batch."""
    chains = len(settings.tasks) * len(settings.arms) * settings.k
    rounds = settings.rounds + settings.speed_rounds  # a chain that passes may go on for speed
    batches = -(-chains // max(settings.batch, 1)) * rounds
    generate = batches * (prefill_s + settings.max_new_tokens / max(tokens_per_s, 1e-6))
    verify = chains * rounds * verify_s / max(settings.workers, 1)
    return max(generate, verify) + min(generate, verify) * 0.1
