"""The refine loop with the real verifier (CPU backend) and a scripted model: feedback of each
kind reaches the next prompt, every attempt is kept, Stop, a hanging candidate and an empty
answer each end cleanly; the kernel-end tracker; per-row seeds with the real model."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from app.assist.model.batch import BatchModel, KernelEnd, Request, open_braces
from app.assist.model.session import GenerationOptions
from app.assist.prompting.candidates import answer_prefix
from app.assist.refine.attempts import NO_CODE, load_attempt
from app.assist.refine.loop import MAX_REDRAWS, Chain, Job, LoopSettings, RefineLoop
from app.assist.refine.verifypool import VerifyPool
from app.assist.tasks.suite import TASKS_DIR, load_task
from app.cli.commands.propose import table
from app.engine.verify.runs import VerifyOptions
from tests.assist.scripted import ADDS, SPINS, SUBTRACTS, ScriptedModel, action_of, learner

ADD = TASKS_DIR / "add_f32" / "add_f32.toml"


def _chain(skills: bool = False) -> Chain:
    """One chain on the task add_f32, greedy."""
    task = load_task(ADD)
    return Chain(Job(task.name, task.spec(), task.description, "arm", skills), 0, 0,
                 GenerationOptions())


def _run(model: ScriptedModel, tmp_path: Path, rounds: int = 3, timeout: float = 10.0,
         stop: threading.Event | None = None) -> Chain:
    """Run one chain to its end with a real verification pool on the CPU backend."""
    chain = _chain()
    stop = stop or threading.Event()
    with VerifyPool(VerifyOptions(backend="cpu", timeout=timeout), 1, stop) as pool:
        RefineLoop(model, pool, LoopSettings(tmp_path / "run", rounds), stop).run([chain])
    return chain


def test_compile_errors_then_verdicts_go_back_until_the_kernel_passes(tmp_path: Path) -> None:
    model = ScriptedModel(learner)
    chain = _run(model, tmp_path)
    assert [a.status for a in chain.attempts] == ["compile_error", "mismatch", "passed"]
    assert chain.finished and chain.rounds_to_pass == 3
    second, third = (calls[0] for calls in model.calls[1:])
    assert action_of(second) == "fix_compile" and action_of(third) == "fix_verify"
    fix_compile = second.messages[-1]["content"]
    # The diagnostic names the line of the kernel it is about, quoted, with a caret.
    assert "line 4, column 5: error" in fix_compile
    assert "       4 |     if (i < n) c[i] = a[i] + b[i];\n         |     ^" in fix_compile
    fix_verify = third.messages[-1]["content"]
    assert "Verdict: mismatch" in fix_verify and "First failing run: case {n = 1}" in fix_verify
    assert "expected" in fix_verify and "got" in fix_verify
    assert "c[i] = a[i] - b[i]" in fix_verify, "the failing source goes back with its verdict"


def test_every_attempt_is_kept_with_its_source_prompt_hash_verdict_tokens_and_seconds(
        tmp_path: Path) -> None:
    chain = _run(ScriptedModel(learner), tmp_path)
    for attempt in chain.attempts:
        kept = load_attempt(Path(attempt.folder))
        assert kept is not None and kept.status == attempt.status
        assert kept.source_path is not None and kept.source_path.read_text().startswith(
            'extern "C" __global__ void add_f32(')
        assert (tmp_path / "run" / "prompts" / f"{kept.prompt_sha256[:16]}.json").is_file()
        assert kept.new_tokens > 0 and kept.prompt_tokens > 0 and kept.generate_s > 0
        assert kept.verify_s > 0
    record = json.loads((Path(chain.attempts[0].folder) / "attempt.json").read_text())
    assert record["round"] == 1 and record["action"] == "propose"
    assert "line 4" in record["feedback"]


def test_stop_ends_the_loop_and_keeps_the_attempts_made(tmp_path: Path) -> None:
    stop = threading.Event()
    chain = _run(ScriptedModel(learner, stop_on_call=2), tmp_path, stop=stop)
    assert [a.status for a in chain.attempts] == ["compile_error", "stopped"]
    assert not chain.passed
    assert load_attempt(Path(chain.attempts[0].folder)) is not None


def test_chains_cut_short_by_a_pass_say_so_not_that_the_user_stopped(tmp_path: Path) -> None:
    """Chain 1 writes a kernel that hangs, chain 2 one that passes: the hanging one's verify is
    cancelled when chain 2 passes, and its message names the pass, not a user's Stop."""
    task = load_task(ADD)
    job = Job(task.name, task.spec(), task.description, "arm", False)
    chains = [Chain(job, i, i, GenerationOptions()) for i in range(2)]
    answers = iter([SPINS, ADDS])
    model = ScriptedModel(lambda _request: next(answers))
    stop = threading.Event()
    settings = LoopSettings(tmp_path / "run", 1, batch=1, stop_on_first_pass=True)
    with VerifyPool(VerifyOptions(backend="cpu", timeout=20.0), 2, stop) as pool:
        RefineLoop(model, pool, settings, stop).run(chains)
    hanging, passing = (c.attempts[0] for c in chains)
    assert passing.status == "passed"
    assert hanging.status == "cancelled"
    assert hanging.message == "stopped: another chain passed first"


