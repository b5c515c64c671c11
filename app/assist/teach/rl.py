"""`kernel-studio teach rl`: after supervised teaching, a policy-gradient stage (GRPO) whose
reward comes from the project's own verifier.

Each step takes a few prompts of a `teach data` set (guarded again as `teach data` guards:
held-out tasks and KernelBench problems are refused), samples a group of answers to each from
the adapter being taught, verifies every answer as a proposal is verified (compile first, then
the sandboxed verify on fresh seeds), and scores it: 0 when it wrote no kernel or it did not
compile, COMPILES (plus PARTIAL times the share of its runs that passed) when it compiled but
failed, 1 when it passed, and on a GPU up to SPEED_BONUS more when it was timed faster than the
example's own kernel. A group's advantages are its
rewards less their mean, over their spread (GRPO); an answer the verifier could not judge (no
sandbox, a broken reference) counts in no group. Multi-turn: with rounds > 1, the best failed
answer of a group and the verifier's feedback on it (the compiler's messages on the kernel's
lines, or the first failing case and element) are put in the prompt of a new group, as the
refine loop does; so the model learns to act on feedback.

This module is the part without torch: settings, prompts, rewards and advantages. The torch
part (sampling, the clipped objective, the KL to the starting adapter) is rlloop.py."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.assist.prompting import compact
from app.assist.refine.attempts import diagnostics_feedback, verdict_feedback
from app.assist.refine.loop import REFINABLE
from app.assist.teach.guard import Guard
from app.assist.teach.train import TrainError
from app.base.fsutil import atomic_write_text
from app.engine.verify.results import Status, Verdict
from app.spec.model import Spec, load_spec, parse_spec_text

# The reward of an answer that compiled but did not pass: above nothing, far below a pass, so a
# group of failures still learns to compile; and up to PARTIAL more for the share of its runs
# that passed before one failed (verify stops at the first), so that among kernels that all
# fail, the one that got further (one case right, the next wrong) scores higher.
COMPILES = 0.2
PARTIAL = 0.3
PASSES = 1.0
# At most this much more for a passing kernel timed faster than the example's own (a GPU only):
# the speedup's excess over 1, capped.
SPEED_BONUS = 0.5
# A group whose rewards are all alike teaches nothing; a spread below this is "all alike".
FLAT = 1e-6


@dataclass(frozen=True)
class RLSettings:
    """What a `teach rl` run does; a resumed run must ask for the same."""

    steps: int = 20
    seed: int = 0
    prompts: int = 2          # prompts per step
    group: int = 4            # answers sampled per prompt
    rounds: int = 2           # turns per prompt: later ones carry the verifier's feedback
    temperature: float = 1.0
    max_new_tokens: int = 256
    max_tokens: int = 1024    # prompt and answer together
    learning_rate: float = 2e-5
    clip: float = 0.2         # PPO's ratio clip, over `inner` passes on the same samples
    inner: int = 2            # gradient passes per batch of samples
    beta: float = 0.04        # the KL penalty to the starting adapter
    checkpoint_every: int = 5
    device: str = "cpu"
    quantization: str = "none"

    def describe(self) -> str:
        """'GRPO over float32 LoRA on the CPU', for progress lines."""
        where = "on the CPU" if self.device == "cpu" else (
            "over NF4 on the GPU" if self.quantization == "nf4" else "bf16 on the GPU")
        return (f"GRPO {where}: {self.prompts} prompt(s) x {self.group} answers, "
                f"{self.rounds} round(s), clip {self.clip}, KL {self.beta}")


@dataclass(frozen=True)
class Task:
    """One prompt source: a verified example of teach data."""

    entry: str
    description: str
    spec: str
    kernel: str
    reference: str

    def write(self, folder: Path) -> Spec:
        """The example's spec, reference and own kernel (the speed baseline) in folder, under
        the names its spec gives them; the loaded spec."""
        folder.mkdir(parents=True, exist_ok=True)
        spec_path = folder / f"{self.entry}.toml"
        named = parse_spec_text(self.spec, folder, spec_path, check_files=False)
        atomic_write_text(named.reference_path, self.reference)
        atomic_write_text(named.source_path, self.kernel)
        atomic_write_text(spec_path, self.spec)
        return load_spec(spec_path)


@dataclass
class Sample:
    """One sampled answer: its tokens, text, verdict and reward."""

    completion: list[int]
    text: str
    status: str = ""
    message: str = ""
    feedback: str = ""
    reward: float | None = None   # None: the verifier could not judge it
    runs_passed: str = ""         # 'k/n' of a failed verdict's runs
    speedup: float | None = None
    folder: str = ""
    seeds: list[int] = field(default_factory=list)  # what it was judged on: replay them

    def as_dict(self) -> dict[str, Any]:
        """What the run's log keeps of it (not the tokens)."""
        data = asdict(self)
        del data["completion"]
        return data


