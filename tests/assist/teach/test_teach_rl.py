"""`teach rl` with the real default model and its default adapter on the CPU: a tiny GRPO run
whose every reward comes from the real verifier (an answer's folder verified again gives the
same verdict), a Ctrl+C that keeps teach train's checkpoint and a resume that finishes, an
adapter that differs from the one it started from; the guard refusing held-out and KernelBench
prompts; the clipped objective; teach judge comparing against the starting adapter."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from app.assist.model.adapters import CARD_NAME, WEIGHTS_NAME, adapter_folder, check_adapter
from app.assist.model.session import GenerationOptions
from app.assist.prompting import compact
from app.assist.prompting.candidates import write_candidate
from app.assist.refine.attempts import Attempt
from app.assist.refine.loop import Chain, Job, next_prompt
from app.assist.refine.verifypool import compile_error
from app.assist.tasks.suite import load_suite
from app.assist.teach import loop
from app.assist.teach.data import DATA_NAME, build
from app.assist.teach.generate import candidates
from app.assist.teach.guard import Guard
from app.assist.teach.judge import JudgeError, check_runs, started_from
from app.assist.teach.recipe import reinforce_adapter
from app.assist.teach.rl import (
    COMPILES,
    PARTIAL,
    PASSES,
    Group,
    RLSettings,
    Sample,
    Task,
    first_messages,
    retry_messages,
    score,
)
from app.assist.teach.rlloop import LOG_NAME, Run, prompt_ids, sample, sample_loss
from app.assist.teach.train import CHECKPOINT, STATE_NAME, TrainError, partial_folder
from app.cli.entry import main
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

TWICE_KERNEL = """extern "C" __global__ void twice(const float* __restrict__ x,
                                   float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * x[i];
    }
}
"""
TWICE_SPEC = """[kernel]
source = "twice.cu"
entry = "twice"

[[arg]]
name = "x"
kind = "in"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "y"
kind = "out"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"

[launch]
grid = ["cdiv(n, 128)"]
block = ["128"]

[reference]
python = "twice_ref.py"

[verify]
cases = [{ n = 1 }, { n = 1000 }]
"""
TWICE_REF = """import numpy as np


def reference(x, n):
    return {"y": (2.0 * x.astype(np.float64)).astype(np.float32)}
"""
# What the verifier's status gives as a reward on the CPU (no timing, so no speed bonus).
REWARD = {"passed": PASSES, "compile_error": 0.0}


@pytest.fixture(scope="module")
def guard() -> Guard:
    """The guard of the shipped suite: held-out tasks and KernelBench."""
    return Guard.of(load_suite())


def _model(tmp_path: Path, default_folder: Path) -> Path:
    """A hard-link copy of the default model with its default adapter."""
    model = tmp_path / "model"
    shutil.copytree(default_folder, model, copy_function=os.link)
    check_adapter(model, "default")
    return model


def _stop_at(step: str, lines: list[str]):  # type: ignore[no-untyped-def]
    """A progress callback that records lines and presses Ctrl+C once `step` is reported."""

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith(f"step {step}"):
            raise KeyboardInterrupt

    return say


def _weights(folder: Path) -> dict[str, object]:
    """An adapter's LoRA tensors."""
    from safetensors.torch import load_file

    return load_file(str(folder / WEIGHTS_NAME))


def test_a_tiny_run_is_rewarded_by_the_verifier_survives_ctrl_c_and_changes_the_adapter(
        tmp_path: Path, default_folder: Path, guard: Guard) -> None:
    """One step of one prompt (of two), a group of 2 sampled hot enough to differ (seeded so
    that the shipped adapter's two answers score apart: a new default adapter may need another
    seed), one gradient pass; Ctrl+C right after the step keeps its checkpoint, and the resume
    seals it."""
    model = _model(tmp_path, default_folder)
    summary = build(tmp_path / "data", 2, candidates(11, ["elementwise"]), guard,
                    lambda _line: None)
    assert summary.written == 2
    data, runs = tmp_path / "data" / DATA_NAME, tmp_path / "runs"
    settings = RLSettings(steps=1, seed=2, prompts=1, group=2, rounds=1, temperature=1.3,
                          inner=1, max_new_tokens=96, max_tokens=768)
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        reinforce_adapter(model, data, "rl", "default", guard, settings, _stop_at("1/1", lines),
                          runs)
    assert lines[0].startswith("memory: about") and "MiB" in lines[0]
    state = json.loads((partial_folder(model, "rl") / CHECKPOINT / STATE_NAME).read_text())
    assert state["step"] == 1
    with pytest.raises(TrainError, match="--resume"):
        reinforce_adapter(model, data, "rl", "default", guard, settings, lines.append, runs)
    folder = reinforce_adapter(model, data, "rl", "default", guard, settings, lines.append,
                               runs, resume=True)
    assert not partial_folder(model, "rl").exists()
    card = json.loads((folder / CARD_NAME).read_text())
    assert [s["step"] for s in card["rl_steps"]] == [1]
    assert card["from_adapter"]["name"] == "default" and card["prompt"] == "compact-v1"
    check_adapter(model, "rl")
    assert started_from(model, "rl") == "default"
    rewards = _rewards_are_the_verifiers(runs)
    assert len(set(rewards)) > 1, "the seeded group's answers should score apart"
    start, end = _weights(adapter_folder(model, "default")), _weights(folder)
    assert start.keys() == end.keys()
    assert any(not start[k].equal(end[k]) for k in start), "no LoRA weight moved"


