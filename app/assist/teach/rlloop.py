"""The torch side of `teach rl` (app.assist.teach.rl says what the stage does): sampling a group
of answers, having the verifier judge each, and one update of the LoRA on GRPO's clipped
objective with a KL penalty to the starting adapter. Checkpoints, Ctrl+C and resuming are
`teach train`'s (app.assist.teach.loop)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.assist.model.answer import parse_answer
from app.assist.prompting.candidates import answer_prefix, write_candidate
from app.assist.refine.verifypool import VerifyPool, vouch_for
from app.assist.teach import loop, rl, train
from app.assist.teach.rl import Group, RLSettings, Sample, Task
from app.assist.teach.train import Say
from app.base.fsutil import atomic_write_text
from app.engine.bench.runner import BenchOptions, bench
from app.engine.verify.results import Status, Verdict
from app.spec.model import Spec, SpecError, load_spec

LOG_NAME = "steps.jsonl"
# Timing a passing answer against the example's own kernel (a GPU only): short, as a reward
# needs only to tell clearly faster from not.
SPEED_BUDGET_MS = 200.0


@dataclass
class Run:
    """What one `teach rl` run holds between steps."""

    lora: Any
    tokenizer: Any
    optimizer: Any
    reference: dict[str, Any]   # the starting adapter's LoRA weights (the KL's anchor)
    tasks: list[Task]
    specs: dict[str, Spec]      # each task's spec, written once under the run folder
    pool: VerifyPool
    settings: RLSettings
    backend: str
    run_dir: Path
    timed: bool = False         # a GPU backend: passing answers are timed for the speed bonus
    moved: bool = False         # whether the weights left the starting adapter's (a resume: yes)

    @property
    def device(self) -> Any:
        """Where the model's weights are."""
        return self.lora.get_base_model().device

    @property
    def pad(self) -> int:
        """The padding token (the end token when the tokenizer has none)."""
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)


def lora_state(lora: Any) -> dict[str, Any]:
    """A copy of the LoRA's weights."""
    from peft import get_peft_model_state_dict

    return {k: v.detach().clone() for k, v in get_peft_model_state_dict(lora).items()}


def prompt_ids(run: Run, messages: list[dict[str, str]], prefix: str) -> list[int]:
    """The prompt and the answer's opening as one piece of text, tokenized as training does
    (train.encode); a long one loses its start, leaving room for the answer."""
    text = run.tokenizer.apply_chat_template(messages, tokenize=False,
                                             add_generation_prompt=True) + prefix
    ids: list[int] = run.tokenizer(text, add_special_tokens=False)["input_ids"]
    room = run.settings.max_tokens - run.settings.max_new_tokens
    return ids[len(ids) - room:] if len(ids) > room else ids


def _completion(row: list[int], eos: int) -> list[int]:
    """A generated row up to and including its first end token."""
    return row[:row.index(eos) + 1] if eos in row else row


def sample(run: Run, groups: list[Group], seed: int) -> None:
    """Sample every group's answers from the current policy in one batch, seeded: the prompts
    left-padded to one width (the mask keeps the padding out), settings.group rows each."""
    import torch

    torch.manual_seed(seed)
    width = max(len(g.prompt_ids) for g in groups)
    rows = [[run.pad] * (width - len(g.prompt_ids)) + g.prompt_ids for g in groups]
    masks = [[0] * (width - len(g.prompt_ids)) + [1] * len(g.prompt_ids) for g in groups]
    ids = torch.tensor(rows, device=run.device)
    mask = torch.tensor(masks, device=run.device)
    run.lora.eval()
    with torch.no_grad():
        out = run.lora.generate(input_ids=ids, attention_mask=mask,
                                do_sample=True, temperature=run.settings.temperature,
                                top_p=1.0, top_k=0, max_new_tokens=run.settings.max_new_tokens,
                                num_return_sequences=run.settings.group, pad_token_id=run.pad)
    run.lora.train()
    eos = int(run.tokenizer.eos_token_id)
    answers = out[:, width:].tolist()
    for index, group in enumerate(groups):  # generate keeps each prompt's rows together
        for row in answers[index * run.settings.group:(index + 1) * run.settings.group]:
            completion = _completion(row, eos)
            text = run.tokenizer.decode(completion, skip_special_tokens=True)
            group.samples.append(Sample(completion, group.prefix + text))


Pending = list[tuple[Sample, str, Path, Any]]


def _submit(run: Run, group: Group, step: int) -> Pending:
    """Every answer of the group written as a candidate and handed to the pool."""
    spec = run.specs[group.task.entry]
    futures = []
    for index, answer in enumerate(group.samples):
        folder = run.run_dir / f"step-{step}" / group.task.entry / \
            f"round-{group.round}" / f"answer-{index + 1}"
        code = parse_answer(answer.text).code or answer.text
        answer.folder = str(folder)
        spec_path = write_candidate(spec, code, folder, answer.text)
        futures.append((answer, code, spec_path,
                        run.pool.submit(spec_path, vouch_for(spec, run.backend))))
    return futures


