"""The refine loop: K independent chains per job, up to R rounds each. After each attempt the
verifier's answer goes back to the model: a compile error with its diagnostics on the kernel's
own lines, a failed verification with its verdict (case, seed, first bad indices, expected and
actual). A chain ends at its first pass, after R rounds, or when the verdict is not the kernel's
fault (an unverified run, a broken spec or reference).

Scheduling: chains that need an answer wait in a queue; the model answers up to `batch` of them
at once (one generate() call), and their candidates are verified on a pool of warm engines while
the model writes the next batch. Stop ends the answer in progress, cancels the verifications in
flight, and leaves every attempt made so far in the run folder.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from app.assist.model.answer import Answer
from app.assist.model.batch import BatchResult, OnRowToken, Request
from app.assist.model.session import GenerationOptions
from app.assist.prompting import compact
from app.assist.prompting.budget import BudgetReport, TokenCounter
from app.assist.prompting.candidates import answer_prefix, propose_context, write_candidate
from app.assist.prompting.prompts import Prompt, PromptContext, build_prompt
from app.assist.prompting.skills import Skill
from app.assist.refine.attempts import (
    NO_CODE,
    NOT_VERIFIED,
    STOPPED,
    Attempt,
    diagnostics_feedback,
    kernel_key,
    save_prompt,
    verdict_feedback,
)
from app.assist.refine.speed import Timer, Timing, feedback
from app.assist.refine.verifypool import VerifyPool
from app.base.fsutil import atomic_write_text
from app.engine.verify.results import BAD_INPUT, FAILING, Status, Verdict
from app.spec.model import Spec

# A round's seed moves this far from the last, so rounds of a chain never share a stream.
ROUND_SEED_STEP = 7919
# A compact-style chain's later rounds sample a little cooler than independent chains do: the
# first round's greedy answer failed, and a nearby one is the likeliest to pass.
COMPACT_RETRY_TEMPERATURE = 0.6
# A round whose kernel the chain already tried is asked again instead of verified again, up to
# this many times, each hotter than the last: at a low temperature a small model given the same
# prompt writes the same kernel, and a repeat spends a round on a verdict already known.
MAX_REDRAWS = 3
REDRAW_TEMPERATURE_STEP = 0.2
MAX_REDRAW_TEMPERATURE = 1.2
REDRAW_SEED_STEP = 104729
MAX_GATHER_S = 120.0
# Failures whose verdict the model can act on; anything else ends the chain.
REFINABLE = FAILING - {Status.SANITIZER}


class Generator(TokenCounter, Protocol):
    """What the loop needs from a model (app.assist.model.batch.BatchModel provides it)."""

    def generate_batch(self, requests: list[Request], stop: threading.Event | None = None,
                       on_token: OnRowToken | None = None) -> BatchResult:
        """Answer every request."""
        ...

    @property
    def prompt_style(self) -> str:
        """How proposals are asked: "full", or the style its adapter was taught with."""
        ...


@dataclass(frozen=True)
class Job:
    """A spec to write a kernel for, and what its prompts carry."""

    name: str
    spec: Spec
    description: str
    arm: str = ""
    skills: bool = True
    examples: str = ""
    example_names: tuple[str, ...] = ()
    trusted: bool | None = None
    style: str = "full"


@dataclass
class Chain:
    """One chain of attempts at a job."""

    job: Job
    index: int
    seed: int
    options: GenerationOptions
    attempts: list[Attempt] = field(default_factory=list)
    finished: bool = False
    # Speed rounds (app.assist.refine.speed): the fastest passing attempt once timed, and how
    # many rounds asked for a faster kernel.
    best: Attempt | None = None
    speed_tries: int = 0
    # The kernels the chain's attempts wrote (kernel_key), and how many answers of the round in
    # progress repeated one of them
    tried: set[str] = field(default_factory=set)
    redraws: int = 0

    @property
    def passed(self) -> bool:
        """Whether an attempt of this chain passed."""
        return any(a.passed for a in self.attempts)

    @property
    def first_pass(self) -> Attempt | None:
        """The chain's first passing attempt."""
        return next((a for a in self.attempts if a.passed), None)

    @property
    def kept(self) -> Attempt | None:
        """The attempt the chain gives: the fastest that passed when passing ones were timed,
        else the first that passed."""
        return self.best or self.first_pass

    @property
    def speedup(self) -> float | None:
        """How many times faster the kept kernel is than the first that passed (timed ones)."""
        first = self.first_pass
        if self.best is None or first is None or not first.time_ms or not self.best.time_ms:
            return None
        return first.time_ms / self.best.time_ms

    @property
    def rounds_to_pass(self) -> int | None:
        """The round of the first pass, or None."""
        return next((a.round for a in self.attempts if a.passed), None)

    def folder(self, run_dir: Path, round_number: int) -> Path:
        """Where an attempt of this chain is kept."""
        arm = self.job.arm or "run"
        return run_dir / self.job.name / arm / f"chain-{self.index + 1}" / f"round-{round_number}"