def test_a_steps_prompts_are_sampled_in_one_batch_each_answer_to_its_own_prompt(
        tmp_path: Path, default_folder: Path) -> None:
    """Prompts of different lengths share one generate call, left-padded: sampled near-greedy,
    each group gets exactly what its prompt gets alone (a mask that let the padding in, or rows
    handed to the wrong group, would change them)."""
    model = _model(tmp_path, default_folder)
    tokenizer, lora = loop.load_adapter(model, adapter_folder(model, "default"), 0, 1, "cpu",
                                        "none")
    settings = RLSettings(group=2, temperature=1e-4, max_new_tokens=24)
    run = Run(lora, tokenizer, None, {}, [], {}, None, settings, "cpu", tmp_path)  # type: ignore[arg-type]
    short = Task("twice", "y = 2x", TWICE_SPEC, TWICE_KERNEL, TWICE_REF)
    long = Task("twice", "Multiply every element of the float32 array x by two and write it "
                "to y; n elements, one thread each, the grid rounded up to whole blocks.",
                TWICE_SPEC, TWICE_KERNEL, TWICE_REF)

    def groups() -> list[Group]:
        made = [Group(t, 1, first_messages(t), "") for t in (short, long)]
        for group in made:
            group.prompt_ids = prompt_ids(run, group.messages, group.prefix)
        return made

    together = groups()
    assert len(together[0].prompt_ids) < len(together[1].prompt_ids)
    sample(run, together, seed=5)
    alone = groups()
    for group in alone:
        sample(run, [group], seed=5)
    for batched, single in zip(together, alone, strict=True):
        assert len(batched.samples) == 2
        assert [s.text for s in batched.samples] == [s.text for s in single.samples]
    assert together[0].samples[0].text != together[1].samples[0].text


def _rewards_are_the_verifiers(runs: Path) -> list[float]:
    """Every answer's reward follows from its verdict, and one answer verified again here with
    the real verifier gets the verdict the run recorded; the rewards."""
    answers = [a for line in (runs / LOG_NAME).read_text().splitlines()
               for g in json.loads(line)["groups"] for a in g["answers"]]
    assert answers
    for answer in answers:
        share = 0.0
        if answer["runs_passed"]:
            passed, runs = answer["runs_passed"].split("/")
            share = int(passed) / int(runs)
        expected = REWARD.get(answer["status"], COMPILES + PARTIAL * share)
        assert answer["reward"] == pytest.approx(expected), answer
        assert (Path(answer["folder"]) / "answer.md").is_file()
    again = answers[0]
    spec_path = next(Path(again["folder"]).glob("*.toml"))
    with Engine() as engine:
        # The seeds it was judged on: fresh ones could miss (or find) a seed-dependent fault.
        options = VerifyOptions(backend="cpu", only_seeds=tuple(again["seeds"]))
        verdict = verify_file(spec_path, options, engine)
    assert verdict.status == again["status"]
    return [a["reward"] for a in answers]


def test_a_real_compile_error_is_the_next_rounds_feedback(tmp_path: Path) -> None:
    """The verifier's feedback on a failed answer (here NVRTC's message on the kernel's line)
    goes into the next round's prompt, after the answer itself."""
    task = Task("twice", "y[i] = 2 * x[i] for every i < n, float32 data.", TWICE_SPEC,
                TWICE_KERNEL, TWICE_REF)
    spec = task.write(tmp_path / "task")
    broken = TWICE_KERNEL.replace("2.0f * x[i]", "2.0f * x[i] +")
    answer = f"```cuda\n{broken}```"
    spec_path = write_candidate(spec, broken, tmp_path / "answer", answer)
    verdict = compile_error(spec_path)
    assert verdict is not None
    reward, feedback = score(verdict, broken)
    assert reward == 0.0 and "error" in feedback and "2.0f * x[i] +" in feedback
    failed = Sample([1], answer, status=str(verdict.status), feedback=feedback, reward=reward)
    group = Group(task, 1, first_messages(task), "", samples=[failed])
    assert group.retry() is failed
    messages = retry_messages(task, failed)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == answer and feedback in messages[2]["content"]