@dataclass
class Group:
    """Answers sampled to one prompt (one task, one round)."""

    task: Task
    round: int
    messages: list[dict[str, str]]
    prefix: str
    prompt_ids: list[int] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # sampling and verifying

    def advantages(self) -> list[float]:
        """GRPO's: each judged reward less the group's mean, over its spread (0 for all when the
        rewards are alike, and for answers nobody could judge)."""
        judged = [s.reward for s in self.samples if s.reward is not None]
        if len(judged) < 2:
            return [0.0] * len(self.samples)
        mean = sum(judged) / len(judged)
        spread = math.sqrt(sum((r - mean) ** 2 for r in judged) / len(judged))
        if spread < FLAT:
            return [0.0] * len(self.samples)
        return [0.0 if s.reward is None else (s.reward - mean) / spread for s in self.samples]

    def retry(self) -> Sample | None:
        """The failed answer the next round is shown with: the best judged one that has
        feedback (a kernel that compiled before one that did not)."""
        failed = [s for s in self.samples if s.feedback and s.reward is not None
                  and s.status != Status.PASSED]
        return max(failed, key=lambda s: s.reward or 0.0) if failed else None


def read_tasks(examples: list[dict[str, Any]], guard: Guard) -> tuple[list[Task], list[str]]:
    """The examples (of a teach data file) that the guard lets through, one per entry, and why
    the others were refused; TrainError when none is left."""
    tasks: dict[str, Task] = {}
    refused = []
    for example in examples:
        task = Task(str(example.get("entry", "")), str(example["description"]),
                    str(example["spec"]), str(example["kernel"]),
                    str(example.get("reference", "")))
        why = guard.refuse(task.entry, task.description, task.kernel, task.spec)
        if why:
            refused.append(f"{task.entry}: {why}")
        elif not task.entry or not task.reference:
            refused.append(f"{task.entry or '?'}: no entry or reference to verify against")
        else:
            tasks.setdefault(task.entry, task)
    if not tasks:
        raise TrainError(f"every example was refused ({'; '.join(refused[:3])})",
                         "give teach data that shows no held-out task and no KernelBench "
                         "problem (kernel-studio teach data builds such a set)")
    return list(tasks.values()), refused


def first_messages(task: Task) -> list[dict[str, str]]:
    """The first round's prompt: the compact one the adapter was taught with."""
    return compact.messages(task.description, task.spec)


def retry_messages(task: Task, failed: Sample) -> list[dict[str, str]]:
    """A later round's prompt: the first, the failed answer and the verifier's feedback."""
    return compact.retry_messages(task.description, task.spec, failed.text, failed.feedback)


def score(verdict: Verdict, source: str) -> tuple[float | None, str]:
    """(reward, feedback for a next round) of one verdict; reward None when it says nothing
    about the kernel."""
    if verdict.status == Status.PASSED:
        return PASSES, ""
    if verdict.status == Status.COMPILE_ERROR:
        return 0.0, (diagnostics_feedback(verdict.diagnostics, source)
                     or f"compiler: error: {verdict.message}")
    if verdict.status in REFINABLE:
        return COMPILES + PARTIAL * partial_share(verdict), verdict_feedback(verdict)
    return None, ""


def partial_share(verdict: Verdict) -> float:
    """The share of a failed verdict's runs that passed (0 when it has none)."""
    return sum(1 for r in verdict.runs if r.passed) / len(verdict.runs) if verdict.runs else 0.0


def speed_reward(ratio: float | None, faster: bool) -> float:
    """The bonus of a passing kernel timed `ratio` times the baseline's time: the speedup's
    excess over 1, capped, when the interval says it is faster."""
    if ratio is None or not faster or ratio <= 0:
        return 0.0
    return min(SPEED_BONUS, 1.0 / ratio - 1.0)


def digest(settings: RLSettings, data_sha256: str, start: str) -> str:
    """What a checkpoint must match to be resumed: settings, data and the starting adapter."""
    text = json.dumps({"settings": asdict(settings), "data": data_sha256, "start": start},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def step_summary(groups: list[Group]) -> dict[str, Any]:
    """A step's figures: answers, passes, compile errors, unjudged, mean reward per round."""
    samples = [s for g in groups for s in g.samples]
    judged = [s.reward for s in samples if s.reward is not None]
    rounds: dict[int, list[float]] = {}
    for group in groups:
        rounds.setdefault(group.round, []).extend(s.reward for s in group.samples
                                                  if s.reward is not None)
    return {"answers": len(samples),
            "passed": sum(1 for s in samples if s.status == Status.PASSED),
            "compile_errors": sum(1 for s in samples if s.status == Status.COMPILE_ERROR),
            "unjudged": len(samples) - len(judged),
            "mean_reward": round(sum(judged) / len(judged), 4) if judged else None,
            "mean_reward_by_round": {str(k): round(sum(v) / len(v), 4) if v else None
                                     for k, v in sorted(rounds.items())}}
