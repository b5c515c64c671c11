"""Prompts per action, counted with the real tokenizer: every template renders, each action asks
for the context it needs, and a prompt that does not fit is cut visibly, never silently."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from app.assist import ModelSession, PromptTooLong
from app.assist.prompting.budget import MUST_KEEP, trim_text
from app.assist.prompting.prompts import (
    ACTIONS,
    PROMPTS_DIR,
    SECTIONS,
    PromptContext,
    build_prompt,
    placeholders,
    template,
)
from app.assist.prompting.skills import load_skills

VECTOR_ADD = Path(__file__).resolve().parents[3] / "resources" / "kernels" / "vector_add"


@pytest.fixture(scope="module")
def counter(default_folder: Path) -> ModelSession:
    """The default model's tokenizer only (the weights are never loaded here)."""
    session = ModelSession(default_folder, device="cpu")
    session.load_tokenizer()
    return session


def full_context() -> PromptContext:
    """A context with every field set, from the vector_add template."""
    source = (VECTOR_ADD / "vector_add.cu").read_text()
    return PromptContext(
        question="Why is the guard needed?", description="c = a + b for float vectors",
        spec=(VECTOR_ADD / "vector_add.toml").read_text(),
        reference=(VECTOR_ADD / "vector_add_ref.py").read_text(), source=source,
        selection=source.splitlines()[0], diagnostics="vector_add.cu(3): error: expected ';'",
        verdict="MISMATCH: case n=1025 seed 0: first bad index 1024", timing="0.21 ms",
        roofline="memory-bound, 71% of peak bandwidth", resources="16 registers, 0 B shared",
        sass="LDG.E x2, FADD, STG.E")


def test_every_template_uses_only_known_placeholders() -> None:
    known = set(SECTIONS)
    assert placeholders(template("system")) == ["skills"]
    for action in ACTIONS:
        used = placeholders(template(action))
        assert used, action
        assert set(used) <= known, (action, set(used) - known)
        assert set(ACTIONS[action].priorities) == set(used), action
    assert {p.stem for p in PROMPTS_DIR.glob("*.md")} == set(ACTIONS) | {"system"}


def test_context_fields_match_the_sections() -> None:
    assert {f.name for f in fields(PromptContext)} == set(SECTIONS)


@pytest.mark.parametrize("action", list(ACTIONS))
def test_each_action_builds_a_prompt_that_fits(counter: ModelSession, action: str) -> None:
    prompt = build_prompt(action, full_context(), counter, max_new_tokens=512)
    assert [m["role"] for m in prompt.messages] == ["system", "user"]
    assert prompt.budget.prompt_tokens == counter.count_messages(prompt.messages)
    assert prompt.budget.prompt_tokens <= prompt.budget.limit
    assert prompt.budget.cuts == ()
    assert "{{" not in prompt.messages[0]["content"] + prompt.messages[1]["content"]


def test_the_fix_compile_prompt_carries_the_diagnostics_and_the_source(
        counter: ModelSession) -> None:
    prompt = build_prompt("fix_compile", full_context(), counter)
    user = prompt.messages[1]["content"]
    assert "## Compiler diagnostics" in user and "expected ';'" in user
    assert "```cuda\n" in user and "vector_add" in user
    assert "nvrtc-compile-errors" in prompt.skills
    assert "### Skill: nvrtc-compile-errors" in prompt.messages[0]["content"]


@pytest.mark.parametrize(("action", "missing"), [
    ("ask", "question"), ("propose", "description or spec"), ("explain", "selection or source"),
    ("fix_compile", "diagnostics"), ("fix_verify", "verdict"), ("optimize", "source")])
def test_an_action_says_what_context_it_lacks(counter: ModelSession, action: str,
                                              missing: str) -> None:
    with pytest.raises(ValueError, match=missing):
        build_prompt(action, PromptContext(), counter)


def test_a_prompt_too_big_is_cut_lowest_priority_first_and_reported(
        counter: ModelSession) -> None:
    small = ModelSession(counter.folder, device="cpu", context_tokens=1200)
    source = "\n".join(f"    y[{i}] = x[{i}] * {i}.0f;" for i in range(400))
    context = PromptContext(source=source, timing="0.2 ms", roofline="memory-bound",
                            sass="LDG STG " * 200)
    prompt = build_prompt("optimize", context, small, max_new_tokens=256)
    budget = prompt.budget
    assert budget.prompt_tokens <= budget.limit == 1200 - 256
    cut_parts = [c.part for c in budget.cuts]
    assert cut_parts[0].startswith("skill ") and "sass: dropped" in " ".join(map(str, budget.cuts))
    assert any(c.part == "source" and 0 < c.tokens_after < c.tokens_before for c in budget.cuts)
    user = prompt.messages[1]["content"]
    assert "lines cut by Kernel Studio to fit the model's context" in user
    assert "y[0] = x[0]" in user and "y[399] = x[399]" in user  # source keeps both ends
    assert "0.2 ms" in user and "memory-bound" in user  # measurements outrank the source
    assert all(w.startswith("cut to fit the model's context: ") for w in budget.warnings())


def test_a_question_that_cannot_fit_is_refused_not_cut(counter: ModelSession) -> None:
    small = ModelSession(counter.folder, device="cpu", context_tokens=300)
    with pytest.raises(PromptTooLong, match="only 44 fit"):
        build_prompt("ask", PromptContext(question="why? " * 400), small, max_new_tokens=256)
    assert ACTIONS["ask"].priorities["question"] == MUST_KEEP


def test_named_skills_are_used_and_unknown_names_refused(counter: ModelSession) -> None:
    prompt = build_prompt("ask", PromptContext(question="hello"), counter,
                          skill_names=["shared-memory-tiling"])
    assert prompt.skills == ("shared-memory-tiling",)
    with pytest.raises(KeyError, match="no-such-skill"):
        build_prompt("ask", PromptContext(question="hello"), counter,
                     skill_names=["no-such-skill"])


def test_skills_are_chosen_by_what_the_context_is_about(counter: ModelSession) -> None:
    matmul = build_prompt("propose", PromptContext(description="multiply two matrices"),
                          counter)
    reduce = build_prompt("propose", PromptContext(description="sum of a float array"),
                          counter)
    assert "shared-memory-tiling" in matmul.skills
    assert "warp-reductions-and-atomics" in reduce.skills
    library, _ = load_skills()
    assert all(name in library for name in matmul.skills + reduce.skills)


def test_trim_keeps_the_start_or_both_ends() -> None:
    text = "\n".join(f"line {i}" for i in range(100))
    head = trim_text(text, 40, lambda t: len(t.split()), "head")
    ends = trim_text(text, 40, lambda t: len(t.split()), "ends")
    assert head.startswith("line 0") and "line 99" not in head
    assert ends.startswith("line 0") and ends.endswith("line 99")
    assert len(head.split()) <= 40 and len(ends.split()) <= 40