def test_a_hanging_candidate_is_killed_and_its_verdict_says_so(tmp_path: Path) -> None:
    chain = _run(ScriptedModel(lambda _request: SPINS), tmp_path, rounds=1, timeout=1.0)
    (attempt,) = chain.attempts
    assert attempt.status == "timeout"
    assert "did not finish" in attempt.message or "time" in attempt.message
    assert attempt.feedback.startswith("Verdict: timeout")


def test_an_answer_with_nothing_in_it_is_no_code_and_the_chain_asks_again(
        tmp_path: Path) -> None:
    model = ScriptedModel(lambda _request: "   \n")
    chain = _run(model, tmp_path, rounds=2)
    assert [a.status for a in chain.attempts] == [NO_CODE, NO_CODE]
    assert "wrote nothing" in chain.attempts[0].message
    assert all(action_of(calls[0]) == "propose" for calls in model.calls)


@pytest.mark.parametrize(("text", "ended"), [
    ("  x[0] = 1;\n}\nexplanation", True),
    ("  // } not code\n  x[0] = '}';\n  s = \"}\";\n", False),
    ("  /* } */ if (n) { x[0] = 1; }\n", False),
    ("  /* } */ if (n) { x[0] = 1; }\n}", True),
    ("```\nHere it is:\n```cuda\n__global__ void f(int* x) { if (1) { x[0] = 1; } }", True),
    ("```\nHere it is:\n```cuda\n__global__ void f(int* x) {", False),
    ("```\n\n```cuda\nint y;\n```", True),
])
def test_the_kernel_ends_where_its_braces_balance(text: str, ended: bool) -> None:
    prefix = '```cuda\nextern "C" __global__ void f(int* x, int n)\n{\n'
    assert open_braces(prefix) == 1
    assert KernelEnd(open_braces(prefix)).feed(text) is ended


def test_a_rows_sampling_does_not_depend_on_its_batch(default_folder: Path) -> None:
    """The real model: a row sampled with seed 7 says the same alone and beside another row."""
    model = BatchModel(default_folder, threads=1)
    prefix = answer_prefix(load_task(ADD).spec())
    messages = [{"role": "user", "content": "Add two float vectors in CUDA."}]
    rows = [Request(messages, prefix, GenerationOptions(temperature=0.9, seed=seed), 6)
            for seed in (3, 7)]
    together = model.generate_batch(rows).answers
    alone = model.generate_batch(rows[1:]).answers
    assert together[1].text == alone[0].text
    assert all(a.text.startswith(prefix) and a.new_tokens <= 6 for a in together)


def test_a_source_refused_before_the_compiler_goes_back_as_its_message(tmp_path: Path) -> None:
    """A NUL byte in the answer: the source is refused before any compiler runs, so there are no
    diagnostics; the refusal itself is the next round's feedback, and the chain goes on."""
    def writer(request: Request) -> str:
        return ADDS + "// \x00\n" if action_of(request) == "propose" else ADDS
    model = ScriptedModel(writer)
    chain = _run(model, tmp_path, rounds=2)
    assert [a.status for a in chain.attempts] == ["compile_error", "passed"]
    fix_compile = model.calls[1][0].messages[-1]["content"]
    assert action_of(model.calls[1][0]) == "fix_compile" and "compiler: error:" in fix_compile


def test_a_round_that_repeats_a_tried_kernel_is_asked_again_hotter_not_verified_again(
        tmp_path: Path) -> None:
    """A wrong kernel, then the same kernel twice more in other comments and layout, then the
    right one: the repeats are not verified (no attempt of their own), each is asked again with
    a higher temperature and a seed of its own, and the round that passes says how many there
    were."""
    answers = iter([SUBTRACTS, "    // again\n" + SUBTRACTS.replace("    ", "  "),
                    SUBTRACTS + "// the same\n", ADDS])
    model = ScriptedModel(lambda _request: next(answers))
    chain = _run(model, tmp_path, rounds=3)
    assert [a.status for a in chain.attempts] == ["mismatch", "passed"]
    assert [a.redraws for a in chain.attempts] == [0, 2]
    options = [calls[0].options for calls in model.calls]
    assert [o.temperature for o in options] == pytest.approx([0.0, 0.0, 0.6, 0.8])
    assert len({o.seed for o in options[1:]}) == 3
    assert sorted(p.name for p in (tmp_path / "run" / chain.job.name / "arm" / "chain-1")
                  .iterdir()) == ["round-1", "round-2"]
    assert "(asked again 2x: the answer repeated a kernel" in table(chain.attempts)


def test_a_kernel_repeated_past_the_redraws_is_verified_and_its_round_counts(
        tmp_path: Path) -> None:
    model = ScriptedModel(lambda _request: SUBTRACTS)
    chain = _run(model, tmp_path, rounds=2)
    assert [a.status for a in chain.attempts] == ["mismatch", "mismatch"]
    assert chain.attempts[1].redraws == MAX_REDRAWS and chain.finished
    assert len(model.calls) == 2 + MAX_REDRAWS