@dataclass
class LoopSettings:
    """How the loop runs."""

    run_dir: Path
    rounds: int = 3
    batch: int = 1
    max_new_tokens: int = 512
    # How long the model waits for more chains to fill a batch while candidates are verified;
    # None: as long as the last batch took to generate (a batch costs about the same whatever
    # its size, so waiting that long for a fuller one keeps both the model and the verifiers
    # busy).
    gather_s: float | None = None
    stop_on_first_pass: bool = False
    verify: bool = True
    # Keep the fastest that passes: after a chain's first pass, up to this many more rounds
    # ask for a faster kernel; `timer` times each kernel that passes (on a GPU).
    speed_rounds: int = 0
    timer: Timer | None = None


OnAttempt = Callable[[Chain, Attempt], None]
# (answers in the batch, seconds, longest prompt in tokens, longest answer in tokens)
OnBatch = Callable[[int, float, int, int], None]


def _action(chain: Chain) -> str:
    """What the next prompt asks for, from the last attempt (a faster kernel once one passed)."""
    if chain.best is not None:
        return "optimize"
    last = chain.attempts[-1] if chain.attempts else None
    if last is None or last.status in (NO_CODE, STOPPED, NOT_VERIFIED):
        return "propose"
    return "fix_compile" if last.compile_error else "fix_verify"


def _source(attempt: Attempt) -> str:
    """The kernel an attempt wrote ('' when none)."""
    path = attempt.source_path
    try:
        return path.read_text(encoding="utf-8") if path else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _context(chain: Chain, action: str) -> PromptContext:
    """The context of the chain's next prompt."""
    job = chain.job
    base = propose_context(job.spec, job.description)
    if action == "propose":
        return replace(base, examples=job.examples)
    if action == "optimize":
        return replace(base, source=_source(_shown(chain)), timing=_speed_feedback(chain),
                       reference="")
    last = chain.attempts[-1]
    key = "diagnostics" if action == "fix_compile" else "verdict"
    return replace(base, source=_source(last), reference=base.reference if key == "verdict"
                   else "", **{key: last.feedback})


def _shown(chain: Chain) -> Attempt:
    """The kernel a speed round improves on: the fastest that passed."""
    assert chain.best is not None
    return chain.best


def _speed_feedback(chain: Chain) -> str:
    """A speed round's feedback on the fastest kernel so far."""
    best, first = _shown(chain), chain.first_pass
    assert best.time_ms is not None and first is not None
    latest = chain.attempts[-1]
    timing = Timing(latest.time_ms, latest.timing) if latest is best else None
    said = feedback(timing, best.time_ms, best.round, first.time_ms or best.time_ms)
    if latest is not best:  # the last faster kernel tried did not do better
        why = "was slower" if latest.passed else f"did not pass ({latest.status})"
        said += f" The last kernel tried (round {latest.round}) {why}; the kernel below is kept."
    return said


def next_prompt(chain: Chain, counter: TokenCounter, max_new_tokens: int) -> Prompt:
    """The prompt of the chain's next round (skills chosen by relevance, or none)."""
    action = _action(chain)
    if compact.is_compact(chain.job.style):
        return _compact_prompt(chain, counter)
    skills: list[Skill] | None = None if chain.job.skills else []
    return build_prompt(action, _context(chain, action), counter, max_new_tokens, skills=skills)