def test_prompts_that_show_a_held_out_task_or_a_kernelbench_problem_are_refused(
        tmp_path: Path, default_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _model(tmp_path, default_folder)
    held = next(t for t in load_suite().tasks if t.heldout)
    spec = "[kernel]\nsource = \"k.cu\"\nentry = \"k\"\n"
    lines = [
        {"entry": "k1", "description": held.description, "spec": spec, "kernel": "",
         "reference": "x"},
        {"entry": "k2", "description": "Compute what the PyTorch expression `torch.tanh(inp)` "
         "gives for inp (float32, shape rows x cols).", "spec": spec, "kernel": "",
         "reference": "x"}]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    code = main(["teach", "rl", "--data", str(data), "--out", "x", "--model", str(model),
                 "--device", "cpu", "--runs", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and "every example was refused" in err, err
    assert "held-out task" in err and "KernelBench" in err
    assert not adapter_folder(model, "x").exists()


def test_group_advantages_and_the_clipped_objective() -> None:
    import torch

    task = Task("k", "d", "", "", "")
    group = Group(task, 1, [], "", samples=[Sample([1], "", reward=r) for r in (1.0, 0.0, None)])
    high, low, unjudged = group.advantages()
    assert high > 0 > low and unjudged == 0.0 and high == pytest.approx(-low)
    alike = Group(task, 1, [], "", samples=[Sample([1], "", reward=0.2) for _ in range(3)])
    assert alike.advantages() == [0.0, 0.0, 0.0]
    settings = RLSettings(clip=0.2, beta=0.0)
    old = torch.zeros(3)
    # A token already made much likelier than when it was sampled: clipped, so no gradient.
    new = torch.full((3,), 0.5, requires_grad=True)
    sample_loss(new, old, None, 1.0, settings).backward()
    assert new.grad is not None and float(new.grad.abs().sum()) == 0.0
    # Within the clip: a positive advantage pushes its tokens' log-probabilities up.
    new = torch.zeros(3, requires_grad=True)
    sample_loss(new, old, None, 1.0, settings).backward()
    assert new.grad is not None and bool((new.grad < 0).all())


def test_judge_compares_an_rl_adapter_with_the_adapter_it_started_from() -> None:
    model = {"name": "m", "quantization": "none"}
    before = {"model": {**model, "adapter": "default"}}
    after = {"model": {**model, "adapter": "rl"}}
    check_runs(before, after, "rl", start="default")
    with pytest.raises(JudgeError, match="--adapter default"):
        check_runs({"model": {**model, "adapter": ""}}, after, "rl", start="default")
    with pytest.raises(JudgeError, match="--adapter none"):
        check_runs(before, after, "rl")


class _Chars:
    """Counts tokens as a quarter of the characters (the budget is not what is tested)."""

    def count_tokens(self, text: str) -> int:
        return len(text) // 4 + 1

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        return sum(self.count_tokens(m["content"]) for m in messages)

    def context_window(self) -> int:
        return 8192


def test_the_refine_loop_asks_an_adapter_taught_over_feedback_rounds_as_it_was_taught(
        tmp_path: Path) -> None:
    task = Task("twice", "y[i] = 2 * x[i] for every i < n, float32 data.", TWICE_SPEC,
                TWICE_KERNEL, TWICE_REF)
    spec = task.write(tmp_path / "task")
    folder = tmp_path / "round-1"
    folder.mkdir()
    (folder / "answer.md").write_text("```cuda\nbroken\n```", "utf-8")
    asked = {}
    for style in (compact.STYLE, compact.FEEDBACK_STYLE):
        chain = Chain(Job("twice", spec, task.description, style=style), 0, 0,
                      GenerationOptions())
        chain.attempts.append(Attempt("twice", "", 1, 1, 0, str(folder), status="compile_error",
                                      feedback="line 6: error: expected an expression"))
        asked[style] = next_prompt(chain, _Chars(), 128).messages
    assert asked[compact.STYLE] == first_messages(task)
    assert asked[compact.FEEDBACK_STYLE] == compact.retry_messages(
        task.description, TWICE_SPEC, "```cuda\nbroken\n```", "line 6: error: expected an "
        "expression")