def _score(run: Run, group: Group, futures: Pending) -> None:
    """Each answer's verdict, reward and feedback as the pool gives them."""
    for answer, code, spec_path, future in futures:
        verdict: Verdict = future.result()
        answer.status, answer.message = str(verdict.status), verdict.message.split("\n")[0]
        answer.seeds = list(verdict.seeds)
        answer.reward, answer.feedback = rl.score(verdict, code)
        if verdict.runs and verdict.status != Status.PASSED:
            answer.runs_passed = f"{sum(1 for r in verdict.runs if r.passed)}/{len(verdict.runs)}"
        if verdict.status == Status.PASSED and run.timed:
            answer.speedup, bonus = _speed(run, spec_path, run.specs[group.task.entry])
            answer.reward = (answer.reward or 0.0) + bonus


def verify_groups(run: Run, groups: list[Group], step: int) -> None:
    """Verify every answer of the groups (all handed to the pool first, so its workers are
    busy together) and score each."""
    submitted = [(group, _submit(run, group, step)) for group in groups]
    for group, futures in submitted:
        _score(run, group, futures)


def _speed(run: Run, candidate: Path, baseline: Spec) -> tuple[float | None, float]:
    """(speedup over the example's own kernel, the reward's bonus) of a passing answer, timed
    on the GPU; (None, 0) when it could not be timed."""
    try:
        specs = [load_spec(candidate), baseline]
    except SpecError:
        return None, 0.0
    options = BenchOptions(backend=run.backend, verify_first=False, peaks=False,
                           budget_ms=SPEED_BUDGET_MS, trusted=vouch_for(baseline, run.backend))
    report = bench(specs, options)
    comparison = report.points[0].comparison if report.points else None
    if comparison is None or comparison.ratio <= 0:
        return None, 0.0
    return 1.0 / comparison.ratio, rl.speed_reward(comparison.ratio, comparison.high < 1.0)


def token_logprobs(run: Run, group: Group, completion: list[int]) -> Any:
    """Log-probabilities of an answer's tokens under the current weights (at the sampling
    temperature, as they were drawn)."""
    import torch

    ids = torch.tensor([group.prompt_ids + completion], device=run.device)
    start = len(group.prompt_ids)
    with torch.autocast(run.device.type, dtype=torch.bfloat16,
                        enabled=run.device.type == "cuda"):
        logits = run.lora(input_ids=ids).logits[0, start - 1:-1].float()
    logits = logits / max(run.settings.temperature, 1e-3)
    return torch.log_softmax(logits, dim=-1).gather(-1, ids[0, start:, None]).squeeze(-1)


Taught = list[tuple[Group, Sample, float]]


def _reference_logprobs(run: Run, taught: Taught) -> dict[int, Any]:
    """Each taught answer's token log-probabilities under the starting adapter, without
    gradients: its weights swapped in, then the current ones back."""
    import torch
    from peft import set_peft_model_state_dict

    current = lora_state(run.lora)
    set_peft_model_state_dict(run.lora, run.reference)
    try:
        with torch.no_grad():
            return {id(s): token_logprobs(run, g, s.completion) for g, s, _a in taught}
    finally:
        set_peft_model_state_dict(run.lora, current)


def sample_loss(new: Any, old: Any, reference: Any | None, advantage: float,
                settings: RLSettings) -> Any:
    """GRPO's loss of one answer: the clipped surrogate of its tokens' probability ratios to
    the sampling policy times its advantage, less beta times the estimated KL to the starting
    adapter (exp(ref - new) - (ref - new) - 1, never negative), averaged over its tokens."""
    import torch

    ratio = torch.exp(new - old)
    clipped = torch.clamp(ratio, 1.0 - settings.clip, 1.0 + settings.clip)
    surrogate = torch.minimum(ratio * advantage, clipped * advantage)
    if reference is None or settings.beta == 0:
        return -surrogate.mean()
    gap = reference - new
    return -(surrogate - settings.beta * (torch.exp(gap) - gap - 1.0)).mean()