def _compact_prompt(chain: Chain, counter: TokenCounter) -> Prompt:
    """The compact prompt an adapter was taught with. An adapter taught by `teach rl` over
    feedback rounds (compact.FEEDBACK_STYLE) sees, in a later round, its failed answer and the
    verifier's feedback, as it was taught; any other was taught to write, not to read
    diagnostics, so its every round is the same prompt and a later one a fresh sample (see
    _options)."""
    job = chain.job
    spec_text = job.spec.text or (job.spec.path.read_text(encoding="utf-8") if job.spec.path
                                  else "")
    last = chain.attempts[-1] if chain.attempts else None
    answer = _answer_text(last) if last is not None and last.feedback else ""
    if job.style == compact.FEEDBACK_STYLE and answer:
        assert last is not None
        messages = compact.retry_messages(job.description, spec_text, answer, last.feedback)
    else:
        messages = compact.messages(job.description, spec_text)
    tokens = counter.count_messages(messages)
    window = counter.context_window()
    return Prompt("propose", messages, BudgetReport(window, window - tokens, tokens), ())


def _answer_text(attempt: Attempt) -> str:
    """The whole answer an attempt kept ('' when none)."""
    try:
        return (Path(attempt.folder) / "answer.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _options(chain: Chain, round_number: int) -> GenerationOptions:
    """The chain's sampling, with a seed of its own for this round. A compact-style chain
    samples after its first round: its prompt does not change, so greedy would repeat itself.
    An answer asked again because it repeated a kernel samples hotter (_redraw_options). Other
    settings (top_p, the repetition penalty a batch shares) stay the chain's."""
    if chain.redraws:
        return _redraw_options(chain, round_number)
    if chain.options.temperature <= 0 and compact.is_compact(chain.job.style) \
            and round_number > 1:
        return replace(chain.options, temperature=COMPACT_RETRY_TEMPERATURE,
                       seed=chain.seed + ROUND_SEED_STEP * (round_number - 1))
    if chain.options.temperature <= 0:
        return chain.options
    return replace(chain.options, seed=chain.seed + ROUND_SEED_STEP * (round_number - 1))


def _redraw_options(chain: Chain, round_number: int) -> GenerationOptions:
    """The sampling of a round's answer asked again after `chain.redraws` repeats: at least the
    compact retry's temperature, a step hotter for each repeat, with a seed of its own."""
    start = max(chain.options.temperature, COMPACT_RETRY_TEMPERATURE)
    temperature = min(start + REDRAW_TEMPERATURE_STEP * (chain.redraws - 1),
                      MAX_REDRAW_TEMPERATURE)
    seed = chain.seed + ROUND_SEED_STEP * (round_number - 1) + REDRAW_SEED_STEP * chain.redraws
    return replace(chain.options, temperature=temperature, seed=seed)


def _wrote_nothing(answer: Answer, prefix: str) -> bool:
    """Whether the model added nothing but spaces after the answer's prefix."""
    return not answer.text[len(prefix):].strip()


class RefineLoop:
    """Runs chains to the end: generate in batches, verify in the pool, feed verdicts back."""

    def __init__(self, model: Generator, pool: VerifyPool | None, settings: LoopSettings,
                 stop: threading.Event | None = None, on_attempt: OnAttempt | None = None,
                 on_token: OnRowToken | None = None, on_batch: OnBatch | None = None) -> None:
        """Nothing runs until run()."""
        self.on_batch = on_batch
        self.model = model
        self.pool = pool
        self.settings = settings
        self.stop = stop or threading.Event()
        self.on_attempt = on_attempt
        self.on_token = on_token
        self._results: queue.Queue[tuple[Chain, Attempt, Future[Verdict]]] = queue.Queue()
        self._futures: list[Future[Verdict]] = []
        self._in_flight = 0
        self.generate_s = 0.0
        self._last_batch_s = 0.0
        self._passed_first = False  # Stop was set because a chain passed (not by the user)

    def run(self, chains: list[Chain]) -> None:
        """Every chain to its end (or until Stop); attempts land in the run folder."""
        ready: deque[Chain] = deque(c for c in chains if not c.finished)
        waited_since: float | None = None
        while not self.stop.is_set() and (ready or self._in_flight):
            self._drain(ready, block=not ready)
            if not ready:
                continue
            full = len(ready) >= self.settings.batch or not self._in_flight
            waited_since = waited_since or time.perf_counter()
            if full or time.perf_counter() - waited_since >= self._gather_s():
                batch = [ready.popleft() for _ in range(min(self.settings.batch, len(ready)))]
                waited_since = None
                self._generate(batch, ready)
            else:
                self._drain(ready, block=True, timeout=0.1)
        self._finish_in_flight()

    def _gather_s(self) -> float:
        """How long to wait for a fuller batch."""
        if self.settings.gather_s is not None:
            return self.settings.gather_s
        return min(self._last_batch_s, MAX_GATHER_S)

    def _drain(self, ready: deque[Chain], block: bool, timeout: float = 0.2) -> None:
        """Take every verdict that came back (waiting up to `timeout` for one when asked)."""
        while self._in_flight:
            try:
                item = self._results.get(block=block, timeout=timeout)
            except queue.Empty:
                return
            self._in_flight -= 1
            self._settle(*item, ready)
            block = False

    def _finish_in_flight(self) -> None:
        """After Stop: collect the cancelled verifications so their attempts are kept."""
        while self._in_flight:
            chain, attempt, future = self._results.get()
            self._in_flight -= 1
            self._settle(chain, attempt, future, deque())

    def _generate(self, batch: list[Chain], ready: deque[Chain]) -> None:
        """One generate() call for a batch of chains, then their candidates to the pool."""
        prompts = [next_prompt(c, self.model, self.settings.max_new_tokens) for c in batch]
        requests = []
        for chain, prompt in zip(batch, prompts, strict=True):
            round_number = len(chain.attempts) + 1
            requests.append(Request(prompt.messages, answer_prefix(chain.job.spec),
                                    _options(chain, round_number), self.settings.max_new_tokens))
        result = self.model.generate_batch(requests, self.stop, self.on_token)
        self.generate_s += result.seconds
        self._last_batch_s = result.seconds
        if self.on_batch:
            self.on_batch(len(batch), result.seconds,
                          max((a.prompt_tokens for a in result.answers), default=0),
                          max((a.new_tokens for a in result.answers), default=0))
        for chain, prompt, request, answer in zip(batch, prompts, requests, result.answers,
                                                  strict=True):
            if not self._redrawn(chain, request, answer, ready):
                self._attempt(chain, prompt, request, answer, len(batch), ready)

    def _redrawn(self, chain: Chain, request: Request, answer: Answer,
                 ready: deque[Chain]) -> bool:
        """Whether the answer repeats a kernel the chain tried and the chain was queued to be
        asked again (at most MAX_REDRAWS times a round; then the repeat is verified as any
        kernel is, and its verdict counts)."""
        if answer.stopped or _wrote_nothing(answer, request.prefix) or \
                chain.redraws >= MAX_REDRAWS or self.stop.is_set():
            return False
        if kernel_key(answer.parsed.code or answer.text) not in chain.tried:
            return False
        chain.redraws += 1
        ready.append(chain)
        return True

    def _new_attempt(self, chain: Chain, prompt: Prompt, request: Request,
                     answer: Answer, size: int) -> Attempt:
        """The record of a fresh attempt (no verdict yet)."""
        round_number = len(chain.attempts) + 1
        folder = chain.folder(self.settings.run_dir, round_number)
        attempt = Attempt(chain.job.name, chain.job.arm, chain.index + 1, round_number,
                          request.options.seed or 0, str(folder),
                          prompt_sha256=save_prompt(self.settings.run_dir, prompt.messages),
                          action=prompt.action, skills=list(prompt.skills),
                          examples=list(chain.job.example_names) if prompt.action == "propose"
                          else [], cuts=[str(c) for c in prompt.budget.cuts])
        attempt.record_answer(answer, size)
        attempt.generate_s = answer.seconds / max(size, 1)  # the batch's time, shared out
        attempt.redraws, chain.redraws = chain.redraws, 0
        if not answer.stopped:
            chain.tried.add(kernel_key(answer.parsed.code or answer.text))
        chain.attempts.append(attempt)
        return attempt

    def _attempt(self, chain: Chain, prompt: Prompt, request: Request, answer: Answer,
                 size: int, ready: deque[Chain]) -> None:
        """Keep the answer; verify its kernel, or settle at once when there is none."""
        attempt = self._new_attempt(chain, prompt, request, answer, size)
        folder = Path(attempt.folder)
        if answer.stopped:
            return self._conclude(chain, attempt, STOPPED, self._why_stopped(), ready)
        if _wrote_nothing(answer, request.prefix):
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(folder / "answer.md", answer.text)
            return self._conclude(chain, attempt, NO_CODE, "the model wrote nothing after the "
                                  "kernel's signature", ready)
        spec_path = write_candidate(chain.job.spec, answer.parsed.code or answer.text, folder,
                                    answer.text)
        if not self.settings.verify or self.pool is None:
            return self._conclude(chain, attempt, NOT_VERIFIED, "written; verification was not "
                                  "asked for", ready)
        future = self.pool.submit(spec_path, chain.job.trusted)
        self._futures = [f for f in self._futures if not f.done()] + [future]
        self._in_flight += 1
        future.add_done_callback(lambda f: self._results.put((chain, attempt, f)))
        return None

    def _why_stopped(self) -> str:
        """Why a chain was cut short: the user's Stop, or another chain's pass."""
        return "stopped: another chain passed first" if self._passed_first else \
            "stopped by the user"

    def _settle(self, chain: Chain, attempt: Attempt, future: Future[Verdict],
                ready: deque[Chain]) -> None:
        """Record a verdict and decide whether the chain goes on."""
        if future.cancelled():
            verdict = Verdict(Status.CANCELLED, "stopped before it was verified")
        else:
            try:
                verdict = future.result()
            except Exception as error:  # noqa: BLE001 - a verifier bug must not end the run
                verdict = Verdict(Status.UNVERIFIED, f"verification failed: {error}")
        attempt.verify_s = verdict.seconds
        if verdict.status == Status.CANCELLED and self._passed_first:
            verdict = replace(verdict, message=self._why_stopped())
        if verdict.status == Status.COMPILE_ERROR:
            # A source refused before any compiler saw it (too large, a NUL byte) has no
            # diagnostics: its message is the feedback.
            attempt.feedback = (diagnostics_feedback(verdict.diagnostics, _source(attempt))
                                or f"compiler: error: {verdict.message}")
        elif verdict.status in REFINABLE:
            attempt.feedback = verdict_feedback(verdict)
        self._conclude(chain, attempt, verdict.status, verdict.message, ready)

    def _conclude(self, chain: Chain, attempt: Attempt, status: str, message: str,
                  ready: deque[Chain]) -> None:
        """Save the attempt, tell the caller, and queue the chain again when it goes on."""
        attempt.status, attempt.message = str(status), message
        speeding = chain.best is not None  # this attempt was a speed round
        if status == Status.PASSED:
            self._time(chain, attempt)
        attempt.save()
        if speeding:
            chain.speed_tries += 1
        if chain.passed:
            chain.finished = not self._goes_faster(chain)
        elif (status in REFINABLE or status == NO_CODE) and not self.stop.is_set() and \
                len(chain.attempts) < self.settings.rounds:
            chain.finished = False
        else:
            chain.finished = True
        if not chain.finished:
            ready.append(chain)
        if chain.finished and chain.passed and self.settings.stop_on_first_pass:
            self._passed_first = True
            self.stop.set()
        if self.on_attempt:
            self.on_attempt(chain, attempt)

    def _time(self, chain: Chain, attempt: Attempt) -> None:
        """Time a kernel that passed when speed rounds are on; the fastest is the chain's."""
        if self.settings.timer is None or self.settings.speed_rounds <= 0:
            return
        assert chain.job.spec.path is not None  # write_candidate copied it under its name
        timing = self.settings.timer(Path(attempt.folder) / chain.job.spec.path.name,
                                     chain.job.trusted)
        attempt.time_ms, attempt.timing = timing.ms, timing.text
        if timing.ms is not None and (chain.best is None or chain.best.time_ms is None
                                      or timing.ms < chain.best.time_ms):
            chain.best = attempt

    def _goes_faster(self, chain: Chain) -> bool:
        """Whether a chain that passed asks for a faster kernel once more."""
        return (chain.best is not None and chain.speed_tries < self.settings.speed_rounds
                and not self.stop.is_set())


def undecided(status: str) -> bool:
    """Statuses that say nothing about the kernel (nothing could be decided, or the spec or
    reference is at fault)."""
    return status in (Status.UNVERIFIED, Status.CANCELLED, STOPPED) or status in BAD_INPUT