def update(run: Run, groups: list[Group]) -> float:
    """settings.inner optimizer steps on the step's answers; the last pass's mean loss (nan
    when no answer could teach anything: every group's rewards alike)."""
    # Answers of a group whose rewards were all alike teach nothing (advantage 0): they are left
    # out, their KL term with them, which saves most of a step's passes when few groups differ.
    taught = [(g, s, a) for g in groups for s, a in zip(g.samples, g.advantages(), strict=True)
              if a != 0.0 and s.completion]
    if not taught:
        return float("nan")
    kl = run.settings.beta > 0
    # Until the first update the weights are the starting adapter's: its log-probabilities are
    # the sampling ones, which the first pass computes anyway.
    reference = _reference_logprobs(run, taught) if kl and run.moved else {}
    old: dict[int, Any] = {}
    loss = float("nan")
    for _ in range(run.settings.inner):
        total = 0.0
        for group, answer, advantage in taught:
            new = token_logprobs(run, group, answer.completion)
            # The first pass runs on the weights the answers were sampled with.
            sampled = old.setdefault(id(answer), new.detach())
            anchor = reference.get(id(answer), sampled) if kl else None
            value = sample_loss(new, sampled, anchor, advantage, run.settings) / len(taught)
            value.backward()
            total += float(value.detach())
        run.optimizer.step()
        run.optimizer.zero_grad()
        run.moved = True
        loss = total
    return loss


def groups_of(run: Run, tasks: list[Task], step: int, seed: int) -> list[Group]:
    """The step's rounds over its tasks, each round one batch: a first group per task; then,
    for each task whose group failed with feedback while rounds are left, a group asked with
    its best failed answer and that feedback."""
    asking = [Group(task, 1, rl.first_messages(task), answer_prefix(run.specs[task.entry]))
              for task in tasks]
    found: list[Group] = []
    for round_number in range(1, run.settings.rounds + 1):
        for group in asking:
            group.prompt_ids = prompt_ids(run, group.messages, group.prefix)
        began = time.monotonic()
        sample(run, asking, seed + round_number)
        sampled = time.monotonic() - began
        verify_groups(run, asking, step)
        verified = time.monotonic() - began - sampled
        for group in asking:  # the batch's time, shared out so that the step's sums hold
            group.seconds = {"sample": sampled / len(asking), "verify": verified / len(asking)}
        found += asking
        asking = [Group(g.task, round_number + 1, rl.retry_messages(g.task, failed), g.prefix)
                  for g in asking if (failed := g.retry()) is not None]
        if not asking:
            break
    return found


def _log(run: Run, step: int, groups: list[Group], loss: float, update_s: float
         ) -> dict[str, Any]:
    """The step's figures, appended to the run folder's steps.jsonl; what was appended."""
    seconds = {"sample": sum(g.seconds["sample"] for g in groups),
               "verify": sum(g.seconds["verify"] for g in groups), "update": update_s}
    line = {"step": step, **rl.step_summary(groups),
            "loss": None if math.isnan(loss) else round(loss, 5),
            "seconds": {k: round(v, 1) for k, v in seconds.items()},
            "groups": [{"task": g.task.entry, "round": g.round,
                        "answers": [s.as_dict() for s in g.samples]} for g in groups]}
    with (run.run_dir / LOG_NAME).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    return line


def describe(line: dict[str, Any]) -> str:
    """A step's progress words."""
    reward = line["mean_reward"]
    return (f"{line['passed']}/{line['answers']} passed, {line['compile_errors']} did not "
            f"compile, mean reward {'-' if reward is None else f'{reward:.3f}'}"
            + (f", {line['unjudged']} not judged" if line["unjudged"] else ""))


def steps(run: Run, folder: Path, key: str, say: Say, start: int) -> list[dict[str, Any]]:
    """Steps from `start` to settings.steps; each step's figures. Ctrl+C saves a checkpoint
    (teach train's) and is raised again."""
    settings = run.settings
    picks = train.order(len(run.tasks), settings.steps * settings.prompts, settings.seed)
    began, reached, lines = time.monotonic(), start, []
    try:
        for index in range(start, settings.steps):
            taken = picks[index * settings.prompts:(index + 1) * settings.prompts]
            groups = groups_of(run, [run.tasks[t] for t in taken], index + 1,
                               settings.seed * 1_000_003 + index * 101)
            began_update = time.monotonic()
            loss = update(run, groups)
            reached = index + 1  # the weights now include this step
            lines.append(_log(run, reached, groups, loss, time.monotonic() - began_update))
            if reached % settings.checkpoint_every == 0:
                loop.save_checkpoint(folder, run.lora, run.optimizer, reached, key)
            left = (time.monotonic() - began) / (reached - start) * (settings.steps - reached)
            say(f"step {reached}/{settings.steps}: {describe(lines[-1])}; about {left:.0f} s "
                "left")
    except KeyboardInterrupt:
        loop.save_checkpoint(folder, run.lora, run.optimizer, reached, key)
        raise
    return lines


def write_specs(tasks: list[Task], folder: Path) -> dict[str, Spec]:
    """Each task's files once under folder/tasks (answers are written beside copies)."""
    specs = {}
    for task in tasks:
        specs[task.entry] = task.write(folder / "tasks" / task.entry)
    atomic_write_text(folder / "tasks" / "README", "the examples the run's prompts came "
                      "from; each answer's folder under step-N/ holds its own copy\n")
    return specs
